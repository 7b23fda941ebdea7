//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/narrator/narrator/internal/config"
)

// scrape fetches /metrics from base and parses it with Prometheus's own
// text-format parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	res, body := fetch(t, base+"/metrics")
	if res.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return families
}

// sample returns the value of a family's series with the given labels (a
// counter, gauge or histogram's count), and whether it exists.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsAndLogs drives a real server with a real engine and checks
// that its metrics, as Prometheus parses them, are there and move, and that
// its JSON access log has a line per request with the request ID, and
// neither the API key nor the password.
func TestMetricsAndLogs(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	const password = "correct horse battery staple 42"
	createUser(t, data, acct.ID, "ops@example.com", password)
	s := startServer(t, data, freeAddr(t), "--log-format", "json")

	before := scrape(t, s.base)
	for _, name := range []string{
		"narrator_http_requests_total", "narrator_http_request_duration_seconds", "narrator_jobs",
		"narrator_engine_processes_busy", "narrator_engine_process_restarts_total", "narrator_engine_process_timeouts_total",
		"narrator_webhook_attempts_total", "go_goroutines", "process_resident_memory_bytes",
	} {
		if _, ok := before[name]; !ok {
			t.Errorf("series %s missing before any work", name)
		}
	}
	// serve sets the Go runtime's soft memory limit unless GOMEMLIMIT does.
	if os.Getenv("GOMEMLIMIT") == "" {
		if got, _ := sample(before, "go_gc_gomemlimit_bytes", nil); got != config.DefaultMemoryLimitMB<<20 {
			t.Errorf("go_gc_gomemlimit_bytes = %v, want %d", got, config.DefaultMemoryLimitMB<<20)
		}
	}
	if n := len(before["narrator_jobs"].GetMetric()); n != 5*5 {
		t.Errorf("narrator_jobs has %d series, want 5 kinds (synthesize, delete media, preview, webhook, resynthesis) × 5 states", n)
	}
	healthz := map[string]string{"route": "GET /healthz", "method": "GET", "code": "200"}
	healthBefore, _ := sample(before, "narrator_http_requests_total", healthz)
	if healthBefore < 1 {
		t.Errorf("no GET /healthz counted, though startServer polled it")
	}

	// An audio created with the key in the query, fetched with it in the
	// Authorization header, and a sign-in with the password.
	create := map[string]string{"route": "POST /api/v3/projects/{project_id}/audio", "method": "POST", "code": "200"}
	status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio?api_key=%s", proj.ID, acct.APIKey), map[string]any{
		"title": "Short", "body": "The library opens on Monday.", "external_id": "m-1",
	})
	if status != 200 {
		t.Fatalf("create: %d %s", status, raw)
	}
	s.waitProcessed(t, proj.ID, "m-1", acct.APIKey, 90*time.Second)
	res, _ := send(t, nil, "GET", fmt.Sprintf("%s/api/v3/projects/%d/audio/m-1", s.base, proj.ID), nil, "Authorization", "Bearer "+acct.APIKey, "X-Request-Id", "trace-me-123")
	if res.StatusCode != 200 || res.Header.Get("X-Request-Id") != "trace-me-123" {
		t.Errorf("GET with a request ID: %d, X-Request-Id %q", res.StatusCode, res.Header.Get("X-Request-Id"))
	}
	token := strings.Repeat("t", 43)
	form := url.Values{"email": {"ops@example.com"}, "password": {password}, "csrf_token": {token}}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, _ = send(t, noRedirect, "POST", s.base+"/signin", strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded", "Cookie", "narrator_signin="+token)
	var session string
	for _, c := range res.Cookies() {
		if c.Name == "narrator_session" {
			session = c.Value
		}
	}
	if res.StatusCode != http.StatusSeeOther || session == "" {
		t.Errorf("sign-in: %d, session cookie %q; want a redirect and a session", res.StatusCode, session)
	}

	if res, _ := fetch(t, s.base+"/healthz"); res.StatusCode != 200 {
		t.Fatalf("/healthz: %d", res.StatusCode)
	}

	after := scrape(t, s.base)
	moved := func(name string, labels map[string]string) {
		t.Helper()
		b, _ := sample(before, name, labels)
		a, ok := sample(after, name, labels)
		if !ok || a <= b {
			t.Errorf("%s%v: %v before, %v after (present %v); want it to grow", name, labels, b, a, ok)
		}
	}
	moved("narrator_http_requests_total", create)
	moved("narrator_http_request_duration_seconds", map[string]string{"route": "POST /api/v3/projects/{project_id}/audio"})
	moved("narrator_http_requests_total", healthz)
	moved("narrator_http_requests_total", map[string]string{"route": "POST /signin", "code": "303"})
	moved("narrator_audio_seconds_total", map[string]string{"engine": "festival"})
	moved("narrator_synthesis_real_time_factor", map[string]string{"engine": "festival"})
	moved("narrator_job_attempts_total", map[string]string{"kind": "synthesize_audio", "outcome": "completed"})
	moved("narrator_job_duration_seconds", map[string]string{"kind": "synthesize_audio"})
	if v, _ := sample(after, "narrator_engine_processes_busy", map[string]string{"engine": "festival"}); v != 0 {
		t.Errorf("festival processes busy with no work: %v", v)
	}
	for _, m := range after["narrator_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && strings.Contains(l.GetValue(), "m-1") {
				t.Errorf("a raw path became a route label: %q", l.GetValue())
			}
		}
	}

	logs := s.logs.waitFor(t, "trace-me-123")
	for _, secret := range []string{acct.APIKey, password, url.QueryEscape(password), session, token} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds a secret %q", secret)
		}
	}
	var traced map[string]any
	for line := range strings.Lines(logs) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["msg"] == "request" && rec["request_id"] == "trace-me-123" {
			traced = rec
		}
	}
	if traced == nil || traced["route"] != "GET /api/v3/projects/{project_id}/audio/{audio_id}" || traced["status"] != float64(200) {
		t.Errorf("access line of the traced request: %v", traced)
	}
	if !strings.Contains(logs, `"msg":"synthesizing"`) || !strings.Contains(logs, fmt.Sprintf(`"project_id":%d`, proj.ID)) {
		t.Errorf("no job log line with project_id %d", proj.ID)
	}
}

