package accesslog_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/accesslog"
	"github.com/narrator/narrator/internal/logtest"
)

// jsonLines returns the JSON log lines written to b so far.
func jsonLines(t *testing.T, b *logtest.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(b.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

type observed struct {
	route, method string
	code          int
}

type observer struct {
	mu   sync.Mutex
	seen []observed
}

func (o *observer) ObserveRequest(route, method string, code int, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, observed{route, method, code})
}

// newServer serves a mux nested in a mux, as the real server does,
// through the middleware.
func newServer(t *testing.T) (*httptest.Server, *logtest.Buffer, *observer) {
	t.Helper()
	logs := &logtest.Buffer{}
	obs := &observer{}
	inner := http.NewServeMux()
	inner.HandleFunc("GET /api/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "hello")
	})
	outer := http.NewServeMux()
	outer.Handle("/api/", inner)
	outer.HandleFunc("GET /feeds/{name}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<rss/>")
	})
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	srv := httptest.NewServer(accesslog.Middleware(accesslog.Options{
		Logger: logger, Observer: obs, SecretPrefixes: []string{"/feeds/"},
	})(outer))
	t.Cleanup(srv.Close)
	return srv, logs, obs
}

func get(t *testing.T, url string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestAccessLine(t *testing.T) {
	t.Parallel()
	srv, logs, obs := newServer(t)
	resp := get(t, srv.URL+"/api/items/42?limit=5&api_key=sekrit-key&token=tok-123", http.Header{
		"X-Request-Id":  {"abc-123"},
		"Authorization": {"Bearer bearer-secret"},
		"Cookie":        {"session=cookie-secret"},
	})
	if got := resp.Header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("X-Request-Id echoed %q, want abc-123", got)
	}
	get(t, srv.URL+"/feeds/feed-token-xyz.xml", nil)

	lines := jsonLines(t, logs)
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2", len(lines))
	}
	first := lines[0]
	for k, want := range map[string]any{
		"msg": "request", "method": "GET", "route": "GET /api/items/{id}", "path": "/api/items/42",
		"status": float64(418), "bytes": float64(5), "request_id": "abc-123",
		"query": "limit=5&api_key=REDACTED&token=REDACTED",
	} {
		if first[k] != want {
			t.Errorf("%s = %v, want %v", k, first[k], want)
		}
	}
	if _, ok := first["remote"]; !ok {
		t.Error("no remote address")
	}
	if _, ok := first["duration"]; !ok {
		t.Error("no duration")
	}
	if got := lines[1]["path"]; got != "/feeds/REDACTED" {
		t.Errorf("feed path logged as %v", got)
	}
	all, _ := json.Marshal(lines)
	for _, secret := range []string{"sekrit-key", "tok-123", "bearer-secret", "cookie-secret", "feed-token-xyz"} {
		if strings.Contains(string(all), secret) {
			t.Errorf("the log holds %q:\n%s", secret, all)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := []observed{{"GET /api/items/{id}", "GET", 418}, {"GET /feeds/{name}", "GET", 200}}
	if len(obs.seen) != 2 || obs.seen[0] != want[0] || obs.seen[1] != want[1] {
		t.Errorf("observed %+v, want %+v", obs.seen, want)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	srv, logs, _ := newServer(t)
	tests := []struct {
		name, sent string
		kept       bool
	}{
		{"none", "", false},
		{"sane", "req-7f3a.b_c:1", true},
		{"too long", strings.Repeat("a", accesslog.MaxIDLen+1), false},
		{"longest kept", strings.Repeat("a", accesslog.MaxIDLen), true},
		{"space", "a b", false},
		{"non-ASCII", "é", false},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		h := http.Header{}
		if tt.sent != "" {
			h.Set("X-Request-Id", tt.sent)
		}
		got := get(t, srv.URL+"/api/items/1", h).Header.Get("X-Request-Id")
		switch {
		case tt.kept && got != tt.sent:
			t.Errorf("%s: echoed %q, want %q", tt.name, got, tt.sent)
		case !tt.kept && (len(got) != 32 || got == tt.sent):
			t.Errorf("%s: echoed %q, want a new ID of 32 hex digits", tt.name, got)
		case !tt.kept && seen[got]:
			t.Errorf("%s: ID %q given twice", tt.name, got)
		}
		seen[got] = true
	}
	lines := jsonLines(t, logs)
	if len(lines) != len(tests) {
		t.Fatalf("%d lines, want %d", len(lines), len(tests))
	}
	for i, l := range lines {
		if id, _ := l["request_id"].(string); !seen[id] {
			t.Errorf("line %d has request_id %q, which no answer carried", i, id)
		}
	}
}

// TestContextHandler checks that a handler's own log line, logged with the
// request's context, carries the request ID of the access line.
func TestContextHandler(t *testing.T) {
	t.Parallel()
	logs := &logtest.Buffer{}
	logger := slog.New(accesslog.ContextHandler{Handler: slog.NewJSONHandler(logs, nil)})
	h := accesslog.Middleware(accesslog.Options{Logger: logger})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger.With("part", "x").ErrorContext(r.Context(), "failed")
	}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("X-Request-Id", "ctx-id")
	h.ServeHTTP(httptest.NewRecorder(), req)
	lines := jsonLines(t, logs)
	if len(lines) != 2 || lines[0]["request_id"] != "ctx-id" || lines[0]["msg"] != "failed" || lines[1]["request_id"] != "ctx-id" {
		t.Errorf("lines %v, want the error and the access line with request_id ctx-id", lines)
	}
	if n := strings.Count(logs.String(), `"request_id"`); n != 2 {
		t.Errorf("request_id appears %d times in two lines:\n%s", n, logs.String())
	}
}
