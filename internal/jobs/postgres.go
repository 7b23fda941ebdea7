package jobs

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// On PostgreSQL, a group of creates sends its writes and its commit in one
// round trip (the store's createGroup), so its synthesis jobs are written
// by a statement of this package queued with them: River's own insert of
// many jobs is a COPY, which takes round trips of its own.

// insertSynthesesPostgres writes synthesis jobs, one for each element of
// $1 (their arguments) and $6 (their scheduled_at), as River's
// InsertManyFastTx would with the options of SynthesizeArgs and the
// availableAtOnce hook: available at once, River's defaults for the
// other columns (metadata {}, tags {}, no uniqueness), but created at the
// transaction's time rather than at the inserting node's clock.
const insertSynthesesPostgres = `
INSERT INTO river_job (args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
SELECT j.args::jsonb, now(), $2, $3, '{}', $4, $5, j.scheduled_at, 'available', '{}'
FROM unnest($1::text[], $6::timestamptz[]) AS j(args, scheduled_at)`

// notifyPostgres announces inserts as River's driver does (PGNotifyMany),
// on the topic its notifier listens to in the connection's schema.
const notifyPostgres = `SELECT pg_notify(concat(current_schema(), '.', $1::text), $2)`

// QueueInsertMany queues in b the insert of jobs, which must all be
// synthesis jobs: the jobs of a group of creates. Like River, it announces
// the inserts to the workers of the synthesis queue, at most once per
// notifyEvery. It fails, queueing nothing, for a job of another kind.
func (q *Queue[TTx]) QueueInsertMany(b *pgx.Batch, jobs []narrator.Job) error {
	args := make([]string, len(jobs))
	at := make([]time.Time, len(jobs))
	for i, job := range jobs {
		j, ok := job.(narrator.SynthesizeJob)
		if !ok {
			return fmt.Errorf("enqueue %s: only synthesis jobs are inserted in a batch", job.JobKind())
		}
		encoded, err := json.Marshal(SynthesizeArgs{AudioID: j.AudioID, Revision: j.Revision})
		if err != nil {
			return err
		}
		args[i], at[i] = string(encoded), roundTime(j.Round)
	}
	if len(jobs) == 0 {
		return nil
	}
	opts := SynthesizeArgs{}.InsertOpts()
	b.Queue(insertSynthesesPostgres, args, SynthesizeArgs{}.Kind(), q.maxAttempts, opts.Priority, opts.Queue, at)
	if q.dueToNotify() {
		b.Queue(notifyPostgres, riverInsertTopic, fmt.Sprintf(`{"queue": %q}`, opts.Queue))
	}
	return nil
}

// Unannounce forgets when inserts were last announced, so that the next
// QueueInsertMany announces its jobs however soon it comes. A group whose
// transaction did not commit calls it: the announcement it may have queued
// was never sent, and the workers would learn of the jobs its retry
// inserts only at their next poll (Config.PollInterval), a second by
// default, instead of at once.
func (q *Queue[TTx]) Unannounce() { q.notified.Store(0) }

// dueToNotify reports whether inserts into the synthesis queue are to be
// announced now: at most once per notifyEvery, as River's limiter allows.
func (q *Queue[TTx]) dueToNotify() bool {
	now := time.Now().UnixNano()
	last := q.notified.Load()
	return now-last >= int64(q.notifyEvery) && q.notified.CompareAndSwap(last, now)
}
