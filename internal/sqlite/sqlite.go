package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// BusyTimeout is how long a connection waits for another one's write lock
// before it gives up with SQLITE_BUSY. Writes are short, so reaching it
// means something is badly stuck.
const BusyTimeout = 10 * time.Second

// defaultReadConns is the size of the reader pool when Options.ReadConns is 0.
const defaultReadConns = 4

//go:embed migrations/*.sql
var migrationFS embed.FS

// JobInserter inserts jobs inside the caller's transaction, so that a job
// exists exactly when the change that needs it is committed. It is the one
// seam between the store and the queue, whatever the kind of job; the jobs
// package implements it with River's InsertTx, and writes the synthesis
// jobs of InsertManyTx itself, with a prepared statement.
type JobInserter interface {
	InsertTx(ctx context.Context, tx *sql.Tx, job narrator.Job) error
	// InsertManyTx inserts several jobs at once: the jobs of a group of
	// creates (CreateAudio).
	InsertManyTx(ctx context.Context, tx *sql.Tx, jobs []narrator.Job) error
	// SupersedeSynthesis removes, in tx, the audio's synthesis jobs that
	// wait to start (narrator.Effects.Supersede).
	SupersedeSynthesis(ctx context.Context, tx *sql.Tx, audioID int64) error
	// RemoveDeliveryJobs removes, in tx, the webhook jobs of the
	// deliveries ids that wait to start: deliveries given up before
	// their attempt.
	RemoveDeliveryJobs(ctx context.Context, tx *sql.Tx, ids []int64) error
	// SynthesisHead returns, as seen in tx, the fair round of the synthesis
	// job a worker would take next (narrator.FairRound), or 0 when none
	// waits.
	SynthesisHead(ctx context.Context, tx *sql.Tx) (int64, error)
	// Prepare readies the statements of InsertManyTx and SynthesisHead on
	// the writer pool, once its tables exist; until it has, they fail. It
	// takes the pool's one connection: the store calls it from Migrate,
	// outside any transaction.
	Prepare(ctx context.Context) error
}

// Options configures a Store.
type Options struct {
	// Jobs inserts the jobs that writes need. River's queue is built on
	// the database's writer pool (DB.Writer) before the store, which then
	// takes it: pool, queue, store. When nil, writes that need a job fail
	// and change nothing.
	Jobs JobInserter
	// ReadConns is the size of the read-only pool that Open opens; 0
	// means 4.
	ReadConns int
	// EventBody renders the body of webhook deliveries. When nil, a change
	// that an endpoint is to hear of fails and changes nothing.
	EventBody narrator.EventBodyFunc
	// Limits bound what each account may queue and store; zero values
	// mean no limit.
	Limits narrator.Limits
	// NoReadCache turns the read cache off: every read of a project, an
	// audio or a list page goes to the database. The store suite runs with
	// it on and off; the cache's speed is in docs/figures.md.
	NoReadCache bool
	// EffectFunc, when set, is told of each step of a write's effects as
	// the store takes it (narrator.Effects.Steps), inside the write's
	// transaction: the store suite checks that every store takes them in
	// one order.
	EffectFunc func(narrator.EffectStep)
	// FeedPings makes changes of podcast feeds enqueue pings of their
	// WebSub hub (narrator.FeedPingJob): set where a hub is configured.
	FeedPings bool
	// NoGroupCommit makes every create run alone, in a transaction of its
	// own, through the reference create (sqlstore.CreateAudio), instead
	// of in a group (create.go). The store suite compares the group with
	// it.
	NoGroupCommit bool
}

// Store is the SQLite store. It holds two pools on one database file: a
// writer with exactly one connection, through which every transaction goes
// (River needs this too), and a read-only pool for plain reads, which WAL
// lets run beside the writer.
type Store struct {
	// Store holds the methods both stores share, on this one's database.
	*sqlstore.Store

	// Now is the store's clock. It defaults to time.Now; stored times are
	// truncated to microseconds and kept in UTC.
	Now func() time.Time

	path   string
	writer *sql.DB
	reader *sql.DB
	jobs   JobInserter
	limits narrator.Limits
	effect func(narrator.EffectStep)
	// alone is Options.NoGroupCommit.
	alone bool
	// stmts are set by Migrate.
	stmts atomic.Pointer[statements]
	cache *readCache
	// creates is the line of CreateAudio calls, committed in groups.
	creates *sqlstore.Creates
}

