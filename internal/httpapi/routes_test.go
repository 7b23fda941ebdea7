package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/openapitest"
)

// TestRoutesDocumented checks the routes against the OpenAPI document the
// other way round from TestAllowedMethods: every route the server serves
// is an operation of the document, so that a new endpoint cannot go
// undocumented. It also checks that every route whose path names a
// project names it {project_id}: authedAs checks that parameter, and only
// it, against the API key's account.
func TestRoutesDocumented(t *testing.T) {
	t.Parallel()
	b := setup(t)
	doc := openapitest.MustLoad(t).Doc()
	patterns := httpapi.RoutePatterns(b.api)
	if len(patterns) < 15 {
		t.Fatalf("%d routes; is RoutePatterns the route table?", len(patterns))
	}
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		if rest, ok := strings.CutPrefix(path, "/api/v3/projects/"); ok {
			if seg, _, _ := strings.Cut(rest, "/"); strings.HasPrefix(seg, "{") && seg != "{project_id}" {
				t.Errorf("%s: a project's path names it %s, not {project_id}", p, seg)
			}
		}
		item := doc.Paths.Value(path)
		if item == nil {
			t.Errorf("%s: the OpenAPI document has no path %s", p, path)
			continue
		}
		if item.GetOperation(method) == nil {
			t.Errorf("%s: the OpenAPI document has no %s operation on %s", p, method, path)
		}
	}
}

// TestAllowedMethods tries every method on every API path of the OpenAPI
// document. A method the document lists for the path reaches a handler; any
// other answers the JSON 405 with an Allow header that names exactly the
// listed methods, and HEAD beside GET.
func TestAllowedMethods(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := strings.NewReplacer("{project_id}", fmt.Sprint(b.project.ID), "{audio_id}", "1", "{rule_id}", "1", "{webhook_id}", "1", "{delivery_id}", "1", "{feed_id}", "1", "{source_id}", "1")
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	paths := 0
	for path, item := range openapitest.MustLoad(t).Doc().Paths.Map() {
		if !strings.HasPrefix(path, "/api/") {
			continue
		}
		paths++
		var allowed []string
		for m := range item.Operations() {
			allowed = append(allowed, m)
		}
		if slices.Contains(allowed, "GET") {
			allowed = append(allowed, "HEAD")
		}
		slices.Sort(allowed)
		want := strings.Join(allowed, ", ")
		for _, m := range methods {
			req, err := http.NewRequestWithContext(t.Context(), m, b.srv.URL+ids.Replace(path)+"?api_key="+b.key, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := b.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(allowed, m) {
				if res.StatusCode == http.StatusMethodNotAllowed {
					t.Errorf("%s %s: 405, but the document lists it", m, path)
				}
				continue
			}
			var e struct{ Code int }
			if res.StatusCode != http.StatusMethodNotAllowed || (m != "HEAD" && (json.Unmarshal(body, &e) != nil || e.Code != 10)) {
				t.Errorf("%s %s: %d %s, want the JSON 405", m, path, res.StatusCode, body)
			}
			if got := res.Header.Get("Allow"); got != want {
				t.Errorf("%s %s: Allow %q, want %q", m, path, got, want)
			}
		}
	}
	if paths < 15 {
		t.Fatalf("the document has %d API paths; is it the right one?", paths)
	}
}
