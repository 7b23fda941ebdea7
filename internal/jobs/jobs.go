// Package jobs runs Narrator's background work on River, on SQLite or
// PostgreSQL: synthesising audios, deleting media that is no longer
// referenced, delivering webhooks, and pinging WebSub hubs. It is the only
// package that imports River.
package jobs

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
)

// Queue names. Synthesis has its own queue so that a burst of deletions never
// waits behind long articles, and the other way round.
const (
	queueSynthesize = "synthesize"
	queueMedia      = "media"
	// Previews have their own queue so that a preview, which a person is
	// waiting for, never waits behind long articles.
	queuePreview = "preview"
	// Webhook deliveries have their own queue so that a slow receiver
	// never holds up media removal, nor a burst of deliveries synthesis.
	queueWebhook = "webhook"
)

// SynthesizeArgs is narrator.SynthesizeJob as River stores it.
type SynthesizeArgs struct {
	AudioID  int64 `json:"audio_id"`
	Revision int   `json:"revision"`
}

// Kind implements river.JobArgs.
func (SynthesizeArgs) Kind() string { return narrator.SynthesizeJob{}.JobKind() }

// InsertOpts implements river.JobArgsWithInsertOpts. A new synthesis job
// waits at priority priorityNew, in its fair round (fair.go).
func (SynthesizeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueSynthesize, Priority: priorityNew}
}

// DeleteMediaArgs is narrator.DeleteMediaJob as River stores it.
type DeleteMediaArgs struct {
	Keys []string `json:"keys"`
}

// Kind implements river.JobArgs.
func (DeleteMediaArgs) Kind() string { return narrator.DeleteMediaJob{}.JobKind() }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (DeleteMediaArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueMedia}
}

// PreviewArgs is narrator.PreviewJob as River stores it.
type PreviewArgs struct {
	Language string `json:"language"`
	Voice    string `json:"voice"`
	Text     string `json:"text"`
	Key      string `json:"key"`
}

// Kind implements river.JobArgs.
func (PreviewArgs) Kind() string { return narrator.PreviewJob{}.JobKind() }