// DB is an open database file: a writer pool with exactly one
// connection, a read-only pool and the read cache. OpenDB opens it, River's
// queue is built on its writer (Writer), and New makes the store on it,
// which owns it from then on.
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB
	cache  *readCache
}

// Writer returns the writer pool, which has exactly one connection, for
// River's queue and migrations: their transactions and the store's are
// serialised on that one connection.
func (db *DB) Writer() *sql.DB { return db.writer }

// Close closes the read cache and both pools. A store made by New closes
// them itself.
func (db *DB) Close() error {
	return errors.Join(db.cache.close(), db.reader.Close(), db.writer.Close())
}

// Open opens (creating if needed) the database file at path and the store
// on it (OpenDB, New). It does not migrate: call Migrate before using it.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	db, err := OpenDB(ctx, path, opts.ReadConns)
	if err != nil {
		return nil, err
	}
	return New(db, opts), nil
}

// New returns the store on db, which it owns from then on.
func New(db *DB, opts Options) *Store {
	s := &Store{Now: time.Now, path: db.path, writer: db.writer, reader: db.reader, cache: db.cache,
		jobs: opts.Jobs, limits: opts.Limits, effect: opts.EffectFunc, alone: opts.NoGroupCommit, creates: sqlstore.NewCreates()}
	s.Store = sqlstore.New(dialect{s}, migrations(), s.now, opts.EventBody, opts.FeedPings)
	db.cache.off = opts.NoReadCache
	return s
}

// OpenDB opens (creating if needed) the database file at path, with
// readConns connections in the read-only pool (4 when 0).
func OpenDB(ctx context.Context, path string, readConns int) (*DB, error) {
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open sqlite: %q is not a file path", path)
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open sqlite: path %q must not contain '?'", path)
	}
	busy := strconv.FormatInt(BusyTimeout.Milliseconds(), 10)

	// Pragmas go in the DSN so that every pooled connection gets them, not
	// only the first one. BEGIN IMMEDIATE takes the write lock at the start
	// of a transaction, so that busy_timeout applies to it: a deferred
	// transaction that upgrades from read to write can fail with
	// SQLITE_BUSY at once when another process holds the lock.
	wq := url.Values{}
	wq.Add("_pragma", "busy_timeout("+busy+")")
	wq.Add("_pragma", "journal_mode(WAL)")
	wq.Add("_pragma", "foreign_keys(ON)")
	// FULL: the WAL is fsynced at every commit, so that an acknowledged
	// write survives a power cut, not only the process dying. Creates
	// commit in groups, which share one fsync (BenchmarkCreatesSynchronous).
	wq.Add("_pragma", "synchronous(FULL)")
	// A create group's savepoints write statement journals: in memory,
	// they open no temporary file per group.
	wq.Add("_pragma", "temp_store(MEMORY)")
	wq.Set("_txlock", "immediate")
	writer, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite writer %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	// The writer connects first: it switches the file to WAL, which is
	// persistent, before any reader opens it.
	if err := writer.PingContext(ctx); err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite writer %s: %w", path, err)
	}

	rq := url.Values{}
	rq.Add("_pragma", "busy_timeout("+busy+")")
	rq.Add("_pragma", "foreign_keys(ON)")
	rq.Add("_pragma", "synchronous(FULL)")
	rq.Add("_pragma", "query_only(ON)")
	reader, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite reader %s: %w", path, err)
	}
	n := readConns
	if n <= 0 {
		n = defaultReadConns
	}
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		writer.Close()
		return nil, fmt.Errorf("open sqlite reader %s: %w", path, err)
	}
	cache, err := openReadCache(ctx, path, path+"?"+rq.Encode())
	if err != nil {
		reader.Close()
		writer.Close()
		return nil, fmt.Errorf("open sqlite read cache %s: %w", path, err)
	}
	return &DB{path: path, writer: writer, reader: reader, cache: cache}, nil
}

