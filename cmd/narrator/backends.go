package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/accesslog"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/espeak"
	"github.com/narrator/narrator/internal/feed"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/listens"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mediaserve"
	"github.com/narrator/narrator/internal/mediasweep"
	"github.com/narrator/narrator/internal/metrics"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/player"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/s3"
	"github.com/narrator/narrator/internal/source"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/standin"
	"github.com/narrator/narrator/internal/web"
	"github.com/narrator/narrator/internal/webhook"
)

// dataStore is what the commands need from a store. Both stores have it.
type dataStore interface {
	httpapi.Store
	web.Store
	player.Store
	listens.Store
	feed.Store
	source.Store
	jobs.Store
	jobs.WebhookStore
	jobs.ResynthesisStore
	pipeline.RuleSource
	pipeline.ClipSource
	copyStore
	voiceStore
	mediaserve.AccessFinder
	CreateAccount(ctx context.Context, a *narrator.Account) error
	CreateUser(ctx context.Context, u *narrator.User) error
	SetUserPassword(ctx context.Context, userID int64, passwordHash []byte) error
	ReleaseSynthesisLeases(ctx context.Context) error
	Ping(ctx context.Context) error
	Close() error
}

// jobQueue is a River queue of either driver.
type jobQueue interface {
	Start(ctx context.Context, w jobs.Workers) error
	Stop(ctx context.Context) error
	RecoverInterrupted(ctx context.Context) (int, error)
	web.PreviewRequester
	httpapi.QueuePositioner
	httpapi.ResynthesisQueue
	metrics.JobCounter
}

// mediaStore is what the commands need from a media store.
type mediaStore interface {
	pipeline.MediaWriter
	jobs.MediaDeleter
	mediaserve.Opener
	mediasweep.Media
	Ping(ctx context.Context) error
}

// Compile-time checks that the implementations fit their consumers.
var (
	_ dataStore                = (*sqlite.Store)(nil)
	_ dataStore                = (*postgres.Store)(nil)
	_ mediasweep.Owners        = dataStore(nil)
	_ postgres.JobInserter     = (*jobs.Queue[pgx.Tx])(nil)
	_ jobQueue                 = (*jobs.Queue[pgx.Tx])(nil)
	_ sqlite.JobInserter       = (*jobs.Queue[*sql.Tx])(nil)
	_ jobQueue                 = (*jobs.Queue[*sql.Tx])(nil)
	_ mediaStore               = (*localfs.Store)(nil)
	_ mediaStore               = (*s3.Store)(nil)
	_ copyMedia                = mediaStore(nil)
	_ jobs.Renderer            = (*pipeline.Pipeline)(nil)
	_ jobs.VoicePreviewer      = (*pipeline.Pipeline)(nil)
	_ jobs.WebhookSender       = (*webhook.Client)(nil)
	_ httpapi.Store            = purgingStore{}
	_ web.Store                = purgingStore{}
	_ feed.Store               = purgingStore{}
	_ player.Store             = purgingStore{}
	_ pipeline.MediaWriter     = mediaStore(nil)
	_ httpapi.MediaOpener      = mediaStore(nil)
	_ pipeline.WordSynthesizer = (*festival.Engine)(nil)
	_ pipeline.WordSynthesizer = (*flite.Engine)(nil)
	_ pinger                   = (*festival.Engine)(nil)
	_ pinger                   = (*flite.Engine)(nil)
	_ pinger                   = (*espeak.Engine)(nil)
	_ pinger                   = (*standin.Engine)(nil)
	_ proc.Recorder            = (*metrics.EngineRecorder)(nil)
	_ accesslog.Observer       = (*metrics.Metrics)(nil)
	_ jobs.Recorder            = (*metrics.Metrics)(nil)
	_ jobs.SynthesisRecorder   = (*metrics.Metrics)(nil)
	_ jobs.WebhookRecorder     = (*metrics.Metrics)(nil)
	_ postgres.GroupRecorder   = (*metrics.Metrics)(nil)
)

// backends are a command's open store, job queue and media store.
type backends struct {
	store dataStore
	queue jobQueue
	media mediaStore
	// embedded is true when the database is SQLite, which one server owns
	// alone: it may then recover its own interrupted jobs at start.
	embedded bool
}