// InsertOpts implements river.JobArgsWithInsertOpts. Many requests for one
// preview make one job.
func (PreviewArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queuePreview, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// WebhookArgs is narrator.WebhookJob as River stores it.
type WebhookArgs struct {
	DeliveryID int64 `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (WebhookArgs) Kind() string { return narrator.WebhookJob{}.JobKind() }

// WebhookMaxAttempts is how often a delivery is tried: with the default
// backoff (see WebhookConfig.RetryBase) the last attempt comes about 29
// hours after the first, past narrator.WebhookDisableAfter, so that an
// endpoint that failed all of a delivery's attempts has failed for a day.
const WebhookMaxAttempts = 17

// InsertOpts implements river.JobArgsWithInsertOpts.
func (WebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueWebhook, MaxAttempts: WebhookMaxAttempts}
}

// Config sets up the queue.
type Config struct {
	Logger *slog.Logger
	// Work makes the queue work jobs (roles all and worker). A queue that
	// does not work only inserts them (role api, and command-line tools).
	Work bool
	// SynthesisWorkers is how many audios are synthesised at once. Each one
	// already spreads its sentences over every core, so a small number keeps
	// the machine busy without making every audio wait longer.
	SynthesisWorkers int
	// MaxAttempts is how often a synthesis is tried before the audio fails.
	MaxAttempts int
	// RetryDelays are the waits before the second, third, ... attempt; the
	// last one repeats.
	RetryDelays []time.Duration
	// RescueAfter is how long a job may run before River's rescuer takes it
	// to have died with its node and makes it available to another one. A
	// rescued job that is in fact still running meets its twin's lease and
	// waits (see SynthesizeWorker), so this bounds how long an audio stays
	// stuck after a node dies, not how long a synthesis may take. Default:
	// 2 minutes.
	RescueAfter time.Duration
	// PollInterval is how often an idle worker looks for new jobs that
	// nobody announced. Both drivers announce an insert to the workers at
	// once (PostgreSQL with NOTIFY, River's SQLite driver through a table
	// its listener polls every 50 ms), so this is only a fallback; each
	// poll of each queue is a query that the pure-Go SQLite parses anew.
	// Default: 1 s.
	PollInterval time.Duration
	// Metrics, if not nil, is told how every job attempt on this node went.
	Metrics Recorder
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.SynthesisWorkers == 0 {
		c.SynthesisWorkers = 2
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 5
	}
	if len(c.RetryDelays) == 0 {
		c.RetryDelays = []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}
	}
	if c.RescueAfter == 0 {
		c.RescueAfter = 2 * time.Minute
	}
	if c.PollInterval == 0 {
		c.PollInterval = time.Second
	}
}

// Queue is a River client on the database of a store. TTx is the
// transaction type of the River driver: *sql.Tx on SQLite, pgx.Tx on
// PostgreSQL.
type Queue[TTx any] struct {
	client  *river.Client[TTx]
	workers *river.Workers // nil for a queue that only inserts
	exec    riverdriver.Executor
	driver  riverdriver.Driver[TTx]
	logger  *slog.Logger
	// db is the SQLite store's writer pool, on which InsertManyTx writes
	// synthesis jobs itself (insert.go); nil on PostgreSQL.
	db        *sql.DB
	prepareMu sync.Mutex
	prepared  atomic.Pointer[sqliteStmts]
	// maxAttempts and notifyEvery are River's settings for the jobs it
	// inserts: the client's MaxAttempts, and its FetchCooldown, the least
	// time between two announcements of inserts into one queue.
	maxAttempts int
	notifyEvery time.Duration
	// notified is when a write of synthesis jobs last announced them, in
	// Unix nanoseconds.
	notified atomic.Int64
}

// Workers are the workers of a working queue, one per job kind.
type Workers struct {
	Synthesize  *SynthesizeWorker
	DeleteMedia *DeleteMediaWorker
	Preview     *PreviewWorker
	Webhook     *WebhookWorker
	Resynthesis *ResynthesisWorker
	// FeedPing pings WebSub hubs; nil where no hub is configured, which
	// makes left-over pings do nothing.
	FeedPing *FeedPingWorker
}

// MigrateSQLite brings River's own tables up to date on a SQLite database.
func MigrateSQLite(ctx context.Context, db *sql.DB) error {
	return migrate(ctx, riversqlite.New(db))
}

// riverMigrationLock is the advisory lock that nodes starting together
// take while they migrate River's tables, one after the other.
const riverMigrationLock = 0x6e61727261746f72 // "narrator"

// MigratePostgres brings River's own tables up to date on PostgreSQL.
// Nodes that start together take turns, under an advisory lock held by one
// connection while the migration runs on others.
func MigratePostgres(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(riverMigrationLock)); err != nil {
		return fmt.Errorf("migrate river: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(riverMigrationLock))
	return migrate(ctx, riverpgxv5.New(pool))
}

func migrate[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}

// NewSQLite returns a queue on db, which must be the SQLite store's
// single-writer pool, so that River's transactions and the store's are
// serialised on one connection.
func NewSQLite(db *sql.DB, cfg Config) (*Queue[*sql.Tx], error) {
	q, err := newQueue(riversqlite.New(db), cfg)
	if err != nil {
		return nil, err
	}
	q.db = db
	return q, nil
}

// NewPostgres returns a queue on a PostgreSQL pool, the store's own.
func NewPostgres(pool *pgxpool.Pool, cfg Config) (*Queue[pgx.Tx], error) {
	return newQueue(riverpgxv5.New(pool), cfg)
}

func newQueue[TTx any](driver riverdriver.Driver[TTx], cfg Config) (*Queue[TTx], error) {
	cfg.setDefaults()
	rc := &river.Config{
		Logger: riverLogger(cfg.Logger),
		// Stores insert jobs before Start adds the workers. InsertTx takes
		// only the job kinds this package works, which is River's check.
		SkipUnknownJobCheck: true,
	}
	// Inserts take their attempts from the client that inserts: a node
	// that only inserts (--role api) gives its jobs as many as one that
	// works them.
	rc.MaxAttempts = cfg.MaxAttempts
	var workers *river.Workers
	if cfg.Work {
		// Workers are added by Start: they need the store, which needs
		// this queue to insert jobs.
		workers = river.NewWorkers()
		rc.Workers = workers
		rc.Queues = map[string]river.QueueConfig{
			queueSynthesize: {MaxWorkers: cfg.SynthesisWorkers},
			queueMedia:      {MaxWorkers: 2},
			queuePreview:    {MaxWorkers: 1},
			// Deliveries mostly wait on the network.
			queueWebhook:     {MaxWorkers: 8},
			queueResynthesis: {MaxWorkers: 1},
		}
		rc.FetchPollInterval = cfg.PollInterval
		// A short cooldown keeps the time from create to first word small;
		// the fetch query is cheap.
		rc.FetchCooldown = min(50*time.Millisecond, cfg.PollInterval)
		rc.RetryPolicy = retryPolicy(cfg.RetryDelays)
		// Each worker bounds its own jobs (Timeout methods): a synthesis of
		// the largest article takes minutes, a media removal seconds.
		rc.JobTimeout = -1
		// A job still running this long after its start is taken to have
		// died with its node, and is made available to another node.
		// Single-node restarts do not wait for this: RecoverInterrupted
		// takes their jobs over at start.
		rc.RescueStuckJobsAfter = cfg.RescueAfter
		// On shutdown, running jobs get this long to finish before their
		// contexts are cancelled and they are put back in the queue.
		rc.SoftStopTimeout = 5 * time.Second
		if cfg.Metrics != nil {
			rc.Middleware = []rivertype.Middleware{&recordWork{rec: cfg.Metrics}}
		}
	}
	client, err := river.NewClient(driver, rc)
	if err != nil {
		return nil, fmt.Errorf("new river client: %w", err)
	}
	return &Queue[TTx]{client: client, workers: workers, exec: driver.GetExecutor(), driver: driver, logger: cfg.Logger,
		maxAttempts: cmp.Or(rc.MaxAttempts, river.MaxAttemptsDefault), notifyEvery: cmp.Or(rc.FetchCooldown, river.FetchCooldownDefault)}, nil
}

// riverLogger keeps River's own chatter at warnings and above.
func riverLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelHandler{Handler: l.Handler(), min: slog.LevelWarn}).With("component", "river")
}

// levelHandler drops records below min.
type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelHandler{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{Handler: h.Handler.WithGroup(name), min: h.min}
}

// retryPolicy waits the given delays between attempts.
type retryPolicy []time.Duration

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	i := min(max(job.Attempt-1, 0), len(p)-1)
	return time.Now().Add(p[i])
}

// RecoverInterrupted makes jobs that were running when the process last
// died available again at once. It is only safe while no other process
// works this database, which the embedded server guarantees with a lock on
// its data directory.
func (q *Queue[TTx]) RecoverInterrupted(ctx context.Context) (int, error) {
	exec := q.exec
	stuck, err := exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{Max: 10_000, StuckHorizon: time.Now().Add(time.Hour)})
	if err != nil {
		return 0, fmt.Errorf("list interrupted jobs: %w", err)
	}
	if len(stuck) == 0 {
		return 0, nil
	}
	now := time.Now()
	params := &riverdriver.JobRescueManyParams{StuckHorizon: now.Add(time.Hour)}
	for _, j := range stuck {
		msg, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: j.Attempt, Error: "interrupted: the server stopped while this job ran"})
		if err != nil {
			return 0, fmt.Errorf("encode attempt error: %w", err)
		}
		params.ID = append(params.ID, j.ID)
		params.Error = append(params.Error, msg)
		params.FinalizedAt = append(params.FinalizedAt, nil)
		params.ScheduledAt = append(params.ScheduledAt, now)
		params.State = append(params.State, string(rivertype.JobStateAvailable))
	}
	if _, err := exec.JobRescueMany(ctx, params); err != nil {
		return 0, fmt.Errorf("recover interrupted jobs: %w", err)
	}
	return len(stuck), nil
}

// Start adds the workers and begins working jobs. Cancelling ctx does not
// stop them; call Stop. A queue made without Config.Work cannot start.
func (q *Queue[TTx]) Start(ctx context.Context, w Workers) error {
	if q.workers == nil {
		return errors.New("start river: this queue only inserts jobs")
	}
	w.Synthesize.promote = q.promote
	if err := river.AddWorkerSafely(q.workers, w.Synthesize); err != nil {
		return fmt.Errorf("add synthesize worker: %w", err)
	}
	if err := river.AddWorkerSafely(q.workers, w.DeleteMedia); err != nil {
		return fmt.Errorf("add media worker: %w", err)
	}
	if err := river.AddWorkerSafely(q.workers, w.Preview); err != nil {
		return fmt.Errorf("add preview worker: %w", err)
	}
	if err := river.AddWorkerSafely(q.workers, w.Webhook); err != nil {
		return fmt.Errorf("add webhook worker: %w", err)
	}
	if err := river.AddWorkerSafely(q.workers, w.Resynthesis); err != nil {
		return fmt.Errorf("add resynthesis worker: %w", err)
	}
	if w.FeedPing == nil {
		w.FeedPing = NewFeedPingWorker(nil, nil, FeedPingConfig{})
	}
	if err := river.AddWorkerSafely(q.workers, w.FeedPing); err != nil {
		return fmt.Errorf("add feed ping worker: %w", err)
	}
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start river: %w", err)
	}
	return nil
}

// Stop stops claiming jobs, gives running ones the soft-stop grace period,
// then cancels them; cancelled jobs are put back to run on the next start.
// Stopping a queue that did not start does nothing.
func (q *Queue[TTx]) Stop(ctx context.Context) error {
	if q.workers == nil {
		return nil
	}
	if err := q.client.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stop river: %w", err)
	}
	return nil
}

// RequestPreview enqueues a voice preview, outside any transaction: it
// follows no stored change. Requests for a preview whose job is still
// pending or done insert nothing.
func (q *Queue[TTx]) RequestPreview(ctx context.Context, job narrator.PreviewJob) error {
	args := PreviewArgs{Language: job.Language, Voice: job.Voice, Text: job.Text, Key: job.Key}
	if _, err := q.client.Insert(ctx, args, nil); err != nil {
		return fmt.Errorf("enqueue %s: %w", job.JobKind(), err)
	}
	return nil
}

// InsertTx enqueues job inside tx, the transaction of the change that
// needs it, through River's insert: every write but a group of creates
// enqueues its jobs so.
func (q *Queue[TTx]) InsertTx(ctx context.Context, tx TTx, job narrator.Job) error {
	args, opts, err := jobArgs(job)
	if err != nil || args == nil {
		return err
	}
	if _, err := q.client.InsertTx(ctx, tx, args, opts); err != nil {
		return fmt.Errorf("enqueue %s: %w", job.JobKind(), err)
	}
	return nil
}

// InsertManyTx enqueues jobs inside tx: the jobs of a group of creates on
// SQLite (on PostgreSQL, a group queues them with its other writes:
// QueueInsertMany). New synthesis jobs are written by the seam
// (insert.go); any other job goes through River's InsertManyFastTx, which
// returns nothing. None of the jobs it takes has uniqueness options, whose
// conflicts that kind of insert would fail on.
func (q *Queue[TTx]) InsertManyTx(ctx context.Context, tx TTx, jobs []narrator.Job) error {
	params := make([]river.InsertManyParams, 0, len(jobs))
	var syntheses []narrator.SynthesizeJob
	for _, job := range jobs {
		if j, ok := seamTakes(job); ok && q.db != nil {
			syntheses = append(syntheses, j)
			continue
		}
		args, opts, err := jobArgs(job)
		if err != nil {
			return err
		}
		if args != nil {
			params = append(params, river.InsertManyParams{Args: args, InsertOpts: opts})
		}
	}
	if len(syntheses) > 0 {
		if err := q.insertSynthesesSQLite(ctx, tx, syntheses); err != nil {
			return fmt.Errorf("enqueue %d syntheses: %w", len(syntheses), err)
		}
	}
	if len(params) == 0 {
		return nil
	}
	if _, err := q.client.InsertManyFastTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue %d jobs: %w", len(params), err)
	}
	return nil
}

// jobArgs is a job as River stores it, with its insert options (nil for
// the kind's own); nil args for a job with nothing to do. A synthesis job
// is scheduled at its fair round (fair.go).
func jobArgs(job narrator.Job) (river.JobArgs, *river.InsertOpts, error) {
	switch j := job.(type) {
	case narrator.SynthesizeJob:
		if !j.After.IsZero() {
			return SynthesizeArgs{AudioID: j.AudioID, Revision: j.Revision}, &river.InsertOpts{Priority: priorityStarted, ScheduledAt: j.After}, nil
		}
		return SynthesizeArgs{AudioID: j.AudioID, Revision: j.Revision}, &river.InsertOpts{ScheduledAt: roundTime(j.Round)}, nil
	case narrator.DeleteMediaJob:
		if len(j.Keys) == 0 {
			return nil, nil, nil
		}
		return DeleteMediaArgs{Keys: j.Keys}, nil, nil
	case narrator.WebhookJob:
		return WebhookArgs{DeliveryID: j.DeliveryID}, nil, nil
	case narrator.FeedPingJob:
		return FeedPingArgs{ProjectID: j.ProjectID, At: j.At.UTC()}, &river.InsertOpts{ScheduledAt: j.At}, nil
	default:
		return nil, nil, fmt.Errorf("enqueue: unknown job kind %q", job.JobKind())
	}
}
