// Package jobs runs Narrator's background work on River: synthesising
// audios and deleting media that is no longer referenced. It is the only
// package that imports River.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// Queue names. Synthesis has its own queue so that a burst of deletions never
// waits behind long articles, and the other way round.
const (
	queueSynthesize = "synthesize"
	queueMedia      = "media"
)

// SynthesizeArgs asks for one revision of an audio to be turned into speech.
type SynthesizeArgs struct {
	AudioID  int64 `json:"audio_id"`
	Revision int   `json:"revision"`
}

// Kind implements river.JobArgs.
func (SynthesizeArgs) Kind() string { return "synthesize_audio" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (SynthesizeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueSynthesize}
}

// DeleteMediaArgs asks for media objects, and everything stored beside them
// under the same token, to be deleted.
type DeleteMediaArgs struct {
	Keys []string `json:"keys"`
}

// Kind implements river.JobArgs.
func (DeleteMediaArgs) Kind() string { return "delete_media" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (DeleteMediaArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueMedia}
}

// Config sets up the queue.
type Config struct {
	Logger *slog.Logger
	// SynthesisWorkers is how many audios are synthesised at once. Each one
	// already spreads its sentences over every core, so a small number keeps
	// the machine busy without making every audio wait longer.
	SynthesisWorkers int
	// MaxAttempts is how often a synthesis is tried before the audio fails.
	MaxAttempts int
	// RetryDelays are the waits before the second, third, ... attempt; the
	// last one repeats.
	RetryDelays []time.Duration
	// JobTimeout bounds one synthesis attempt. The largest article takes a
	// few minutes on two cores; a hung attempt must not hold a worker forever.
	JobTimeout time.Duration
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.SynthesisWorkers == 0 {
		c.SynthesisWorkers = 2
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 5
	}
	if len(c.RetryDelays) == 0 {
		c.RetryDelays = []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}
	}
	if c.JobTimeout == 0 {
		c.JobTimeout = 20 * time.Minute
	}
}

// Queue is a River client on a SQLite database.
type Queue struct {
	client *river.Client[*sql.Tx]
	driver *riversqlite.Driver
	logger *slog.Logger
}

// Migrate brings River's own tables up to date.
func Migrate(ctx context.Context, db *sql.DB) error {
	m, err := rivermigrate.New(riversqlite.New(db), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}

// New returns a queue on db, which must be the SQLite store's single-writer
// pool. synth does the synthesis work; media deletes published files.
func New(db *sql.DB, synth *SynthesizeWorker, media *DeleteMediaWorker, cfg Config) (*Queue, error) {
	cfg.setDefaults()
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, synth); err != nil {
		return nil, fmt.Errorf("add synthesize worker: %w", err)
	}
	if err := river.AddWorkerSafely(workers, media); err != nil {
		return nil, fmt.Errorf("add media worker: %w", err)
	}
	driver := riversqlite.New(db)
	client, err := river.NewClient(driver, &river.Config{
		Logger:  riverLogger(cfg.Logger),
		Workers: workers,
		Queues: map[string]river.QueueConfig{
			queueSynthesize: {MaxWorkers: cfg.SynthesisWorkers},
			queueMedia:      {MaxWorkers: 2},
		},
		// SQLite has no LISTEN/NOTIFY: producers poll. A short interval
		// keeps the time from create to first word small; the query is cheap.
		FetchPollInterval: 200 * time.Millisecond,
		FetchCooldown:     50 * time.Millisecond,
		MaxAttempts:       cfg.MaxAttempts,
		RetryPolicy:       retryPolicy(cfg.RetryDelays),
		JobTimeout:        cfg.JobTimeout,
		// A job still running this long after its start was lost with its
		// node; another node takes it over. Single-node restarts do not wait
		// for this: RecoverInterrupted takes them over at start.
		RescueStuckJobsAfter: cfg.JobTimeout + 5*time.Minute,
		// On shutdown, running jobs get this long to finish before their
		// contexts are cancelled and they are put back in the queue.
		SoftStopTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("new river client: %w", err)
	}
	return &Queue{client: client, driver: driver, logger: cfg.Logger}, nil
}

// NewInsertOnly returns a queue that only enqueues jobs and never works
// them: for command-line tools that change data while a server does the
// work.
func NewInsertOnly(db *sql.DB, logger *slog.Logger) (*Queue, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	driver := riversqlite.New(db)
	client, err := river.NewClient(driver, &river.Config{Logger: riverLogger(logger)})
	if err != nil {
		return nil, fmt.Errorf("new river client: %w", err)
	}
	return &Queue{client: client, driver: driver, logger: logger}, nil
}

// riverLogger keeps River's own chatter at warnings and above.
func riverLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelHandler{Handler: l.Handler(), min: slog.LevelWarn}).With("component", "river")
}

