package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"time"

	"github.com/narrator/narrator/internal/accesslog"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/health"
	"github.com/narrator/narrator/internal/logbuf"
	"github.com/narrator/narrator/internal/pipeline"
)

// newLogger returns the server's logger in the format --log-format names,
// writing to w. Records logged with a request's context carry its request
// ID; records at Warn and above are written out at once.
func newLogger(w *logbuf.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	var h slog.Handler
	switch format {
	case config.LogJSON:
		h = slog.NewJSONHandler(w, opts)
	default:
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(accesslog.ContextHandler{Handler: w.Handler(h)})
}

// listenMetrics listens on --metrics-addr, if set, where /metrics is then
// served, so that it can stay off the public address, beside Go's CPU,
// heap and goroutine profiles under /debug/pprof/, which only that private
// address offers.
func (s *server) listenMetrics() error {
	if s.cfg.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (--metrics-addr): %w", s.cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler(s.logger))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	s.metricsLn = ln
	s.self.Listening(ln.Addr())
	s.metricsHTTP = &http.Server{
		Handler:           s.self.Mark(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	return nil
}

// readiness is /readyz: the node serves, its database answers, its media
// store is there, and on nodes that work jobs its engines can run.
func (s *server) readiness() http.Handler {
	checks := []health.Check{
		{Name: "server", Func: func(context.Context) error {
			if !s.ready.Load() {
				return errors.New("starting or shutting down")
			}
			return nil
		}},
		{Name: "database", Func: s.backends.store.Ping},
		{Name: "media", Func: s.backends.media.Ping},
	}
	return health.New(append(checks, s.engineChecks...), health.DefaultTimeout, s.logger)
}

// pinger is an engine that says whether it can run units; every engine
// is one (see backends.go).
type pinger interface {
	Ping(ctx context.Context) error
}

// engineChecks are the readiness checks of the engines, "engine:NAME".
func engineChecks(engines map[string]pipeline.Synthesizer) []health.Check {
	var out []health.Check
	for _, name := range slices.Sorted(maps.Keys(engines)) {
		p, ok := engines[name].(pinger)
		if !ok {
			continue
		}
		out = append(out, health.Check{Name: "engine:" + name, Func: p.Ping})
	}
	return out
}
