package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
)

// Recorder is told how each job attempt went. Outcomes are "completed",
// "retry" (failed, to be tried again), "discarded" (failed for good),
// "cancelled" and "snoozed".
type Recorder interface {
	JobWorked(kind, outcome string, took time.Duration)
}

// recordWork is River worker middleware that times every job attempt and
// reports its outcome.
type recordWork struct {
	river.MiddlewareDefaults
	rec Recorder
}

// Work implements rivertype.WorkerMiddleware.
func (m *recordWork) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	err := doInner(ctx)
	m.rec.JobWorked(job.Kind, outcome(job, err), time.Since(start))
	return err
}

// outcome names how an attempt ended, as River will treat its error.
func outcome(job *rivertype.JobRow, err error) string {
	var (
		snooze *rivertype.JobSnoozeError
		cancel *rivertype.JobCancelError
	)
	switch {
	case err == nil:
		return "completed"
	case errors.As(err, &snooze):
		return "snoozed"
	case errors.As(err, &cancel):
		return "cancelled"
	case job.Attempt >= job.MaxAttempts:
		return "discarded"
	default:
		return "retry"
	}
}

// unfinishedStates are River's states of a job not yet finished.
var unfinishedStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStatePending,
}

// jobKinds are the kinds of job this package works.
var jobKinds = []string{
	narrator.SynthesizeJob{}.JobKind(), narrator.DeleteMediaJob{}.JobKind(),
	narrator.PreviewJob{}.JobKind(), narrator.WebhookJob{}.JobKind(),
	narrator.ResynthesisJob{}.JobKind(),
}

// jobCountsSQL counts one kind's unfinished jobs by state in one row. It
// reads the same on SQLite and PostgreSQL, and only the unfinished jobs,
// which River's state index finds without reading the finished ones.
const jobCountsSQL = `
SELECT count(CASE WHEN state = 'available' THEN 1 END),
	count(CASE WHEN state = 'scheduled' THEN 1 END),
	count(CASE WHEN state = 'retryable' THEN 1 END),
	count(CASE WHEN state = 'running' THEN 1 END),
	count(CASE WHEN state = 'pending' THEN 1 END)
FROM river_job
WHERE state IN ('available', 'scheduled', 'retryable', 'running', 'pending') AND kind = $1`

// JobCounts returns how many jobs of each kind are in each unfinished
// state, zeros included: the depth of the queue, across every node.
func (q *Queue[TTx]) JobCounts(ctx context.Context) ([]narrator.JobCount, error) {
	out := make([]narrator.JobCount, 0, len(jobKinds)*len(unfinishedStates))
	for _, kind := range jobKinds {
		var n [5]int64
		if err := q.exec.QueryRow(ctx, jobCountsSQL, kind).Scan(&n[0], &n[1], &n[2], &n[3], &n[4]); err != nil {
			return nil, fmt.Errorf("count %s jobs: %w", kind, err)
		}
		for i, state := range unfinishedStates {
			out = append(out, narrator.JobCount{Kind: kind, State: string(state), Count: n[i]})
		}
	}
	return out, nil
}
