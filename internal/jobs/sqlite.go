package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdriver"

	"github.com/narrator/narrator"
)

// On SQLite, a group of creates (the store's CreateAudio) writes its
// synthesis jobs into River's job table itself, and reads the head of the
// synthesis queue, through statements prepared once on the store's writer
// pool. The pure-Go SQLite keeps no statement cache: River parses its
// insert, a long statement that unpacks its jobs from JSON in SQL, on every
// call, which cost more than the rest of a group of creates.

// sqliteStmts are the statements Prepare readies on the writer pool.
type sqliteStmts struct {
	insert *sql.Stmt // insertSynthesisSQLite
	head   *sql.Stmt // synthesisHeadSQL
}

// insertSynthesisSQLite writes one synthesis job as River's InsertManyFastTx
// would with the options of SynthesizeArgs and the availableAtOnce hook:
// available at once, created at the database's time to the millisecond,
// River's defaults for the other columns (metadata {}, tags [], no
// uniqueness).
const insertSynthesisSQLite = `
INSERT INTO river_job (args, created_at, kind, max_attempts, priority, queue, scheduled_at, state)
VALUES (jsonb(?), datetime('now', 'subsec'), ?, ?, ?, ?, ?, 'available')`

// Prepare prepares, on a SQLite queue, the statements with which
// InsertManyTx writes synthesis jobs and SynthesisHead reads the queue:
// once River's tables are migrated (MigrateSQLite), and before either
// runs, which fail until it has; the SQLite store's Migrate calls it. It
// needs the writer pool's one connection, so a caller must not hold a
// transaction. It does nothing once it has succeeded, or on PostgreSQL.
func (q *Queue[TTx]) Prepare(ctx context.Context) error {
	if q.db == nil || q.prepared.Load() != nil {
		return nil
	}
	q.prepareMu.Lock()
	defer q.prepareMu.Unlock()
	if q.prepared.Load() != nil {
		return nil
	}
	insert, err := q.db.PrepareContext(ctx, insertSynthesisSQLite)
	if err != nil {
		return fmt.Errorf("prepare job insert: %w", err)
	}
	head, err := q.db.PrepareContext(ctx, synthesisHeadSQL)
	if err != nil {
		return errors.Join(fmt.Errorf("prepare synthesis head: %w", err), insert.Close())
	}
	q.prepared.Store(&sqliteStmts{insert: insert, head: head})
	return nil
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

// errNotPrepared is what a SQLite queue's writes of synthesis jobs and
// reads of the queue's head return before Prepare has succeeded.
var errNotPrepared = errors.New("the SQLite job queue's statements are not prepared: call Prepare once River's tables are migrated")

// riverInsertTopic is the topic of River's announcements of inserted jobs
// (its notifier's NotificationTopicInsert).
const riverInsertTopic = "river_insert"

// sqliteTime is a time as River's SQLite driver stores it: text, to the
// millisecond, in the one format that compares right against SQLite's own
// times.
func sqliteTime(t time.Time) string {
	return t.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
}
