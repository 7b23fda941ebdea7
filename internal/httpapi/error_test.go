package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/logtest"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
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

// TestUnencodableAnswer checks that an answer that cannot be encoded, a
// programming error, is logged with its request and answered 500 with the
// v3 error body, not swallowed.
func TestUnencodableAnswer(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	s := httpapi.NewServer(httpapi.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	httpapi.HandleJSON(s, "GET /nan", map[string]float64{"rate": math.NaN()})
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/nan")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Code int `json:"code"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusInternalServerError || body.Code != 50 {
		t.Errorf("status %d, code %d (%v); want 500 and 50", resp.StatusCode, body.Code, err)
	}
	for _, want := range []string{"panic in handler", "path=/nan", "map[string]float64", "NaN"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}