// TestReadiness checks /readyz on a node that serves and works, then with
// its media directory gone, which it must name; and a worker node's
// health, readiness and metrics on --metrics-addr.
func TestReadiness(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data, freeAddr(t))
	ready := func(base string) (int, map[string]any) {
		t.Helper()
		res, body := fetch(t, base+"/readyz")
		var rep map[string]any
		if err := json.Unmarshal(body, &rep); err != nil {
			t.Fatalf("/readyz body %q: %v", body, err)
		}
		return res.StatusCode, rep
	}
	code, rep := ready(s.base)
	checks, _ := rep["checks"].(map[string]any)
	if code != 200 || rep["status"] != "ready" || len(checks) != 8 {
		t.Fatalf("/readyz: %d %v; want 200, ready, server, database, media and five engines", code, rep)
	}
	// The neural engine is up without onnxruntime: it refuses neural voices, and the node is
	// as ready as one with them.
	for _, name := range []string{"server", "database", "media", "engine:festival", "engine:flite", "engine:espeak", "engine:piper", "engine:kokoro"} {
		if c, _ := checks[name].(map[string]any); c["status"] != "ok" {
			t.Errorf("check %s: %v", name, checks[name])
		}
	}

	if err := os.RemoveAll(filepath.Join(data, "media")); err != nil {
		t.Fatal(err)
	}
	code, rep = ready(s.base)
	if failed, _ := rep["failed"].([]any); code != 503 || rep["status"] != "unready" || len(failed) != 1 || failed[0] != "media" {
		t.Errorf("/readyz without the media directory: %d %v; want 503 naming media alone", code, rep)
	}
	if res, _ := fetch(t, s.base+"/healthz"); res.StatusCode != 200 {
		t.Errorf("/healthz without the media directory: %d; liveness must not depend on it", res.StatusCode)
	}

	metricsAddr := freeAddr(t)
	w := startServer(t, t.TempDir(), freeAddr(t), "--role", "worker", "--metrics-addr", metricsAddr)
	if code, rep := ready(w.base); code != 200 || rep["status"] != "ready" {
		t.Errorf("worker /readyz: %d %v", code, rep)
	}
	if res, _ := fetch(t, w.base+"/metrics"); res.StatusCode != 404 {
		t.Errorf("worker /metrics on --addr: %d, want 404 with --metrics-addr", res.StatusCode)
	}
	if f := scrape(t, "http://"+metricsAddr); f["narrator_jobs"] == nil {
		t.Error("no narrator_jobs on --metrics-addr")
	}
	if res, _ := fetch(t, "http://"+metricsAddr+"/debug/pprof/goroutine?debug=1"); res.StatusCode != 200 {
		t.Errorf("profiles on --metrics-addr: %d, want 200", res.StatusCode)
	}
	if res, _ := fetch(t, w.base+"/debug/pprof/goroutine?debug=1"); res.StatusCode != 404 {
		t.Errorf("profiles on --addr: %d, want 404: they belong on the private address alone", res.StatusCode)
	}
}
