package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/accesslog"
	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/clientlimit"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/espeak"
	"github.com/narrator/narrator/internal/extract"
	"github.com/narrator/narrator/internal/feed"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/source"
	// Aliased: the end-to-end tests of this package have a func fetch.
	fetcher "github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/health"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/listens"
	"github.com/narrator/narrator/internal/logbuf"
	"github.com/narrator/narrator/internal/mediaserve"
	"github.com/narrator/narrator/internal/mediasweep"
	"github.com/narrator/narrator/internal/metrics"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/ratelimit"
	"github.com/narrator/narrator/internal/speak"
	"github.com/narrator/narrator/internal/standin"
	"github.com/narrator/narrator/internal/voicecat"
	"github.com/narrator/narrator/internal/webhook"
)

// serveCommand is `narrator serve`.
type serveCommand struct{ e *env }

// Run runs `narrator serve`.
func (cmd serveCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "serve", "serve [--data DIR] [--database URL] [--media URL] [--role all|api|worker] [--addr HOST:PORT] [--public-url URL]")
	finish := config.ServeFlags(fs, e.getenv)
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := finish()
	if err != nil {
		return usagef("serve: %v", err)
	}
	setMemoryLimit(cfg.MemoryLimitMB, e.getenv)
	// Lines are written out in batches (logbuf): an access line per
	// request, each written alone, cost a tenth of a GET.
	out := logbuf.New(e.stderr, logFlushInterval)
	defer out.Close()
	logger := newLogger(out, cfg.LogFormat)
	srv, err := openServer(ctx, cfg, logger, e.getenv)
	if err != nil {
		return err
	}
	runErr := srv.run(ctx)
	return errors.Join(runErr, srv.close(ctx))
}

// setMemoryLimit sets the Go runtime's soft memory limit to mb MiB, unless
// it is 0 or GOMEMLIMIT, which the runtime reads itself, is set.
func setMemoryLimit(mb int, getenv func(string) string) {
	if mb > 0 && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(mb) << 20)
	}
}

// importTimeout bounds reading a page to import, robots.txt and redirects
// included: the import request waits for it.
const importTimeout = 20 * time.Second

// logFlushInterval is how long a log line of serve may wait to be written
// out; lines at Warn and above never wait.
const logFlushInterval = 100 * time.Millisecond

// server is one node: by role, the HTTP server (API, dashboard, media), the
// job workers with their speech engines, or both.
type server struct {
	cfg    config.Config
	logger *slog.Logger

	unlock   func()
	backends *backends
	engines  func()             // closes the engines; nil when the node works no jobs
	pipe     *pipeline.Pipeline // nil when the node works no jobs
	started  bool               // the queue works jobs

	// sandbox runs the engines, and lame where it decodes uploaded
	// intros and outros; nil when off.
	sandbox *proc.Sandbox

	// rules keeps compiled pronunciation rules for the pipeline and the
	// dashboard alike.
	rules *speak.RuleCache
	// voices is the voice catalog of the API, the dashboard and the
	// pipeline alike.
	voices *voicecat.Source

	ln    *clientlimit.Listener
	http  *http.Server
	ready atomic.Bool
	// overflowHTTP serves the connections past the caps of ln: the health
	// checks, and a quick refusal of the rest.
	overflowHTTP *http.Server

	// self is this node as the guarded fetchers of sources and pages know
	// it: its listeners' addresses, and the marker on its answers, so
	// that Narrator never reads itself.
	self *fetcher.Self

	// sources reads rss projects' sources: when due on nodes that work jobs
	// (stopSources ends that), and when asked through the API everywhere.
	sources     *source.Poller
	stopSources func()
	// stopSweep ends the sweep of orphaned media, on nodes that work jobs.
	stopSweep func()

	metrics      *metrics.Metrics
	engineChecks []health.Check // the engines' readiness; none when the node works no jobs
	metricsLn    net.Listener   // with metricsHTTP, /metrics on --metrics-addr; nil without it
	metricsHTTP  *http.Server
	// listens counts the player's listening events and writes them once
	// a second; nil when the node serves no HTTP.
	listens *listens.Counter
}

