package accesslog_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/narrator/narrator/internal/accesslog"
	"github.com/narrator/narrator/internal/metrics"
)

// BenchmarkMiddleware is the cost of the access line and the metrics per
// request, against the same routed handler without them, in one run.
func BenchmarkMiddleware(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/projects/{project_id}/audio/{audio_id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":1}`)
	})
	handlers := []struct {
		name string
		h    http.Handler
	}{
		{"bare", mux},
		{"logged", accesslog.Middleware(accesslog.Options{
			Logger:   slog.New(accesslog.ContextHandler{Handler: slog.NewJSONHandler(io.Discard, nil)}),
			Observer: metrics.New(),
		})(mux)},
	}
	for _, h := range handlers {
		b.Run(h.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v3/projects/1/audio/2?api_key=k", nil)
			for b.Loop() {
				h.h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
