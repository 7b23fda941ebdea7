package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/migration"
	"github.com/narrator/narrator/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// JobInserter inserts a job inside the caller's transaction, so that the
// job exists exactly when the change that needs it is committed. It is the
// one seam between the store and the queue, whatever the kind of job; the
// jobs package implements it with River's InsertTx.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, job narrator.Job) error
	// InsertManyTx inserts several jobs at once: the jobs of a group of
	// creates.
	InsertManyTx(ctx context.Context, tx pgx.Tx, jobs []narrator.Job) error
	// SynthesisHead returns, as seen in tx, the fair round of the synthesis
	// job a worker would take next (narrator.FairRound), or 0 when none
	// waits.
	SynthesisHead(ctx context.Context, tx pgx.Tx) (int64, error)
}

// Options configures a Store.
type Options struct {
	// Jobs inserts the jobs that writes need. River's queue is built on
	// the pool (OpenPool) before the store, which then takes it: pool,
	// queue, store. When nil, writes that need a job fail and change
	// nothing.
	Jobs JobInserter
	// EventBody renders the body of webhook deliveries. When nil, a change
	// that an endpoint is to hear of fails and changes nothing.
	EventBody narrator.EventBodyFunc
	// Limits bound what each account may queue and store; zero values
	// mean no limit.
	Limits narrator.Limits
	// EffectFunc, when set, is told of each step of a write's effects as
	// the store takes it (narrator.Effects.Steps), inside the write's
	// transaction: the store suite checks that every store takes them in
	// one order.
	EffectFunc func(narrator.EffectStep)
}

// Store is the PostgreSQL store. Many processes, on many nodes, may use one
// database at once: every read-modify-write locks the rows it changes.
type Store struct {
	// Store holds the methods both stores share, on this one's database.
	*sqlstore.Store

	// Now is the store's clock. It defaults to time.Now; stored times are
	// truncated to microseconds and read back in UTC.
	Now func() time.Time

	pool   *pgxpool.Pool
	jobs   JobInserter
	limits narrator.Limits
	effect func(narrator.EffectStep)
	// creates groups concurrent creates into one transaction (create.go).
	creates sqlstore.Group[*createCall]
}

// Open connects to the database at url and returns the store on it
// (OpenPool, New). It does not migrate: call Migrate, or check
// SchemaCurrent. Errors never include the password.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	pool, err := OpenPool(ctx, url)
	if err != nil {
		return nil, err
	}
	return New(pool, opts), nil
}

// OpenPool connects to the database at url, a PostgreSQL URL or
// keyword/value connection string, and checks that it answers. Errors never
// include the password.
func OpenPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx leaves the password out of its parse errors.
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "narrator"
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres %s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres %s: %w", where, err)
	}
	return pool, nil
}

// New returns the store on pool, which it owns from then on: Close closes
// it.
func New(pool *pgxpool.Pool, opts Options) *Store {
	s := &Store{Now: time.Now, pool: pool, jobs: opts.Jobs, limits: opts.Limits, effect: opts.EffectFunc}
	s.creates.Max = maxCreateBatch
	s.Store = sqlstore.New(dialect{s}, s.now, opts.EventBody)
	return s
}

// Pool returns the store's connection pool, for River's migrations and its
// queue, whose transactions are then the store's own kind.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping database: %w", unavailable(err))
	}
	return nil
}

// Close closes the pool, waiting for connections in use to be returned.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// enqueue inserts job inside tx.
func (s *Store) enqueue(ctx context.Context, tx pgx.Tx, job narrator.Job) error {
	if s.jobs == nil {
		return fmt.Errorf("enqueue %s: the postgres store was opened without a job inserter", job.JobKind())
	}
	if err := s.jobs.InsertTx(ctx, tx, job); err != nil {
		return fmt.Errorf("enqueue %s: %w", job.JobKind(), err)
	}
	return nil
}

// now returns the clock's time as stored: UTC, in whole microseconds.
func (s *Store) now() time.Time {
	return s.Now().UTC().Truncate(time.Microsecond)
}

// beginWrite starts a READ COMMITTED transaction. Each statement sees what
// was committed before it began; writes that depend on what they read lock
// the rows first (SELECT ... FOR UPDATE), so that a concurrent writer on
// another node waits and the second one reads the first one's result.
func (s *Store) beginWrite(ctx context.Context) (pgx.Tx, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("begin write: %w", unavailable(err))
	}
	return txConn{tx}, nil
}

