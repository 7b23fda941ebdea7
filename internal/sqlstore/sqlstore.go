// Package sqlstore is the code the SQLite and PostgreSQL stores share: the
// store methods whose SQL is the same in both dialects but for its
// placeholders, written once against Tx, which each store implements on its
// own driver. Queries use ? placeholders, which the PostgreSQL store
// numbers ($1, $2…) as it runs them.
//
// A store converts the values that its driver stores its own way, both in
// arguments and in scan destinations, so that the code here reads and
// writes plain Go values:
//   - time.Time, and *time.Time for a nullable one (NullTime): an instant,
//     read back in UTC (SQLite: INTEGER Unix microseconds);
//   - []string: a list of text (SQLite: TEXT, comma-separated);
//   - *int64 for a nullable integer.
//
// sql.ErrNoRows reports that a query of one row found none, whatever the
// driver. It imports no driver: each is imported by its store alone.
package sqlstore

import (
	"context"
	"time"

	"github.com/narrator/narrator"
)

// Tx is a transaction of a store's database, as the store adapts it.
type Tx interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Insert runs an INSERT of one row and returns the row's new id
	// (RETURNING id, or the last insert ID).
	Insert(ctx context.Context, query string, args ...any) (int64, error)
	// QueryRow runs a query of at most one row; its Scan returns
	// sql.ErrNoRows when there is none.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Query runs a query of any number of rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// Commit commits the transaction.
	Commit(ctx context.Context) error
	// Rollback ends the transaction if it was not committed; it is
	// deferred by every method that begins one.
	Rollback(ctx context.Context)
}

// Row is the result of Tx.QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// Rows are the results of Tx.Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// DB is what a store gives the shared code: its transactions, its row
// locks, and its job queue.
type DB interface {
	// BeginWrite starts a transaction that writes.
	BeginWrite(ctx context.Context) (Tx, error)
	// BeginRead starts a transaction that only reads, on one snapshot.
	BeginRead(ctx context.Context) (Tx, error)
	// ForUpdate ends a SELECT whose rows the transaction is to change:
	// it locks them until the transaction ends ("" where one writer
	// holds the whole database).
	ForUpdate() string
	// Enqueue inserts job inside tx.
	Enqueue(ctx context.Context, tx Tx, job narrator.Job) error
	// Conflict returns an ECONFLICT *narrator.Error saying that what
	// already exists if err is a unique violation, and err otherwise.
	Conflict(err error, what string) error
}

// Store is the part of a store that sqlstore implements; each store embeds
// it, so that its methods are the store's.
type Store struct {
	db         DB
	migrations Migrations
	now        func() time.Time
	body       narrator.EventBodyFunc
}

// New returns the shared part of a store on db, with its migrations, the
// store's clock (UTC, whole microseconds) and its renderer of webhook
// deliveries.
func New(db DB, migrations Migrations, now func() time.Time, body narrator.EventBodyFunc) *Store {
	return &Store{db: db, migrations: migrations, now: now, body: body}
}

// NullTime maps the zero time to a nil *time.Time, which stores keep as
// NULL.
func NullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// NullInt maps 0 to a nil *int64, which stores keep as NULL.
func NullInt(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

// NullString maps "" to a nil *string, which stores keep as NULL.
func NullString(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
