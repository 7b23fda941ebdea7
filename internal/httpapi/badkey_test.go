package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/httpapi"
)

// TestBadKeyFirst walks every route of the server with a bad API key and
// a request that is bad in every other way too: an unknown or malformed
// project, malformed or unknown IDs, a body that is not JSON or whose
// fields are wrong. Each answers 401, never the 400 or 404 of the rest
// of the request. The keys are one never issued, and one that created on
// its project before (knownKeys: not read again before a create's
// handler), then was revoked. A route added without the key check, or a
// late-authorised handler whose store call does not read the key, fails.
func TestBadKeyFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	bodies := []string{"{not json", `{"title": 5, "body": 5, "url": 5, "voice": 5, "state": 5, "events": 5}`}
	routes := 0
	for _, pattern := range httpapi.RoutePatterns(b.api) {
		method, path, _ := strings.Cut(pattern, " ")
		if path == "/api/v3/openapi.json" {
			continue // public
		}
		routes++
		methods := []string{method}
		if method == "GET" {
			methods = append(methods, "HEAD")
		}
		for _, known := range []bool{false, true} {
			projects := []string{"own", "999999", "x"}
			if known {
				// A key is known with its project only.
				projects = projects[:1]
			}
			for _, project := range projects {
				for _, id := range []string{"999999", "x"} {
					for _, m := range methods {
						for _, body := range bodies {
							for _, place := range []string{"query", "header"} {
								// A key is forgotten (knownKeys) once it
								// fails: each request gets its own.
								key, own, name := "nr_not_a_key", b.project.ID, "never issued"
								if known {
									key, own = knownRevokedKey(t, b)
									name = "revoked after it created"
								}
								url := param.ReplaceAllStringFunc(path, func(p string) string {
									switch {
									case p != "{project_id}":
										return id
									case project == "own":
										return fmt.Sprint(own)
									}
									return project
								})
								what := fmt.Sprintf("%s %s, key %s in the %s, body %q", m, url, name, place, body)
								if status := badKeyStatus(t, b, m, url, key, place, body); status != http.StatusUnauthorized {
									t.Errorf("%s: status %d, want 401", what, status)
								}
							}
						}
					}
				}
			}
		}
	}
	if routes < 30 {
		t.Fatalf("%d routes walked; is RoutePatterns the route table?", routes)
	}
}

// knownRevokedKey returns the key of a new account, which has created an
// audio in the account's new project, returned too, and so is known to
// the server (knownKeys), and then was revoked.
func knownRevokedKey(t *testing.T, b *testBundle) (string, int64) {
	t.Helper()
	account, key := b.newAccount(t, "Known")
	p := b.newProject(t, account)
	if r := b.do(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", p.ID), map[string]any{"api_key": key, "body": "Before."}); r.status != 200 {
		t.Fatalf("create: status %d, body %s", r.status, r.body)
	}
	b.revokeOnlyKey(t, account)
	return key, p.ID
}

// badKeyStatus sends one request of TestBadKeyFirst and returns its
// status. The key goes in the query (api_key) or in the Authorization
// header.
func badKeyStatus(t *testing.T, b *testBundle, method, path, key, place, body string) int {
	t.Helper()
	if place == "query" {
		path += "?api_key=" + key
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if place == "header" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := b.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode
}
