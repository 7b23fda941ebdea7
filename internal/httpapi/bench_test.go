package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkAPI measures the handler's cost per request, without the
// network, on a real SQLite store: GET one audio, the list's first page and
// a create (its job enqueued in the same transaction). bench/api.sh measures
// the same requests over loopback against a bare handler.
func BenchmarkAPI(b *testing.B) {
	tb := setup(b)
	h := tb.srv.Config.Handler
	for i := range 60 {
		body := fmt.Sprintf(`{"title":"T%d","body":"Hello there number %d. A second sentence.","external_id":"e%d","metadata":{"a":"b"}}`, i, i, i)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, tb.request(http.MethodPost, "/audio", body))
		if rec.Code != http.StatusOK {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	for _, c := range []struct{ name, method, path string }{
		{"get_one", http.MethodGet, "/audio/30"},
		{"list", http.MethodGet, "/audio?page=1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, tb.request(c.method, c.path, ""))
					if rec.Code != http.StatusOK {
						b.Errorf("%s %s: %d %s", c.method, c.path, rec.Code, rec.Body)
						return
					}
				}
			})
		})
	}
	b.Run("create", func(b *testing.B) {
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := n.Add(1)
				body := fmt.Sprintf(`{"title":"New %d","body":"A new article, number %d. It has two sentences.","external_id":"n%d"}`, i, i, i)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, tb.request(http.MethodPost, "/audio", body))
				if rec.Code != http.StatusOK {
					b.Errorf("create: %d %s", rec.Code, rec.Body)
					return
				}
			}
		})
	})
}

// request builds a request on the bundle's project, authenticated by header.
func (b *testBundle) request(method, path, body string) *http.Request {
	r := httptest.NewRequest(method, fmt.Sprintf("/api/v3/projects/%d%s", b.project.ID, path), strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+b.key)
	r.Header.Set("Content-Type", "application/json")
	return r
}