// openServer opens everything a node needs and listens on cfg.Addr, but
// serves nothing yet: run does. On error, what was opened is closed.
func openServer(ctx context.Context, cfg config.Config, logger *slog.Logger, getenv func(string) string) (_ *server, err error) {
	s := &server{cfg: cfg, logger: logger, metrics: metrics.New(), rules: speak.NewRuleCache(0), self: fetcher.NewSelf(cfg.PublicURL)}
	defer func() {
		if err != nil {
			s.close(ctx)
		}
	}()
	if err := s.openData(ctx, getenv); err != nil {
		return nil, err
	}
	// Feeds are fetched through the guarded client and their article
	// pages read as imports are, private addresses allowed as for webhooks
	// (--webhooks-allow-private); neither reads the server itself.
	s.sources = source.New(s.backends.store, source.Options{
		Client:   fetcher.New(fetcher.Options{AllowPrivate: cfg.WebhooksAllowPrivate, Logger: logger, Self: s.self}),
		Pages:    extract.NewReader(fetcher.New(fetcher.Options{AllowPrivate: cfg.WebhooksAllowPrivate, Timeout: importTimeout, Logger: logger, Self: s.self})),
		MaxAudio: cfg.MaxAudioDuration,
		Recorder: s.metrics,
		Logger:   logger,
		// Hubs push to the public URL; routes serves it.
		CallbackURL: func(id int64, nonce string) string {
			return cfg.PublicURL + "/websub/" + strconv.FormatInt(id, 10) + "/" + nonce // base64url: safe in a path
		},
	})
	if err := s.startWork(ctx); err != nil {
		return nil, err
	}
	handler, err := s.routes()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	s.self.Listening(ln.Addr())
	proxies, err := cfg.TrustedProxyPrefixes()
	if err != nil {
		ln.Close()
		return nil, err
	}
	// Accept never waits: a connection past the caps is handed to the
	// overflow server, which answers the health checks and refuses the
	// rest, or closed at once when that is full too.
	s.ln = clientlimit.NewListener(ln, clientlimit.ListenerOptions{
		Max:       cfg.MaxConnections,
		PerClient: cfg.MaxConnectionsPerClient,
		Exempt:    clientip.New(proxies).Trusted,
		Spare:     overflowSpare,
	})
	s.overflowHTTP = &http.Server{
		Handler: s.self.Mark(s.overflow()),
		// A connection past the caps gets half a second for its request
		// and one for the answer, and is closed after it: a health check
		// sends its request at once.
		ReadHeaderTimeout: overflowRead,
		ReadTimeout:       overflowRead,
		WriteTimeout:      time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	s.overflowHTTP.SetKeepAlivesEnabled(false)
	if err := s.listenMetrics(); err != nil {
		return nil, err
	}
	s.http = &http.Server{
		Handler: handler,
		// A client must send its headers within ReadHeaderTimeout and its
		// body within ReadTimeout; an idle keep-alive connection is closed
		// after IdleTimeout. WriteTimeout stays zero, as it would bound a
		// whole response, long media downloads included: media bound each
		// write instead (mediaserve.Options.WriteTimeout).
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       readTimeout,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// openData takes the node's data directory and opens the backends.
func (s *server) openData(ctx context.Context, getenv func(string) string) error {
	cfg := s.cfg
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	unlock, err := lockFile(cfg.LockPath())
	if err != nil {
		return err
	}
	s.unlock = unlock
	if err := prepareScratch(cfg.ScratchDir(), s.logger); err != nil {
		return err
	}
	s.backends, err = openBackends(ctx, cfg.Backends, jobs.Config{
		Logger:           s.logger,
		Work:             cfg.Works(),
		SynthesisWorkers: cfg.SynthesisJobs,
		RescueAfter:      cfg.RescueAfter,
		Metrics:          s.metrics,
	}, httpapi.EventBody(cfg.MediaURL), narrator.Limits{
		MaxQueued:     cfg.MaxQueuedPerAccount,
		MaxMediaBytes: cfg.MaxMediaMBPerAccount << 20,
		MaxSources:    cfg.MaxSourcesPerAccount,
	}, cfg.WebSubHub != "", getenv)
	if err != nil {
		return err
	}
	s.metrics.WatchQueue(s.backends.queue)
	s.voices = voicecat.New(s.backends.store, 0, s.logger)
	if kind, path, _ := config.ParseDatabase(cfg.Database); kind == config.SQLite {
		// One server per SQLite database, wherever its data directory is.
		unlockDB, err := lockFile(path + ".lock")
		if err != nil {
			return err
		}
		unlockData := s.unlock
		s.unlock = func() { unlockDB(); unlockData() }
	}
	return nil
}

// scratchMark is the file that marks a scratch directory as Narrator's.
const scratchMark = ".narrator-scratch"

// prepareScratch makes dir ready for scratch files. Files of renderings
// interrupted by a crash are of no use, so a directory Narrator made, and
// marked, is emptied; a directory of that name that it did not make
// (--data / would make it /tmp, and installs from before the mark have
// one too) is used as it is, and nothing in it is removed.
func prepareScratch(dir string, logger *slog.Logger) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("scratch directory: %w", err)
	case !fi.IsDir() && fi.Mode()&os.ModeSymlink == 0:
		return fmt.Errorf("scratch directory %s is not a directory", dir)
	default:
		// A link is never emptied: what it points to is not Narrator's.
		if _, err := os.Lstat(filepath.Join(dir, scratchMark)); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			logger.Warn("the scratch directory was not made by narrator, so files left in it by a crash are not removed; remove it while narrator is stopped to have it made anew",
				"dir", dir)
			return nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("clear scratch directory: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create scratch directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, scratchMark), []byte("Made by narrator serve, which empties this directory when it starts.\n"), 0o640); err != nil {
		return fmt.Errorf("mark scratch directory: %w", err)
	}
	return nil
}

// startWork starts the workers on a node that works jobs. On one that
// only serves, it opens the sandbox in which lame decodes the intros and
// outros the API takes.
func (s *server) startWork(ctx context.Context) error {
	if s.cfg.Works() {
		return s.startWorkers(ctx)
	}
	if !s.cfg.Serves() {
		return nil
	}
	sb, err := engineSandbox(ctx, s.cfg.Sandbox, s.cfg.Backends, s.logger)
	s.sandbox = sb
	return err
}

// startWorkers starts the speech engines and the job workers. On SQLite,
// which this server owns alone, it first takes over the jobs that the last
// process left running; in a cluster River's rescuer does that.
func (s *server) startWorkers(ctx context.Context) error {
	cfg, b := s.cfg, s.backends
	sb, err := engineSandbox(ctx, cfg.Sandbox, cfg.Backends, s.logger)
	if err != nil {
		return err
	}
	s.sandbox = sb
	engines, closeEngines, err := startEngines(ctx, cfg, sb, s.logger, s.metrics)
	if err != nil {
		return err
	}
	if err := startNeural(cfg, sb, s.voices, b.media, s.logger, s.metrics, engines, &closeEngines); err != nil {
		closeEngines()
		return err
	}
	s.engines = closeEngines
	s.engineChecks = engineChecks(engines)
	var cache *pipeline.UnitCache
	if cfg.CacheMB > 0 {
		if cache, err = pipeline.OpenUnitCache(cfg.CacheDir(), int64(cfg.CacheMB)<<20); err != nil {
			return err
		}
	}
	pc := pipeline.Config{
		Engines:     engines,
		Voices:      s.voices,
		Cache:       cache,
		Rules:       b.store,
		Clips:       b.store,
		RuleCache:   s.rules,
		Media:       b.media,
		Workers:     cfg.UnitWorkers,
		ScratchDir:  cfg.ScratchDir(),
		Logger:      s.logger,
		Sandbox:     sb,
		MaxDuration: cfg.MaxAudioDuration,
	}
	s.pipe = pipeline.New(pc)
	if b.embedded {
		if err := b.store.ReleaseSynthesisLeases(ctx); err != nil {
			return err
		}
		s.sweepIdle(ctx)
		if n, err := b.queue.RecoverInterrupted(ctx); err != nil {
			return err
		} else if n > 0 {
			s.logger.Info("resumed jobs interrupted by the last stop", "jobs", n)
		}
	}
	if cfg.WebhooksAllowPrivate {
		s.logger.Warn("webhook deliveries and page imports may reach loopback and private addresses (--webhooks-allow-private)")
	}
	host, _ := os.Hostname()
	if err := b.queue.Start(ctx, jobs.Workers{
		Synthesize: jobs.NewSynthesizeWorker(b.store, s.pipe, b.media, jobs.SynthesizeConfig{
			Logger:      s.logger,
			Node:        fmt.Sprintf("%s:%d", host, os.Getpid()),
			RescueAfter: cfg.RescueAfter,
			Metrics:     s.metrics,
		}),
		DeleteMedia: jobs.NewDeleteMediaWorker(b.media),
		Preview:     jobs.NewPreviewWorker(s.pipe, b.media),
		Webhook: jobs.NewWebhookWorker(b.store,
			webhook.New(webhook.Options{AllowPrivate: cfg.WebhooksAllowPrivate, Logger: s.logger}),
			jobs.WebhookConfig{Logger: s.logger, Metrics: s.metrics}),
		Resynthesis: jobs.NewResynthesisWorker(b.store, s.logger),
		FeedPing: jobs.NewFeedPingWorker(b.store,
			feed.NewPinger(fetcher.New(fetcher.Options{AllowPrivate: cfg.WebhooksAllowPrivate, Logger: s.logger, Self: s.self})),
			jobs.FeedPingConfig{Hub: cfg.WebSubHub, PublicURL: cfg.PublicURL, Logger: s.logger}),
	}); err != nil {
		return err
	}
	s.started = true
	return nil
}

// idleSweepTimeout bounds the sweep of orphaned media at the start of a
// server on SQLite; what it leaves is swept later, an hour after it was
// written.
const idleSweepTimeout = time.Minute

// sweepIdle deletes, at once, the folders of media that renderings of
// the last process left and no audio owns: on SQLite, which this server
// owns alone, before its jobs start, no rendering can be writing them. A
// failure is logged: the periodic sweep tries again.
func (s *server) sweepIdle(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, idleSweepTimeout)
	defer cancel()
	sw := mediasweep.New(mediasweep.Config{Media: s.backends.media, Owners: s.backends.store, Logger: s.logger})
	if _, err := sw.Sweep(ctx, narrator.MediaOrphanCutoff(time.Now(), true)); err != nil {
		s.logger.Warn("sweep media left by the last process", "err", err)
	}
}

// run serves until ctx ends or the HTTP server fails; a failure is returned.
func (s *server) run(ctx context.Context) error {
	serveErr := make(chan error, 3) // one per server, so that none waits to send
	go func() { serveErr <- s.http.Serve(s.ln) }()
	go func() { serveErr <- s.overflowHTTP.Serve(s.ln.Overflow()) }()
	if s.metricsHTTP != nil {
		go func() { serveErr <- s.metricsHTTP.Serve(s.metricsLn) }()
	}
	if s.cfg.Works() {
		feedCtx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.sources.Run(feedCtx)
		}()
		s.stopSources = func() { cancel(); wg.Wait() }

		sweepCtx, cancelSweep := context.WithCancel(ctx)
		sw := mediasweep.New(mediasweep.Config{Media: s.backends.media, Owners: s.backends.store, Logger: s.logger})
		var sweeping sync.WaitGroup
		sweeping.Go(func() { sw.Run(sweepCtx) })
		s.stopSweep = func() { cancelSweep(); sweeping.Wait() }
	}
	s.ready.Store(true)
	s.logger.Info("narrator is serving", "version", readBuildInfo().String(), "role", s.cfg.Role, "addr", s.ln.Addr().String(),
		"public_url", s.cfg.PublicURL, "data", s.cfg.DataDir,
		"max_connections", s.cfg.MaxConnections, "max_connections_per_client", s.cfg.MaxConnectionsPerClient)
	select {
	case <-ctx.Done():
		return nil
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	}
}

