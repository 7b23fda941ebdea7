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
// queue in order of priority, scheduled_at and id. A synthesis job's
// scheduled_at carries its fair round (narrator.FairRound), fairEpoch plus
// one millisecond a round, so River's own fetch, on every node and on
// either database, takes accounts in turn. The rounds lie long in the
// past, so a job is due at once; jobs whose scheduled_at River sets itself
// (a retry, a snooze, a rescue) carry the present time and so wait behind
// the rounds, as a retry waited behind older jobs before.

// fairEpoch is round 0. A millisecond a round, the rounds reach the present
// after some 8×10^11 jobs.
var fairEpoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// roundTime is the scheduled_at of a job of the given round. River's SQLite
// driver keeps times to the millisecond.
func roundTime(round int64) time.Time {
	return fairEpoch.Add(time.Duration(round) * time.Millisecond)
}

// timeRound is the round of a job scheduled at t: the inverse of
// roundTime, and a real time's place among the rounds.
func timeRound(t time.Time) int64 {
	return max(t.Sub(fairEpoch).Milliseconds(), 0)
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

// synthesisHeadSQL is the scheduled_at of the synthesis job River would
// fetch next: its fetch order, on its fetch index. It reads the same on
// SQLite and PostgreSQL.
const synthesisHeadSQL = `
SELECT scheduled_at FROM river_job
WHERE state = 'available' AND queue = $1 AND priority >= 0
ORDER BY priority, scheduled_at, id
LIMIT 1`

// SynthesisHead returns, as seen in tx, the fair round of the synthesis job
// a worker would take next (narrator.FairRound), or 0 when none waits.
func (q *Queue[TTx]) SynthesisHead(ctx context.Context, tx TTx) (int64, error) {
	var at time.Time
	err := q.driver.UnwrapExecutor(tx).QueryRow(ctx, synthesisHeadSQL, queueSynthesize).Scan(&at)
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("head of the synthesis queue: %w", err)
	}
	return timeRound(at), nil
}
