package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/espeak"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mediaserve"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/web"
)

// Compile-time checks that the implementations fit their consumers.
var (
	_ httpapi.Store        = (*sqlite.Store)(nil)
	_ jobs.Store           = (*sqlite.Store)(nil)
	_ sqlite.JobInserter   = (*jobs.Queue[*sql.Tx])(nil)
	_ pipeline.MediaWriter = (*localfs.Store)(nil)
	_ jobs.MediaDeleter    = (*localfs.Store)(nil)
	_ mediaserve.Opener    = (*localfs.Store)(nil)
	_ jobs.Renderer        = (*pipeline.Pipeline)(nil)
	_ pipeline.RuleSource  = (*sqlite.Store)(nil)
	_ pipeline.Synthesizer = (*festival.Engine)(nil)
	_ pipeline.Synthesizer = (*flite.Engine)(nil)
	_ pipeline.Synthesizer = (*espeak.Engine)(nil)
	_ httpapi.Store        = purgingStore{}
	_ web.Store            = purgingStore{}
	_ web.VoicePreviewer   = (*pipeline.Pipeline)(nil)
)

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve", "serve [--data DIR] [--addr HOST:PORT] [--public-url URL]")
	finish := config.ServeFlags(fs, e.getenv)
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := finish()
	if err != nil {
		return usagef("serve: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return serve(ctx, cfg, logger, e)
}

// serve runs the server until ctx ends, then shuts it down in dependency
// order: HTTP, job claiming and running jobs, engines, the database.
func serve(ctx context.Context, cfg config.Config, logger *slog.Logger, e *env) error {
	if err := os.MkdirAll(cfg.ScratchDir(), 0o750); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	unlock, err := lockDataDir(cfg.LockPath())
	if err != nil {
		return err
	}
	defer unlock()
	// Scratch files of renderings interrupted by a crash are of no use.
	if err := os.RemoveAll(cfg.ScratchDir()); err != nil {
		return fmt.Errorf("clear scratch directory: %w", err)
	}
	if err := os.MkdirAll(cfg.ScratchDir(), 0o750); err != nil {
		return fmt.Errorf("create scratch directory: %w", err)
	}

	var queue *jobs.Queue[*sql.Tx]
	st, err := sqlite.Open(ctx, cfg.DBPath(), sqlite.Options{
		Jobs: func(db *sql.DB) (sqlite.JobInserter, error) {
			var err error
			queue, err = jobs.NewSQLite(db, jobs.Config{Logger: logger, Work: true, SynthesisWorkers: cfg.SynthesisJobs})
			return queue, err
		},
	})
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	if err := jobs.MigrateSQLite(ctx, st.DB()); err != nil {
		return err
	}
	media, err := localfs.New(cfg.MediaDir())
	if err != nil {
		return fmt.Errorf("open media directory: %w", err)
	}
	engines, closeEngines, err := startEngines(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeEngines()

	var cache *pipeline.UnitCache
	if cfg.CacheMB > 0 {
		if cache, err = pipeline.OpenUnitCache(cfg.CacheDir(), int64(cfg.CacheMB)<<20); err != nil {
			return err
		}
	}
	pipe := pipeline.New(pipeline.Config{
		Engines:    engines,
		Cache:      cache,
		Rules:      st,
		Media:      media,
		Workers:    cfg.UnitWorkers,
		ScratchDir: cfg.ScratchDir(),
		Logger:     logger,
	})
	purger := jobs.NewDeleteMediaWorker(media)
	if err := st.ReleaseSynthesisLeases(ctx); err != nil {
		return err
	}
	if n, err := queue.RecoverInterrupted(ctx); err != nil {
		return err
	} else if n > 0 {
		logger.Info("resumed jobs interrupted by the last stop", "jobs", n)
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	var ready atomic.Bool
	handler, err := routes(cfg, purgingStore{Store: st, purger: purger, logger: logger}, media, pipe, logger, &ready)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	if err := queue.Start(ctx, jobs.Workers{
		Synthesize:  jobs.NewSynthesizeWorker(st, pipe, media, jobs.SynthesizeConfig{Logger: logger}),
		DeleteMedia: purger,
	}); err != nil {
		srv.Close()
		return err
	}
	ready.Store(true)
	logger.Info("narrator is serving", "addr", ln.Addr().String(), "public_url", cfg.PublicURL, "data", cfg.DataDir)

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		logger.Error("http server stopped", "err", err)
	}
	ready.Store(false)
	logger.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		logger.Warn("http shutdown", "err", err)
	}
	if err := queue.Stop(shutCtx); err != nil {
		logger.Warn("job queue shutdown", "err", err)
	}
	logger.Info("stopped")
	return nil
}

// routes mounts the API, the media, the health check and the dashboard.
func routes(cfg config.Config, st purgingStore, media *localfs.Store, pipe *pipeline.Pipeline, logger *slog.Logger, ready *atomic.Bool) (http.Handler, error) {
	mux := http.NewServeMux()
	api := httpapi.NewServer(httpapi.Deps{
		Store:  st,
		Logger: logger,
		MediaURL: func(key string) string {
			return cfg.PublicURL + "/media/" + key
		},
	})
	mux.Handle("/api/", api)
	mux.Handle("/media/", http.StripPrefix("/media/", mediaserve.New(media, logger)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, `{"status":"starting"}`)
			return
		}
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
	dash, err := newDashboard(cfg, st, pipe, logger, api)
	if err != nil {
		return nil, err
	}
	mux.Handle("/", dash) // the dashboard; unknown paths answer a 404 page, or the API's JSON 404 to non-browsers
	return mux, nil
}

// purgingStore is the store as the API and the dashboard use it: deleting
// an audio also removes its media files at once, so that its URLs answer
// 404 as soon as the delete does. The deletion job queued with the delete
// stays, and finishes the work if the process dies in between.
type purgingStore struct {
	*sqlite.Store
	purger *jobs.DeleteMediaWorker
	logger *slog.Logger
}

// DeleteAudio deletes an audio, then its media files.
func (s purgingStore) DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	a, err := s.Store.DeleteAudio(ctx, projectID, ref)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, m := range a.Media {
		if m.Key != "" {
			keys = append(keys, m.Key)
		}
	}
	if err := s.purger.Purge(ctx, keys); err != nil {
		s.logger.Warn("delete media now; the queued job will retry", "audio_id", a.ID, "err", err)
	}
	return a, nil
}