// close shuts the node down in dependency order: HTTP, job claiming and
// running jobs, engines, the database, the lock. It is safe on a server
// that opened only in part.
func (s *server) close(ctx context.Context) error {
	s.ready.Store(false)
	s.logger.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []error
	if s.http != nil {
		if err := s.http.Shutdown(shutCtx); err != nil {
			errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		}
	} else if s.ln != nil {
		s.ln.Close()
	}
	if s.overflowHTTP != nil {
		if err := s.overflowHTTP.Shutdown(shutCtx); err != nil {
			errs = append(errs, fmt.Errorf("overflow http shutdown: %w", err))
		}
	}
	if s.metricsHTTP != nil {
		if err := s.metricsHTTP.Shutdown(shutCtx); err != nil {
			errs = append(errs, fmt.Errorf("metrics http shutdown: %w", err))
		}
	} else if s.metricsLn != nil {
		s.metricsLn.Close()
	}
	if s.stopSources != nil {
		s.stopSources() // a read in progress records what it did
	}
	if s.stopSweep != nil {
		s.stopSweep()
	}
	if s.listens != nil {
		s.listens.Close() // the last counts, before the database closes
	}
	if s.started {
		if err := s.backends.queue.Stop(shutCtx); err != nil {
			errs = append(errs, fmt.Errorf("job queue shutdown: %w", err))
		}
	}
	if s.pipe != nil {
		if err := s.pipe.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stop lame workers: %w", err))
		}
	}
	if s.engines != nil {
		s.engines()
	}
	if s.backends != nil {
		if err := s.backends.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close database: %w", err))
		}
	}
	if s.unlock != nil {
		s.unlock()
	}
	s.logger.Info("stopped")
	return errors.Join(errs...)
}