// beginRead starts a read-only REPEATABLE READ transaction, so that a read
// of several statements (audios, then their media) sees one snapshot. A
// read-only transaction never fails to serialize.
func (s *Store) beginRead(ctx context.Context) (pgx.Tx, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin read: %w", unavailable(err))
	}
	return txConn{tx}, nil
}

// rollback ends a transaction that was not committed; it is deferred by
// every method that begins one. A rollback after Commit does nothing.
func rollback(ctx context.Context, tx pgx.Tx) {
	// The rollback must run even when ctx is cancelled; its error is of no
	// use, since the transaction's own error is returned.
	_ = tx.Rollback(context.WithoutCancel(ctx))
}

// nullString maps "" to NULL.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// uniqueViolation is PostgreSQL's SQLSTATE for a unique constraint failure.
const uniqueViolation = "23505"

// violatedUnique returns the name of the unique index or constraint that err
// violated, or "" if err is not a unique violation.
func violatedUnique(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) && e.Code == uniqueViolation {
		return e.ConstraintName
	}
	return ""
}

// formatError turns a unique violation into ECONFLICT and leaves other errors
// as they are.
func formatError(err error, what string) error {
	if violatedUnique(err) != "" {
		return narrator.Errorf(narrator.ECONFLICT, "%s already exists", what)
	}
	return err
}

// migrateLockID keys the advisory lock that Migrate holds for each
// migration's transaction: "narrator" in ASCII.
const migrateLockID int64 = 0x6e61_7272_6174_6f72

const lockMigrationsSQL = `SELECT pg_advisory_xact_lock($1)`

const createSchemaMigrationsSQL = `
CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL
)`

const migrationAppliedSQL = `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`

const recordMigrationSQL = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`

// Migrate applies the pending embedded migrations in order, each in its own
// transaction together with its row in schema_migrations. Running it again,
// or from several nodes at once, is safe: each transaction first takes an
// advisory lock, so one node applies a migration and the others then find
// it applied.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migration.Load(migrationFS, "migrations")
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := s.applyMigration(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, m migration.Migration) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", m.Name, err)
	}
	defer rollback(ctx, tx)
	if _, err := tx.Exec(ctx, lockMigrationsSQL, migrateLockID); err != nil {
		return fmt.Errorf("migrate %s: lock: %w", m.Name, err)
	}
	// Under the lock, so that two nodes never create the table at once
	// (IF NOT EXISTS alone does not prevent that race).
	if _, err := tx.Exec(ctx, createSchemaMigrationsSQL); err != nil {
		return fmt.Errorf("migrate %s: create schema_migrations: %w", m.Name, err)
	}
	var applied bool
	if err := tx.QueryRow(ctx, migrationAppliedSQL, m.Version).Scan(&applied); err != nil {
		return fmt.Errorf("migrate %s: %w", m.Name, err)
	}
	if applied {
		return nil
	}
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return fmt.Errorf("migrate %s: %w", m.Name, err)
	}
	if _, err := tx.Exec(ctx, recordMigrationSQL, m.Version, m.Name, s.now()); err != nil {
		return fmt.Errorf("migrate %s: record: %w", m.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate %s: commit: %w", m.Name, err)
	}
	return nil
}

const schemaMigrationsExistSQL = `SELECT to_regclass('schema_migrations') IS NOT NULL`

const appliedVersionsSQL = `SELECT version FROM schema_migrations ORDER BY version`

// SchemaCurrent reports whether every embedded migration has been applied.
// It returns an error if the database has migrations this binary does not
// know, that is if a newer binary migrated it.
func (s *Store) SchemaCurrent(ctx context.Context) (bool, error) {
	ms, err := migration.Load(migrationFS, "migrations")
	if err != nil {
		return false, err
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return false, fmt.Errorf("schema current: %w", err)
	}
	defer rollback(ctx, tx)
	var exists bool
	if err := tx.QueryRow(ctx, schemaMigrationsExistSQL).Scan(&exists); err != nil {
		return false, fmt.Errorf("schema current: %w", err)
	}
	if !exists {
		return false, nil
	}
	rows, err := tx.Query(ctx, appliedVersionsSQL)
	if err != nil {
		return false, fmt.Errorf("schema current: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return false, fmt.Errorf("schema current: %w", err)
	}
	return migration.Current(ms, versions)
}
