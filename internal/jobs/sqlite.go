package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// On SQLite, a group of creates (the store's CreateAudio) writes its
// synthesis jobs into River's job table itself (insert.go), and reads the
// head of the synthesis queue, through statements prepared once on the
// store's writer pool: the pure-Go SQLite keeps no statement cache.

// sqliteStmts are the statements Prepare readies on the writer pool.
type sqliteStmts struct {
	insert *sql.Stmt // insertSynthesisSQLite
	head   *sql.Stmt // synthesisHeadSQL
}

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

// errNotPrepared is what a SQLite queue's writes of synthesis jobs and
// reads of the queue's head return before Prepare has succeeded.
var errNotPrepared = errors.New("the SQLite job queue's statements are not prepared: call Prepare once River's tables are migrated")

// sqliteTime is a time as River's SQLite driver stores it: text, to the
// millisecond, in the one format that compares right against SQLite's own
// times.
func sqliteTime(t time.Time) string {
	return t.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
}