// routes returns the node's HTTP handler: the API, the media, the podcast
// feeds, the health checks, the metrics and the dashboard on nodes that
// serve; only the health checks and the metrics on worker nodes. Every
// request goes through the access log.
func (s *server) routes() (http.Handler, error) {
	proxies, err := s.cfg.TrustedProxyPrefixes()
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	limited := clientlimit.Requests(clientlimit.RequestOptions{
		Clients:     clientip.New(proxies),
		PerClient:   s.cfg.MaxConnectionsPerClient,
		Exempt:      isHealthCheck,
		MinRate:     s.cfg.MinTransferRate,
		BodyTimeout: readTimeout,
		WriteError:  httpapi.WriteError,
	})(mux)
	// Every answer carries the marker by which this server's fetchers
	// know it (fetch.Self).
	handler := s.self.Mark(accesslog.Middleware(accesslog.Options{
		Logger: s.logger, Observer: s.metrics, SecretPrefixes: []string{"/feeds/"},
	})(limited))
	mux.Handle("GET /readyz", s.readiness())
	if s.cfg.MetricsAddr == "" {
		mux.Handle("GET /metrics", loopbackOnly(s.metrics.Handler(s.logger)))
	}
	mux.HandleFunc("GET /healthz", s.healthz)
	if !s.cfg.Serves() {
		return handler, nil
	}
	st := purgingStore{dataStore: s.backends.store, purge: jobs.NewPurgeOnDelete(s.backends.store, s.backends.media, s.logger)}
	// Imports read pages through the guarded client, private addresses
	// allowed as for webhooks (--webhooks-allow-private).
	pages := extract.NewReader(fetcher.New(fetcher.Options{AllowPrivate: s.cfg.WebhooksAllowPrivate, Timeout: importTimeout, Logger: s.logger, Self: s.self}))
	// The API and the dashboard count webhook tests and resends together.
	triggers := ratelimit.New(nil)
	clips := pipeline.ClipDecoder{Sandbox: s.sandbox}
	api := httpapi.NewServer(httpapi.Deps{Store: st, Logger: s.logger, MediaURL: s.cfg.MediaURL, Media: s.backends.media, Queue: s.backends.queue,
		Resynthesis: s.backends.queue,
		Voices:      s.voices, MaxAudioDuration: s.cfg.MaxAudioDuration, Pages: pages, WebhookTriggers: triggers, Sources: s.sources,
		Speaker: s.speaker(), Clips: clips, ClipSpeaker: s.clipSpeaker(), WebSubHub: s.cfg.WebSubHub,
		FeedURL: func(token string) string { return s.cfg.PublicURL + narrator.FeedPath(token) },
		Artwork: artworkChecker{fetcher.New(fetcher.Options{AllowPrivate: s.cfg.WebhooksAllowPrivate, Logger: s.logger})}})
	mux.Handle("/api/", api)
	mux.Handle("/v1/", api) // the OpenAI speech convention
	mux.Handle("/media/", http.StripPrefix("/media/", mediaserve.New(s.backends.media, mediaserve.Options{Logger: s.logger, MinRate: s.cfg.MinTransferRate,
		Access: s.backends.store})))
	s.listens = listens.New(listens.Config{Store: s.backends.store, Logger: s.logger})
	embed, err := newEmbed(s.cfg, st, s.listens, s.logger)
	if err != nil {
		return nil, err
	}
	mux.Handle("GET /embed.js", embed)
	mux.Handle("/embed/", embed) // the only pages other sites may frame
	// WebSub hubs verify and push at /websub/{source_id}/{nonce}. Any other
	// path under /websub/, or none after the ID as callbacks were before
	// the nonce, reaches Callback too, for the same refusal as a wrong one.
	mux.HandleFunc("/websub/{source_id}/{nonce...}", s.sources.Callback)
	mux.HandleFunc("/websub/{source_id}", s.sources.Callback)
	mux.Handle("/feeds/{name}", feed.New(feed.Config{Store: st, MediaURL: s.cfg.MediaURL, PublicURL: s.cfg.PublicURL, Hub: s.cfg.WebSubHub, Logger: s.logger}))
	dash, err := newDashboard(s.cfg, st, s.backends, s.voices, s.rules, triggers, s.logger, api, pages, s.sources, dashClips{clips, s.clipSpeaker()})
	if err != nil {
		return nil, err
	}
	mux.Handle("/", dash) // the dashboard; unknown paths answer a 404 page, or the API's JSON 404 to non-browsers
	return handler, nil
}

