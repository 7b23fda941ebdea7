package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
)

// TestWriteErrorUnavailable checks that an error of a store that cannot
// reach its database is a 503 with Retry-After and the v3 error body,
// without the cause.
func TestWriteErrorUnavailable(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	httpapi.WriteError(rec, fmt.Errorf("find audio 3: %w", narrator.Unavailable(errors.New("dial tcp 10.0.0.9:5432: connection refused"))))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "5" {
		t.Fatalf("status %d, Retry-After %q; want 503 and 5", rec.Code, rec.Header().Get("Retry-After"))
	}
	var body struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	want := narrator.ErrorMessage(narrator.Unavailable(nil))
	if body.Code != 50 || body.Message != want {
		t.Errorf("body %+v, want code 50 and %q", body, want)
	}
	rec = httptest.NewRecorder()
	httpapi.WriteError(rec, errors.New("disk on fire"))
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("Retry-After") != "" {
		t.Errorf("an internal error: status %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
}