// openBackends opens the database (migrating it and River's tables) with a
// job queue that works jobs if jc.Work, and the media store.
// Webhook deliveries written by its store get bodies from body. Its store
// keeps accounts to limits (none for the zero Limits), and pings the WebSub
// hubs of changed podcast feeds if feedPings.
func openBackends(ctx context.Context, b config.Backends, jc jobs.Config, body narrator.EventBodyFunc, limits narrator.Limits, feedPings bool, getenv func(string) string) (_ *backends, err error) {
	out := &backends{}
	kind, target, err := config.ParseDatabase(b.Database)
	if err != nil {
		return nil, usagef("--database: %v", err)
	}
	switch kind {
	case config.SQLite:
		out.embedded = true
		out.store, out.queue, err = openSQLite(ctx, target, jc, body, limits, feedPings)
	case config.Postgres:
		out.store, out.queue, err = openPostgres(ctx, target, jc, body, limits, feedPings)
	default:
		err = usagef("--database: %s databases are not supported by this build", kind)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			out.store.Close()
		}
	}()
	if out.media, err = openMedia(ctx, b.Media, getenv); err != nil {
		return nil, err
	}
	return out, nil
}

// openSQLite opens and migrates a SQLite database with its queue: the
// database's pools, River's queue on its writer, then the store; River's
// tables, then the store's, whose Migrate prepares the queue's statements.
func openSQLite(ctx context.Context, path string, jc jobs.Config, body narrator.EventBodyFunc, limits narrator.Limits, feedPings bool) (*sqlite.Store, *jobs.Queue[*sql.Tx], error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, nil, fmt.Errorf("create database directory: %w", err)
	}
	db, err := sqlite.OpenDB(ctx, path, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	q, err := jobs.NewSQLite(db.Writer(), jc)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open job queue: %w", err)
	}
	st := sqlite.New(db, sqlite.Options{Jobs: q, EventBody: body, Limits: limits, FeedPings: feedPings})
	if err := jobs.MigrateSQLite(ctx, st.DB()); err != nil {
		st.Close()
		return nil, nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("migrate database: %w", err)
	}
	return st, q, nil
}

// openPostgres opens and migrates a PostgreSQL database with its queue:
// the pool, River's queue on it, then the store. Several nodes may do so
// at once: migrations take an advisory lock.
func openPostgres(ctx context.Context, url string, jc jobs.Config, body narrator.EventBodyFunc, limits narrator.Limits, feedPings bool) (*postgres.Store, *jobs.Queue[pgx.Tx], error) {
	pool, err := postgres.OpenPool(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	q, err := jobs.NewPostgres(pool, jc)
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("open job queue: %w", err)
	}
	// The node's metrics, if it has any, record its groups of creates.
	groups, _ := jc.Metrics.(postgres.GroupRecorder)
	st := postgres.New(pool, postgres.Options{Jobs: q, EventBody: body, Limits: limits, Groups: groups, FeedPings: feedPings})
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("migrate database: %w", err)
	}
	if err := jobs.MigratePostgres(ctx, st.Pool()); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, q, nil
}

// openMedia opens the media store a --media setting names.
func openMedia(ctx context.Context, setting string, getenv func(string) string) (mediaStore, error) {
	kind, target, err := config.ParseMedia(setting)
	if err != nil {
		return nil, usagef("--media: %v", err)
	}
	switch kind {
	case config.File:
		m, err := localfs.New(target)
		if err != nil {
			return nil, fmt.Errorf("open media directory: %w", err)
		}
		return m, nil
	case config.S3:
		opts, err := s3.ParseURL(target, getenv)
		if err != nil {
			return nil, usagef("--media: %v", err)
		}
		m, err := s3.New(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("open media bucket: %w", err)
		}
		return m, nil
	default:
		return nil, usagef("--media: %s media are not supported by this build", kind)
	}
}

// cliEventBody renders the webhook deliveries that command-line tools
// write (tests of endpoints), with media URLs as a server started with the
// same environment makes them.
func cliEventBody(getenv func(string) string) narrator.EventBodyFunc {
	return httpapi.EventBody(config.MediaURLFromEnv(getenv))
}

// openStore opens the data a command-line tool works on. Its jobs (a
// resynthesis) are only inserted, for a server to work.
func openStore(ctx context.Context, e *env, finish func() (config.Backends, error)) (dataStore, error) {
	bk, err := openCLIBackends(ctx, e, finish)
	if err != nil {
		return nil, err
	}
	return bk.store, nil
}

// openCLIBackends opens the backends as openStore does, for a command
// that also inserts jobs outside a store's write.
func openCLIBackends(ctx context.Context, e *env, finish func() (config.Backends, error)) (*backends, error) {
	b, err := finish()
	if err != nil {
		return nil, usagef("%v", err)
	}
	return openBackends(ctx, b, jobs.Config{Logger: slog.New(slog.DiscardHandler)}, cliEventBody(e.getenv), narrator.Limits{},
		e.getenv(config.EnvWebSubHub) != "", e.getenv)
}