// speaker returns the pipeline that speaks the OpenAI speech convention's
// requests, or nil on a node that does not synthesise.
func (s *server) speaker() httpapi.Speaker {
	if s.pipe == nil {
		return nil
	}
	return s.pipe
}

// clipSpeaker returns the pipeline that speaks the intros and outros set
// as a text, or nil on a node that does not synthesise.
func (s *server) clipSpeaker() httpapi.ClipSpeaker {
	if s.pipe == nil {
		return nil
	}
	return s.pipe
}

// readTimeout bounds the time a request, headers and body, may take to
// arrive, whatever its rate.
const readTimeout = 2 * time.Minute

// overflowSpare is how many connections past --max-connections, or past
// a client's share, may wait at once for the overflow server's quick
// answer, a quarter of them from one client; the overflow server holds
// each for at most overflowRead and a second.
const overflowSpare = 256

// overflowRead is how long the overflow server waits for a request.
const overflowRead = 500 * time.Millisecond

// loopbackOnly serves h only to a client on this machine: a loopback peer
// whose request no proxy forwarded (a proxy on this machine adds
// X-Forwarded-For or Forwarded); anyone else gets the API's 404.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip, err := netip.ParseAddr(clientip.Host(r.RemoteAddr))
		if err != nil || !ip.Unmap().IsLoopback() || r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" {
			httpapi.WriteError(w, narrator.Errorf(narrator.ENOTFOUND, "Not found"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isHealthCheck reports whether r asks for a health check, which the
// per-client limits never refuse.
func isHealthCheck(r *http.Request) bool {
	return r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
}

// healthz is /healthz: the node is up and serving.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !s.ready.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, `{"status":"starting"}`)
		return
	}
	fmt.Fprintf(w, "{\"status\":\"ok\",\"role\":%q}\n", s.cfg.Role)
}