// DB returns the writer pool, which has exactly one connection, for
// River's migrations and tests. River's transactions and the store's are
// serialised on that one connection.
func (s *Store) DB() *sql.DB { return s.writer }

// enqueue inserts job inside tx.
func (s *Store) enqueue(ctx context.Context, tx *sql.Tx, job narrator.Job) error {
	if s.jobs == nil {
		return fmt.Errorf("enqueue %s: the sqlite store was opened without a job inserter", job.JobKind())
	}
	if err := s.jobs.InsertTx(ctx, tx, job); err != nil {
		return fmt.Errorf("enqueue %s: %w", job.JobKind(), err)
	}
	return nil
}

// enqueueMany inserts jobs inside tx; none is fine.
func (s *Store) enqueueMany(ctx context.Context, tx *sql.Tx, jobs []narrator.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	if s.jobs == nil {
		return fmt.Errorf("enqueue %d jobs: the sqlite store was opened without a job inserter", len(jobs))
	}
	if err := s.jobs.InsertManyTx(ctx, tx, jobs); err != nil {
		return fmt.Errorf("enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// Ping checks that the database answers a query on the read pool, which
// a long write transaction does not hold up.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	if err := s.reader.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		return fmt.Errorf("ping database: %w", unavailable(err))
	}
	return nil
}

// Close closes the prepared statements, the read cache and both pools.
func (s *Store) Close() error {
	var errs []error
	if st := s.stmts.Load(); st != nil {
		errs = append(errs, st.close())
	}
	return errors.Join(append(errs, s.cache.close(), s.reader.Close(), s.writer.Close())...)
}

// Migrate brings the schema up to date (sqlstore.Store.Migrate), then
// prepares the store's statements and its job inserter's
// (JobInserter.Prepare), which need it: a store is used once migrated,
// and its methods that run prepared statements fail before. The job
// queue's own tables (River's) are migrated before.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.Store.Migrate(ctx); err != nil {
		return err
	}
	if s.jobs != nil {
		if err := s.jobs.Prepare(ctx); err != nil {
			return fmt.Errorf("prepare job inserter: %w", unavailable(err))
		}
	}
	if s.stmts.Load() != nil {
		return nil
	}
	st, err := prepareStatements(ctx, s.reader, s.writer)
	if err != nil {
		return fmt.Errorf("prepare statements: %w", unavailable(err))
	}
	if !s.stmts.CompareAndSwap(nil, st) {
		return st.close()
	}
	return nil
}

// prepared returns the statements Migrate prepared.
func (s *Store) prepared() (*statements, error) {
	if st := s.stmts.Load(); st != nil {
		return st, nil
	}
	return nil, errNotMigrated
}

// now returns the clock's time as stored: UTC, in whole microseconds.
func (s *Store) now() time.Time {
	return s.Now().UTC().Truncate(time.Microsecond)
}

// beginWrite starts a transaction on the writer (BEGIN IMMEDIATE).
func (s *Store) beginWrite(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin write: %w", unavailable(err))
	}
	return tx, nil
}

// beginRead starts a read transaction on the reader pool, so that a read of
// several statements sees one snapshot.
func (s *Store) beginRead(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin read: %w", unavailable(err))
	}
	return tx, nil
}

// micros encodes a time as the database stores it: UTC Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros decodes a stored time.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// nullString maps "" to NULL.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// isUniqueViolation reports whether err is a UNIQUE or PRIMARY KEY
// constraint failure.
func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// formatError turns a unique violation into ECONFLICT and leaves other errors
// as they are.
func formatError(err error, what string) error {
	if isUniqueViolation(err) {
		return narrator.Errorf(narrator.ECONFLICT, "%s already exists", what)
	}
	return err
}

// migrations returns the store's migrations. They need no lock: a migration's
// transaction holds the one writer.
func migrations() sqlstore.Migrations {
	return sqlstore.Migrations{
		FS: migrationFS,
		CreateTable: `
CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
)`,
		TableExists: `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`,
	}
}
