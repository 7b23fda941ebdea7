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
//   - []int64: a list of IDs, in arguments only, for DB.InList (SQLite: a
//     JSON array);
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
	// Rollback ends the transaction if it was not committed; inTx
	// defers it for every transaction it begins.
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
	// Limits are the limits of each account that the store enforces.
	Limits() narrator.Limits
	// LockKey locks key, any string, until tx ends, so that the writes
	// under one key are serialised on every node (nothing to do where one
	// writer holds the whole database).
	LockKey(ctx context.Context, tx Tx, key string) error
	// Enqueue inserts job inside tx.
	Enqueue(ctx context.Context, tx Tx, job narrator.Job) error
	// SupersedeSynthesis removes, in tx, the audio's synthesis jobs that
	// wait to start.
	SupersedeSynthesis(ctx context.Context, tx Tx, audioID int64) error
	// RemoveDeliveryJobs removes, in tx, the webhook jobs (WebhookJob) of
	// the deliveries ids that wait to start (not running): the jobs of
	// deliveries given up before their attempt.
	RemoveDeliveryJobs(ctx context.Context, tx Tx, ids []int64) error
	// Conflict returns an ECONFLICT *narrator.Error saying that what
	// already exists if err is a unique violation, and err otherwise.
	Conflict(err error, what string) error
	// ResolveAudio finds, for a write in tx, a live audio of a project by
	// reference as FindAudio does, with its media, its row locked.
	ResolveAudio(ctx context.Context, tx Tx, projectID int64, ref string) (*narrator.Audio, error)
	// PlanSynthesis is the part of a change that queues a synthesis for
	// an audio of projectID that concerns its account, before the change
	// writes anything: when check is set it refuses the change if the
	// account is over its limits (narrator.Limits.CheckSynthesis; adds
	// tells whether the change adds an audio to the account's queue), and
	// it returns the job's fair round (narrator.FairRound), which it
	// records as the account's.
	PlanSynthesis(ctx context.Context, tx Tx, projectID int64, adds, check bool) (int64, error)
	// LastIDs returns the highest ID each table has given, deleted rows
	// included.
	LastIDs(ctx context.Context, tx Tx) (narrator.LastIDs, error)
	// ILike is the operator of a LIKE that ignores letter case: ILIKE,
	// which folds it as the database's locale does, or LIKE, which folds
	// the case of ASCII letters only.
	ILike() string
	// IndexedBy is what follows a table's name in FROM to have a query read
	// the table through index (INDEXED BY on SQLite, whose planner has no
	// statistics; "" where the planner finds it unaided).
	IndexedBy(index string) string
	// InList is the right-hand side of a condition that a value is one of
	// the IDs of one []int64 argument ("= ANY(?)").
	InList() string
	// Overriding is what an INSERT that gives a row its ID says before
	// VALUES ("OVERRIDING SYSTEM VALUE " for an identity column).
	Overriding() string
	// RaiseID moves the ID counter of table up to last, if it is lower,
	// so that the table's next ID is past last.
	RaiseID(ctx context.Context, tx Tx, table string, last int64) error
	// ApplyEffects does in tx what the write that left a as it is must do
	// besides a's own rows, in the order of eff.Steps: the store's one
	// place for it, the package's ApplyEffects with the store's writes of
	// the account's and the project's rows.
	ApplyEffects(ctx context.Context, tx Tx, a *narrator.Audio, eff narrator.Effects) error
}

// Store is the part of a store that sqlstore implements; each store embeds
// it, so that its methods are the store's.
type Store struct {
	db         DB
	migrations Migrations
	now        func() time.Time
	body       narrator.EventBodyFunc
	feedPings  bool
}

// New returns the shared part of a store on db, with its migrations, the
// store's clock (UTC, whole microseconds), its renderer of webhook
// deliveries, and whether changes of podcast feeds enqueue pings of their
// WebSub hub (PingFeed): only where a hub is configured.
func New(db DB, migrations Migrations, now func() time.Time, body narrator.EventBodyFunc, feedPings bool) *Store {
	return &Store{db: db, migrations: migrations, now: now, body: body, feedPings: feedPings}
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