// overflow is the handler of the connections past the caps: /healthz
// answers as usual, so that a load balancer still sees the node up, and
// every other request is refused at once with a 503.
func (s *server) overflow() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, narrator.Errorf(narrator.EUNAVAILABLE,
			"The server has as many connections as it takes, or as many from your address as it allows; try again in a moment."))
	})
	return mux
}

// purgingStore is the store as the API and the dashboard use it: deleting
// an audio also removes its media files at once (jobs.PurgeOnDelete).
type purgingStore struct {
	dataStore
	purge *jobs.PurgeOnDelete
}

// DeleteAudio deletes an audio, then its media files.
func (s purgingStore) DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	return s.purge.DeleteAudio(ctx, projectID, ref)
}

// startEngines starts the speech engines the voice catalog uses, their
// processes in sb (nil for none).
func startEngines(ctx context.Context, cfg config.Config, sb *proc.Sandbox, logger *slog.Logger, m *metrics.Metrics) (map[string]pipeline.Synthesizer, func(), error) {
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
	if cfg.EngineStandIn > 0 {
		logger.Warn("speech engines replaced by a stand-in, for benchmarks", "per_sentence", cfg.EngineStandIn)
		for name := range needed {
			engines[name] = standin.New(cfg.EngineStandIn)
		}
		return engines, closeAll, nil
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
			eng, err = startFestival(ctx, cfg, sb, logger, m.Engine(name))
		case "flite":
			eng, err = flite.New(flite.Options{Options: proc.Options{Procs: cfg.UnitWorkers, Logger: logger, Sandbox: sb, Metrics: m.Engine(name)}, TempDir: cfg.ScratchDir()})
		case "espeak":
			eng, err = espeak.New(espeak.Options{Options: proc.Options{Procs: cfg.UnitWorkers, Logger: logger, Sandbox: sb, Metrics: m.Engine(name)}})
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
func startFestival(ctx context.Context, cfg config.Config, sb *proc.Sandbox, logger *slog.Logger, rec proc.Recorder) (*festival.Engine, error) {
	f, err := festival.New(festival.Options{Options: proc.Options{Procs: cfg.UnitWorkers, Logger: logger, Sandbox: sb, Metrics: rec}, TempDir: cfg.ScratchDir()})
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

// lockFile takes an exclusive lock on path, so that two servers never work
// the same data. The lock dies with the process, even on kill -9.
func lockFile(path string) (func(), error) {
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
