package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/health"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	ok := func(context.Context) error { return nil }
	broken := func(context.Context) error { return errors.New("disk /secret/path gone") }
	hangs := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name     string
		checks   []health.Check
		wantCode int
		want     map[string]any
	}{
		{"all ok", []health.Check{{"database", ok}, {"media", ok}}, http.StatusOK, map[string]any{
			"status": "ready",
			"checks": map[string]any{"database": map[string]any{"status": "ok"}, "media": map[string]any{"status": "ok"}},
		}},
		{"one failed, one hung", []health.Check{{"database", ok}, {"media", broken}, {"engine:flite", hangs}}, http.StatusServiceUnavailable, map[string]any{
			"status": "unready",
			"failed": []any{"media", "engine:flite"},
			"checks": map[string]any{
				"database":     map[string]any{"status": "ok"},
				"media":        map[string]any{"status": "failed"},
				"engine:flite": map[string]any{"status": "timeout"},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := health.New(tt.checks, 50*time.Millisecond, slog.New(slog.DiscardHandler))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if w.Code != tt.wantCode {
				t.Errorf("status %d, want %d", w.Code, tt.wantCode)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var got map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q: %v", w.Body, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}