// startEngines starts the speech engines the voice catalog uses.
func startEngines(ctx context.Context, cfg config.Config, logger *slog.Logger) (map[string]pipeline.Synthesizer, func(), error) {
	engines := map[string]pipeline.Synthesizer{}
	var closers []func() error
	closeAll := func() {
		for _, c := range closers {
			if err := c(); err != nil {
				logger.Warn("close engine", "err", err)
			}
		}
	}
	needed := map[string]bool{}
	for _, v := range narrator.Voices() {
		needed[v.Engine] = true
	}
	for name := range needed {
		var (
			eng interface {
				pipeline.Synthesizer
				Close() error
			}
			err error
		)
		switch name {
		case "festival":
			eng, err = startFestival(ctx, cfg, logger)
		case "flite":
			eng, err = flite.New(flite.Options{Procs: cfg.UnitWorkers, Logger: logger, TempDir: cfg.ScratchDir()})
		case "espeak":
			eng, err = espeak.New(espeak.Options{Procs: cfg.UnitWorkers, Logger: logger})
		default:
			err = fmt.Errorf("the voice catalog names engine %q, which this build does not have", name)
		}
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("start engine %s (is its Debian package installed?): %w", name, err)
		}
		engines[name] = eng
		closers = append(closers, eng.Close)
	}
	return engines, closeAll, nil
}

// startFestival starts festival's pool with the default English voice
// loaded in every process, so that the first audio does not pay festival's
// start-up, the costliest of the engines.
func startFestival(ctx context.Context, cfg config.Config, logger *slog.Logger) (*festival.Engine, error) {
	f, err := festival.New(festival.Options{Procs: cfg.UnitWorkers, Logger: logger, TempDir: cfg.ScratchDir()})
	if err != nil {
		return nil, err
	}
	if _, body, _ := narrator.DefaultVoices("en_US"); body.Engine == narrator.EngineFestival {
		if err := f.Start(ctx, body.EngineVoice); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// lockDataDir takes an exclusive lock on the data directory, so that two
// servers never work the same database and media. The lock dies with the
// process, even on kill -9.
func lockDataDir(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another narrator serve is already using %s", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
