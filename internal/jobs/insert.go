package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"

	"github.com/narrator/narrator"
)

// The seam: the one place Narrator writes River's job table itself, instead
// of through River's insert API (River.Client.InsertManyFastTx). It writes
// the new synthesis jobs of a group of creates, on SQLite (InsertManyTx) and
// on PostgreSQL (QueueInsertMany); every other job, and a synthesis job that
// waits for another attempt's lease, goes through River's API.
//
// Why. On SQLite River's insert is one long statement that unpacks its jobs
// from JSON, which the pure-Go driver, keeping no statement cache, parses
// on every call; the seam's statement is prepared once (Prepare). On
// PostgreSQL River's insert is a COPY, which takes round trips of its own,
// while a group of creates sends its writes and its commit in one
// (docs/decisions/river-insert.md gives the benchmark that decided).
//
// What it writes. The row River v0.47.0's InsertManyFastTx writes for
// SynthesizeArgs with the availableAtOnce hook: args, kind, max_attempts
// (the client's), priority and queue (SynthesizeArgs.InsertOpts), state
// available, metadata {} and tags [] (River's defaults), scheduled_at, and
// created_at at the database's clock (River takes the inserting node's on
// PostgreSQL). The other columns keep their defaults, as River leaves them:
// no attempt, no uniqueness. TestSeamWritesRiversRow compares the seam's
// row with River's on both databases, and TestSeamRiverColumns River's
// columns with the ones this was written against, so that a River upgrade
// that changes either fails.
//
// Narrator's meaning. Here River's columns carry more than River gives
// them: scheduled_at is the job's fair round (roundTime), a time long past
// that orders the accounts' jobs in River's fetch, and priority tells new
// jobs (priorityNew) from started ones (fair.go).

// insertSynthesisSQLite writes one synthesis job on SQLite: its arguments,
// kind, max_attempts, priority, queue and scheduled_at as River's SQLite
// driver encodes them.
const insertSynthesisSQLite = `
INSERT INTO river_job (args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
VALUES (jsonb(?), datetime('now', 'subsec'), ?, ?, jsonb('{}'), ?, ?, ?, 'available', jsonb('[]'))`

// insertSynthesesPostgres writes synthesis jobs on PostgreSQL, one for
// each element of $1 (their arguments) and $6 (their scheduled_at), with
// kind $2, max_attempts $3, priority $4 and queue $5.
const insertSynthesesPostgres = `
INSERT INTO river_job (args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
SELECT j.args::jsonb, now(), $2, $3, '{}', $4, $5, j.scheduled_at, 'available', '{}'
FROM unnest($1::text[], $6::timestamptz[]) AS j(args, scheduled_at)`

// seamTakes reports whether the seam writes job: a new synthesis job, in
// its fair round.
func seamTakes(job narrator.Job) (narrator.SynthesizeJob, bool) {
	j, ok := job.(narrator.SynthesizeJob)
	return j, ok && j.After.IsZero()
}

// insertSynthesesSQLite writes synthesis jobs into River's job table, in
// tx, a row at a time (insertSynthesisSQLite). Like River, it announces the
// inserts to the workers of the queue, which on SQLite poll a table for
// them, at most once per notifyEvery.
func (q *Queue[TTx]) insertSynthesesSQLite(ctx context.Context, tx TTx, jobs []narrator.SynthesizeJob) error {
	st := q.prepared.Load()
	if st == nil {
		return errNotPrepared
	}
	insert := any(tx).(*sql.Tx).StmtContext(ctx, st.insert)
	opts := SynthesizeArgs{}.InsertOpts()
	for _, j := range jobs {
		a := SynthesizeArgs{AudioID: j.AudioID, Revision: j.Revision}
		encoded, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if _, err := insert.ExecContext(ctx, string(encoded), a.Kind(), q.maxAttempts, opts.Priority, opts.Queue, sqliteTime(roundTime(j.Round))); err != nil {
			return err
		}
	}
	if !q.dueToNotify() {
		return nil
	}
	return q.driver.UnwrapExecutor(tx).NotifyMany(ctx, &riverdriver.NotifyManyParams{
		Payload: []string{fmt.Sprintf(`{"queue": %q}`, opts.Queue)},
		Topic:   riverInsertTopic,
	})
}

// QueueInsertMany queues in b the insert of jobs on PostgreSQL, which must
// all be new synthesis jobs: the jobs of a group of creates. Like River, it
// announces the inserts to the workers of the synthesis queue, at most
// once per notifyEvery. It fails, queueing nothing, for any other job.
func (q *Queue[TTx]) QueueInsertMany(b *pgx.Batch, jobs []narrator.Job) error {
	args := make([]string, len(jobs))
	at := make([]time.Time, len(jobs))
	for i, job := range jobs {
		j, ok := seamTakes(job)
		if !ok {
			return fmt.Errorf("enqueue %s: only new synthesis jobs are inserted in a batch", job.JobKind())
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

// riverInsertTopic is the topic of River's announcements of inserted jobs
// (its notifier's NotificationTopicInsert).
const riverInsertTopic = "river_insert"

// notifyPostgres announces inserts as River's driver does (PGNotifyMany),
// on the topic its notifier listens to in the connection's schema.
const notifyPostgres = `SELECT pg_notify(concat(current_schema(), '.', $1::text), $2)`

// Unannounce forgets when inserts were last announced, so that the next
// QueueInsertMany announces its jobs however soon it comes. A group whose
// transaction did not commit calls it: the announcement it may have queued
// was never sent, and the workers would learn of the jobs its retry
// inserts only at their next poll (Config.PollInterval) instead of at once.
func (q *Queue[TTx]) Unannounce() { q.notified.Store(0) }

// dueToNotify reports whether inserts into the synthesis queue are to be
// announced now: at most once per notifyEvery, as River's limiter allows.
func (q *Queue[TTx]) dueToNotify() bool {
	now := time.Now().UnixNano()
	last := q.notified.Load()
	return now-last >= int64(q.notifyEvery) && q.notified.CompareAndSwap(last, now)
}
