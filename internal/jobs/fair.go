package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Fair scheduling between accounts. River takes the available jobs of a
// queue in order of priority, scheduled_at and id. A new synthesis job
// waits at priorityNew, its scheduled_at its fair round
// (narrator.FairRound), as the seam writes it (insert.go): 2000-01-01
// plus one millisecond a round, so River's own fetch, on every node and on
// either database, takes accounts in turn. The rounds lie long in the
// past, so a job is due at once.
//
// A job that has started once is moved to priorityStarted as it starts
// (SynthesizeWorker). Whatever River then does with it, a retry after a
// failure, a snooze, a rescue from a dead node, sets its scheduled_at to
// a real time, after every round; at the higher priority it still runs as
// soon as it is due, before new jobs, instead of waiting for the rounds to
// run out, which under a steady stream of creates they never would. The
// next try of a job that waited for another attempt's lease
// (narrator.SynthesizeJob.After) is inserted so, at priorityStarted and a
// real time.

// The priorities of synthesis jobs.
const (
	priorityStarted = 1 // started before: runs when due, before new jobs
	priorityNew     = 2 // never started: in its fair round
)

// fairEpochUnix is round 0, 2000-01-01 UTC, in Unix seconds. A
// millisecond a round, the rounds reach the present after some 8×10^11
// jobs.
const fairEpochUnix = 946_684_800

// roundTime is the scheduled_at of a job of the given round. River's SQLite
// driver keeps times to the millisecond.
func roundTime(round int64) time.Time {
	return time.Unix(fairEpochUnix, 0).UTC().Add(time.Duration(round) * time.Millisecond)
}

// timeRound is the round of a job scheduled at t: the inverse of
// roundTime, and a real time's place among the rounds.
func timeRound(t time.Time) int64 {
	return max(t.Sub(time.Unix(fairEpochUnix, 0)).Milliseconds(), 0)
}

// Hooks implements river.JobArgsWithHooks: a synthesis job inserted with
// its round as scheduled_at is available at once. River inserts any job
// given a ScheduledAt as scheduled, which its scheduler would make
// available only seconds later; fetching already skips jobs not yet due.
func (SynthesizeArgs) Hooks() []rivertype.Hook {
	return []rivertype.Hook{river.HookInsertBeginFunc(availableAtOnce)}
}

func availableAtOnce(_ context.Context, p *rivertype.JobInsertParams) error {
	if p.State == rivertype.JobStateScheduled {
		p.State = rivertype.JobStateAvailable
	}
	return nil
}

// synthesisHeadSQL is the scheduled_at of the new synthesis job River
// would fetch next: its fetch order, on its fetch index. It reads the same
// on SQLite and PostgreSQL.
const synthesisHeadSQL = `
SELECT scheduled_at FROM river_job
WHERE state = 'available' AND queue = $1 AND priority = $2
ORDER BY scheduled_at, id
LIMIT 1`

// SynthesisHead returns, as seen in tx, the fair round of the synthesis job
// a worker would take next (narrator.FairRound), or 0 when none waits.
func (q *Queue[TTx]) SynthesisHead(ctx context.Context, tx TTx) (int64, error) {
	var at time.Time
	var err error
	switch st := q.prepared.Load(); {
	case q.db == nil:
		err = q.driver.UnwrapExecutor(tx).QueryRow(ctx, synthesisHeadSQL, queueSynthesize, priorityNew).Scan(&at)
	case st == nil:
		return 0, errNotPrepared
	default:
		err = any(tx).(*sql.Tx).StmtContext(ctx, st.head).QueryRowContext(ctx, queueSynthesize, priorityNew).Scan(&at)
	}
	return headRound(at, err)
}

// headRound is the answer of a read of the synthesis queue's head, given
// what it scanned and its error: at's fair round, or 0 when no job waits.
func headRound(at time.Time, err error) (int64, error) {
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("head of the synthesis queue: %w", err)
	}
	return timeRound(at), nil
}

// QueueSynthesisHead queues in b the read of SynthesisHead, for a
// PostgreSQL transaction that sends several statements in one round trip:
// head is set as b's results are closed, which return the read's error.
func (q *Queue[TTx]) QueueSynthesisHead(b *pgx.Batch, head *int64) {
	b.Queue(synthesisHeadSQL, queueSynthesize, priorityNew).QueryRow(func(row pgx.Row) error {
		var at time.Time
		err := row.Scan(&at)
		*head, err = headRound(at, err)
		return err
	})
}

const promoteSQL = `UPDATE river_job SET priority = $1 WHERE id = $2`

// promote moves a synthesis job that starts to priorityStarted.
func (q *Queue[TTx]) promote(ctx context.Context, jobID int64) error {
	if err := q.exec.Exec(ctx, promoteSQL, priorityStarted, jobID); err != nil {
		return fmt.Errorf("promote job %d: %w", jobID, err)
	}
	return nil
}

// expectSynthesisHeadSQL fails its transaction (narrator_expect) unless
// the fair round of the synthesis queue's head, as timeRound reckons it
// from synthesisHeadSQL's scheduled_at, is $4, or the queue holds no new
// synthesis job and $4 is 0. $3 is fairEpochUnix.
const expectSynthesisHeadSQL = `
SELECT narrator_expect(coalesce(
	(SELECT greatest(floor((extract(epoch FROM h.scheduled_at) - $3) * 1000), 0) FROM (` + synthesisHeadSQL + `) h),
	0) = $4)`

// QueueExpectSynthesisHead queues in b a statement that fails b's
// transaction unless the round of the synthesis queue's head is still
// head, as QueueSynthesisHead read it: a group of creates that planned
// against a head read earlier checks it with its writes.
func (q *Queue[TTx]) QueueExpectSynthesisHead(b *pgx.Batch, head int64) {
	b.Queue(expectSynthesisHeadSQL, queueSynthesize, priorityNew, fairEpochUnix, head)
}
