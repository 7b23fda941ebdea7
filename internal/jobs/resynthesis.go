package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
)

// queueResynthesis holds the resyntheses of projects' audios: one at a
// time per node, since each re-queues audios in batches.
const queueResynthesis = "resynthesis"

// ResynthesisArgs is narrator.ResynthesisJob as River stores it. Jobs
// queued before All existed have no "all" and keep the phrase form.
// Uniqueness is by project alone, whatever the form.
type ResynthesisArgs struct {
	ProjectID int64  `json:"project_id" river:"unique"`
	Phrase    string `json:"phrase"`
	All       bool   `json:"all,omitempty"`
}

// job is the narrator.ResynthesisJob that args stand for.
func (args ResynthesisArgs) job() narrator.ResynthesisJob {
	return narrator.ResynthesisJob{ProjectID: args.ProjectID, Phrase: args.Phrase, All: args.All}
}

// Kind implements river.JobArgs.
func (ResynthesisArgs) Kind() string { return narrator.ResynthesisJob{}.JobKind() }

// resynthesisStates are the states in which a project's resynthesis holds
// off another: queued, waiting for room, or running.
var resynthesisStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// InsertOpts implements river.JobArgsWithInsertOpts: one job per project
// until it ends.
func (ResynthesisArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueResynthesis, MaxAttempts: 5,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: resynthesisStates}}
}

// QueueResynthesis enqueues the resynthesis of a project's audios that
// contain job's phrase, or of all of them, outside any transaction. It
// returns ECONFLICT (narrator.ResynthesisBusy) while the project has one
// of either form queued or running.
func (q *Queue[TTx]) QueueResynthesis(ctx context.Context, job narrator.ResynthesisJob) error {
	res, err := q.client.Insert(ctx, ResynthesisArgs{ProjectID: job.ProjectID, Phrase: job.Phrase, All: job.All}, nil)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", job.JobKind(), err)
	}
	if res.UniqueSkippedAsDuplicate {
		return narrator.ResynthesisBusy(job.ProjectID)
	}
	return nil
}

// ResynthesisStore is what the resynthesis worker needs from storage.
type ResynthesisStore interface {
	// ResynthesisCandidates reads, without a write lock, the audios of
	// job's project that it is to re-queue.
	ResynthesisCandidates(ctx context.Context, job narrator.ResynthesisJob) ([]int64, error)
	// ResynthesizeAudios re-queues, in one write, those of ids that still
	// need it (narrator.ResynthesisJob.Needs), within the account's
	// limits; it stops at the first refusal and returns how many it
	// re-queued and the refusal.
	ResynthesizeAudios(ctx context.Context, job narrator.ResynthesisJob, ids []int64) (int, error)
}

// ResynthesisWorker works narrator.ResynthesisJob.
type ResynthesisWorker struct {
	river.WorkerDefaults[ResynthesisArgs]
	store  ResynthesisStore
	logger *slog.Logger
	now    func() time.Time
}

// NewResynthesisWorker returns the worker; logger may be nil.
func NewResynthesisWorker(store ResynthesisStore, logger *slog.Logger) *ResynthesisWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &ResynthesisWorker{store: store, logger: logger, now: time.Now}
}

// Timeout implements river.Worker: a scan and a few writes per batch.
func (w *ResynthesisWorker) Timeout(*river.Job[ResynthesisArgs]) time.Duration {
	return 10 * time.Minute
}

// Work implements river.Worker. It scans the project on the read side,
// then re-queues the audios the job asks for in batches of
// narrator.ResynthesisBatch, one write each. When the account's queue or
// storage is full it snoozes for narrator.ResynthesisRetry and, on its
// next run, scans again: the audios it already re-queued wait for
// synthesis and are no longer candidates. Past narrator.ResynthesisPatience
// it gives up on the rest and says so in the log.
func (w *ResynthesisWorker) Work(ctx context.Context, job *river.Job[ResynthesisArgs]) error {
	re := job.Args.job()
	ids, err := w.store.ResynthesisCandidates(ctx, re)
	if err != nil {
		return fmt.Errorf("resynthesis of project %d: %w", re.ProjectID, err)
	}
	log := w.logger.With("project_id", re.ProjectID, "phrase", re.Phrase, "all", re.All)
	done := 0
	for len(ids) > 0 {
		batch := ids[:min(len(ids), narrator.ResynthesisBatch)]
		ids = ids[len(batch):]
		n, err := w.store.ResynthesizeAudios(ctx, re, batch)
		done += n
		switch c := narrator.ErrorCode(err); {
		case c == narrator.EQUEUEFULL || c == narrator.EQUOTA:
			left := len(batch) - n + len(ids)
			if w.now().Sub(job.CreatedAt) >= narrator.ResynthesisPatience {
				log.Warn("resynthesis gave up: the account stayed full", "requeued", done, "left", left, "reason", narrator.ErrorMessage(err))
				return nil
			}
			log.Info("resynthesis waits for room", "requeued", done, "left", left)
			return river.JobSnooze(narrator.ResynthesisRetry)
		case err != nil:
			return fmt.Errorf("resynthesis of project %d: %w", re.ProjectID, err)
		}
	}
	log.Info("resynthesis queued", "requeued", done)
	return nil
}
