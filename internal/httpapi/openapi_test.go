package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/openapitest"
)

// TestGoldensConform checks every golden answer against the OpenAPI
// document, so that the frozen contract and the published one agree.
func TestGoldensConform(t *testing.T) {
	t.Parallel()
	v := openapitest.MustLoad(t)
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var exchanges []exchange
		if err := json.Unmarshal(raw, &exchanges); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for i, x := range exchanges {
			method, target, ok := strings.Cut(x.Request, " ")
			if !ok {
				t.Fatalf("%s #%d: request %q", path, i, x.Request)
			}
			req := httptest.NewRequest(method, target, nil)
			h := http.Header{"Content-Type": {"application/json"}}
			if err := v.CheckResponse(t.Context(), req, x.Status, h, x.Body); err != nil {
				t.Errorf("%s #%d (%s → %d): %v", filepath.Base(path), i, x.Request, x.Status, err)
			}
		}
	}
}

// TestOpenAPIServed: the API serves the document without a key, as
// cacheable JSON, and answers other methods with the JSON 405.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "GET", "/api/v3/openapi.json", nil)
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &doc) != nil || doc.OpenAPI != "3.1.0" || doc.Paths["/api/v3/projects"] == nil {
		t.Fatalf("%d %.200s", r.status, r.body)
	}
	if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "public") || r.header.Get("ETag") == "" {
		t.Errorf("Cache-Control %q, ETag %q", cc, r.header.Get("ETag"))
	}
	if r := b.do(t, "POST", "/api/v3/openapi.json", nil); r.status != 405 {
		t.Errorf("POST: %d %s", r.status, r.body)
	}
}
