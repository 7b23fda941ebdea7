package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/metrics"
)

type failingQueue struct{}

func (failingQueue) JobCounts(context.Context) ([]narrator.JobCount, error) {
	return nil, errors.New("database is down")
}

func body(t *testing.T, m *metrics.Metrics) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler(slog.New(slog.DiscardHandler)).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	b, _ := io.ReadAll(w.Body)
	return w.Code, string(b)
}

// TestPrivateRegistries checks that two servers in one process keep their
// series apart, that hostile methods share one label value, and that a
// failing queue count leaves the rest of the scrape served.
func TestPrivateRegistries(t *testing.T) {
	t.Parallel()
	a, b := metrics.New(), metrics.New()
	a.ObserveRequest("GET /healthz", http.MethodGet, 200, time.Millisecond)
	a.ObserveRequest("", "BREW-COFFEE", 404, time.Millisecond)
	a.CreateGroup("ahead")
	b.WatchQueue(failingQueue{})

	_, got := body(t, a)
	for _, want := range []string{
		`narrator_http_requests_total{code="200",method="GET",route="GET /healthz"} 1`,
		`narrator_http_requests_total{code="404",method="OTHER",route="unmatched"} 1`,
		`narrator_postgres_create_groups_total{plan="ahead"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(got, "BREW-COFFEE") {
		t.Error("a request's own method became a label value")
	}
	code, got := body(t, b)
	if code != http.StatusOK || strings.Contains(got, "narrator_http_requests_total{") || !strings.Contains(got, "narrator_webhook_attempts_total") {
		t.Errorf("second registry: %d, shares the first's requests or lost its own series:\n%s", code, got)
	}
}
