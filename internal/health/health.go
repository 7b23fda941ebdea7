// Package health answers the readiness probe, /readyz: it runs the node's
// checks (the database, the media store, the speech engines) at once, each
// bounded by a timeout, and names the ones that failed.
package health

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Check is one dependency the node needs to do its work.
type Check struct {
	// Name says what is checked: "database", "media", "engine:festival".
	Name string
	// Func returns nil when the dependency works. It must honour ctx.
	Func func(ctx context.Context) error
}

// DefaultTimeout bounds each check: a dependency slower than this to
// answer a trivial request is taken to be down.
const DefaultTimeout = 2 * time.Second

// Result is the outcome of one check as /readyz reports it. The error of
// a failed check is logged, never answered: it may hold paths and hosts.
type Result struct {
	// Status is "ok", "failed" or "timeout".
	Status string `json:"status"`
	err    error
}

// Report is the body of /readyz.
type Report struct {
	// Status is "ready" or "unready".
	Status string `json:"status"`
	// Failed names the failed checks; absent when ready.
	Failed []string `json:"failed,omitempty"`
	// Checks has every check's result by name.
	Checks map[string]Result `json:"checks"`
}

// Handler answers readiness: 200 and a Report when every check passes,
// 503 and a Report naming the failed ones otherwise. A failure is logged.
type Handler struct {
	checks  []Check
	timeout time.Duration
	logger  *slog.Logger
}

// New returns the handler of checks, each bounded by timeout (zero means
// DefaultTimeout).
func New(checks []Check, timeout time.Duration, logger *slog.Logger) *Handler {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Handler{checks: checks, timeout: timeout, logger: logger}
}

// Run runs every check at once and reports the outcome.
func (h *Handler) Run(ctx context.Context) Report {
	results := make([]Result, len(h.checks))
	var wg sync.WaitGroup
	for i, c := range h.checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, h.timeout)
			defer cancel()
			err := c.Func(cctx)
			switch {
			case err == nil:
				results[i] = Result{Status: "ok"}
			case cctx.Err() != nil && ctx.Err() == nil:
				results[i] = Result{Status: "timeout", err: err}
			default:
				results[i] = Result{Status: "failed", err: err}
			}
		})
	}
	wg.Wait()
	r := Report{Status: "ready", Checks: make(map[string]Result, len(h.checks))}
	for i, c := range h.checks {
		r.Checks[c.Name] = results[i]
		if results[i].Status != "ok" {
			r.Status = "unready"
			r.Failed = append(r.Failed, c.Name)
		}
	}
	return r
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rep := h.Run(r.Context())
	code := http.StatusOK
	if rep.Status != "ready" {
		code = http.StatusServiceUnavailable
		for _, name := range rep.Failed {
			res := rep.Checks[name]
			h.logger.WarnContext(r.Context(), "readiness check failed", "check", name, "status", res.Status, "err", res.err)
		}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(rep); err != nil {
		http.Error(w, "encode report", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}