// levelHandler drops records below min.
type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelHandler{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{Handler: h.Handler.WithGroup(name), min: h.min}
}

// retryPolicy waits the given delays between attempts.
type retryPolicy []time.Duration

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	i := min(max(job.Attempt-1, 0), len(p)-1)
	return time.Now().Add(p[i])
}

// RecoverInterrupted makes jobs that were running when the process last
// died available again at once. It is only safe while no other process
// works this database, which the embedded server guarantees with a lock on
// its data directory.
func (q *Queue) RecoverInterrupted(ctx context.Context) (int, error) {
	exec := q.driver.GetExecutor()
	stuck, err := exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{Max: 10_000, StuckHorizon: time.Now().Add(time.Hour)})
	if err != nil {
		return 0, fmt.Errorf("list interrupted jobs: %w", err)
	}
	if len(stuck) == 0 {
		return 0, nil
	}
	now := time.Now()
	params := &riverdriver.JobRescueManyParams{StuckHorizon: now.Add(time.Hour)}
	for _, j := range stuck {
		msg, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: j.Attempt, Error: "interrupted: the server stopped while this job ran"})
		if err != nil {
			return 0, fmt.Errorf("encode attempt error: %w", err)
		}
		params.ID = append(params.ID, j.ID)
		params.Error = append(params.Error, msg)
		params.FinalizedAt = append(params.FinalizedAt, nil)
		params.ScheduledAt = append(params.ScheduledAt, now)
		params.State = append(params.State, string(rivertype.JobStateAvailable))
	}
	if _, err := exec.JobRescueMany(ctx, params); err != nil {
		return 0, fmt.Errorf("recover interrupted jobs: %w", err)
	}
	return len(stuck), nil
}

// Start begins working jobs. Cancelling ctx does not stop them; call Stop.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start river: %w", err)
	}
	return nil
}

// Stop stops claiming jobs, gives running ones the soft-stop grace period,
// then cancels them; cancelled jobs are put back to run on the next start.
func (q *Queue) Stop(ctx context.Context) error {
	if err := q.client.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stop river: %w", err)
	}
	return nil
}

// SynthesizeTx enqueues the synthesis of an audio revision inside tx.
func (q *Queue) SynthesizeTx(ctx context.Context, tx *sql.Tx, audioID int64, revision int) error {
	if _, err := q.client.InsertTx(ctx, tx, SynthesizeArgs{AudioID: audioID, Revision: revision}, nil); err != nil {
		return fmt.Errorf("enqueue synthesis of audio %d: %w", audioID, err)
	}
	return nil
}

// DeleteMediaTx enqueues the deletion of media objects inside tx.
func (q *Queue) DeleteMediaTx(ctx context.Context, tx *sql.Tx, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := q.client.InsertTx(ctx, tx, DeleteMediaArgs{Keys: keys}, nil); err != nil {
		return fmt.Errorf("enqueue media deletion: %w", err)
	}
	return nil
}
