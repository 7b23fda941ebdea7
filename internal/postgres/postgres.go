package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
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
	// SupersedeSynthesis removes, in tx, the audio's synthesis jobs that
	// wait to start (narrator.Effects.Supersede).
	SupersedeSynthesis(ctx context.Context, tx pgx.Tx, audioID int64) error
	// RemoveDeliveryJobs removes, in tx, the webhook jobs of the
	// deliveries ids that wait to start: deliveries given up before
	// their attempt.
	RemoveDeliveryJobs(ctx context.Context, tx pgx.Tx, ids []int64) error
	// QueueInsertMany queues in b the insert of several synthesis jobs:
	// the jobs of a group of creates, which sends them with its other
	// writes and its commit in one round trip.
	QueueInsertMany(b *pgx.Batch, jobs []narrator.Job) error
	// Unannounce makes the next QueueInsertMany announce its jobs to the
	// workers: a group that queued jobs and did not commit calls it, as
	// the announcement it may have queued was not sent.
	Unannounce()
	// SynthesisHead returns, as seen in tx, the fair round of the synthesis
	// job a worker would take next (narrator.FairRound), or 0 when none
	// waits.
	SynthesisHead(ctx context.Context, tx pgx.Tx) (int64, error)
	// QueueSynthesisHead queues in b the read of SynthesisHead, which
	// sets head as b's results are closed: a group of creates reads it
	// with its accounts, in one round trip.
	QueueSynthesisHead(b *pgx.Batch, head *int64)
	// QueueExpectSynthesisHead queues in b a statement that fails b's
	// transaction unless SynthesisHead is still head.
	QueueExpectSynthesisHead(b *pgx.Batch, head int64)
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
	// FeedPings makes changes of podcast feeds enqueue pings of their
	// WebSub hub (narrator.FeedPingJob): set where a hub is configured.
	FeedPings bool
	// NoPlanAhead stops a group of creates from planning against what
	// the store's last group left, to send its checks, its writes and its
	// commit in one round trip (ahead.go): each group then reads first,
	// in a round trip of its own, the simple path. A group planned ahead
	// tells EffectFunc of its steps once it is committed. The store suite
	// runs both ways.
	NoPlanAhead bool
	// Groups, if not nil, is told how each group of creates ran.
	Groups GroupRecorder
	// NoGroupCommit makes every create run alone, in a transaction of its
	// own, through the reference create (sqlstore.CreateAudio), the key of
	// CreateAudioWithKey read first: no group commit and no plan ahead.
	// The store suite compares the fast paths with it.
	NoGroupCommit bool
}

// GroupRecorder records how each group of creates ran: the plan label is
// "ahead" for a group planned ahead whose checks held, "ahead_missed" for
// one whose checks failed and which then ran the long way, and "read" for
// one that ran the long way from the start (ahead.go).
type GroupRecorder interface {
	CreateGroup(plan string)
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
	// alone is Options.NoGroupCommit.
	alone bool
	// creates groups concurrent creates into one transaction (create.go).
	creates *sqlstore.Creates
	// ahead is what the last group of creates left, for the next to plan
	// against (ahead.go); groups is Options.Groups.
	ahead  ahead
	groups GroupRecorder
	// authorizes groups concurrent AuthorizeProject calls into one
	// statement (project.go).
	authorizes sqlstore.Group[*authorizeCall]
	// created counts the audios the store's groups created, until
	// analyzed is set, which analyzeNew does at analyzeAfter.
	created      atomic.Int64
	analyzed     atomic.Bool
	analyzeAfter int64
	// background runs the store's own work (analyzeNew); closing is
	// cancelled, and background waited for, by Close.
	background sync.WaitGroup
	closing    context.Context
	close      context.CancelFunc
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
	s := &Store{Now: time.Now, pool: pool, jobs: opts.Jobs, limits: opts.Limits, effect: opts.EffectFunc, ahead: ahead{on: !opts.NoPlanAhead && !opts.NoGroupCommit}, groups: opts.Groups, alone: opts.NoGroupCommit, analyzeAfter: analyzeAfter}
	s.creates = sqlstore.NewCreates()
	s.authorizes.Max = maxAuthorizeGroup
	s.closing, s.close = context.WithCancel(context.Background())
	s.Store = sqlstore.New(dialect{s}, migrations(), s.now, opts.EventBody, opts.FeedPings)
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
	s.close()
	s.background.Wait()
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

// rollback ends a transaction that was not committed; it is deferred
// for every transaction begun (pgTx.Rollback, sqlstore's inTx). A
// rollback after Commit does nothing.
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

// migrations returns the store's migrations. Each migration's transaction
// first takes the advisory lock, so that one node applies a migration and
// the others then find it applied.
func migrations() sqlstore.Migrations {
	return sqlstore.Migrations{
		FS:   migrationFS,
		Lock: "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(migrateLockID, 10) + ")",
		CreateTable: `
CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL
)`,
		TableExists: `SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0 ELSE 1 END`,
	}
}
