package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

// rssProject creates a project of type rss in the bundle's account.
func (b *testBundle) rssProject(t *testing.T) *narrator.Project {
	t.Helper()
	title, body, _ := narrator.DefaultVoices("en_US")
	p := &narrator.Project{AccountID: b.account, Title: "Feeds", Type: narrator.ProjectTypeRSS, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	if err := b.store.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSources(t *testing.T) {
	t.Parallel()
	b := setup(t)
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/atom+xml")
		fmt.Fprint(w, `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>
<entry><id>urn:1</id><title>One</title><link href="https://example.com/1"/><content type="html">&lt;p&gt;One.&lt;/p&gt;</content><updated>2026-05-01T09:00:00Z</updated></entry>
<entry><id>urn:2</id><title>Two</title><link href="https://example.com/2"/><summary>Two.</summary><updated>2026-05-02T09:00:00Z</updated></entry></feed>`)
	}))
	t.Cleanup(feed.Close)
	// The old /feeds paths are deprecated aliases that answer the same,
	// with the headers naming their /sources successor.
	for _, base := range []string{"sources", "feeds"} {
		t.Run(base, func(t *testing.T) {
			testSources(t, b, feed.URL, base)
		})
	}
}

// testSources adds, polls, lists, shows and removes a source at the paths
// under base ("sources" or the deprecated "feeds").
func testSources(t *testing.T, b *testBundle, feedURL, base string) {
	p := b.rssProject(t)
	feeds := fmt.Sprintf("/api/v3/projects/%d/%s", p.ID, base)
	auth := []string{"Authorization", "Bearer " + b.key}
	do := func(method, path string, body any) response {
		t.Helper()
		r := b.do(t, method, path, body, auth...)
		want := strings.Replace(path, "/feeds", "/sources", 1)
		gotDep, gotLink := r.header.Get("Deprecation"), r.header.Get("Link")
		switch {
		case base == "feeds" && (gotDep != "true" || gotLink != "<"+want+`>; rel="successor-version"`):
			t.Errorf("%s %s: Deprecation %q, Link %q; want true and the successor %s", method, path, gotDep, gotLink, want)
		case base == "sources" && (gotDep != "" || gotLink != ""):
			t.Errorf("%s %s: Deprecation %q, Link %q on a current path", method, path, gotDep, gotLink)
		}
		return r
	}

	r := do("POST", feeds, map[string]any{"url": feedURL, "headers": map[string]string{"Authorization": "Bearer secret"},
		"backfill_items": 5, "interval_minutes": 1})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := r.object(t)
	if created["status"] != "new" || created["interval_minutes"] != 1.0 || strings.Contains(string(r.body), "secret") {
		t.Errorf("created feed = %s", r.body)
	}
	one := fmt.Sprintf("%s/%v", feeds, created["id"])

	r = do("POST", one+"/poll", nil)
	if r.status != http.StatusOK {
		t.Fatalf("poll: %d %s", r.status, r.body)
	}
	if polled := r.object(t); polled["status"] != "ok" || polled["created"] != 2.0 || polled["last_fetch_at"] == nil {
		t.Errorf("polled feed = %s", r.body)
	}
	a, err := b.store.FindAudio(t.Context(), p.ID, fmt.Sprintf("feed-%v:urn:2", created["id"]))
	if err != nil || a.Title != "Two" || a.Body != "Two." {
		t.Errorf("audio of urn:2 = %+v, %v", a, err)
	}
	if r = do("GET", feeds, nil); r.status != http.StatusOK || len(r.array(t)) != 1 {
		t.Errorf("list: %d %s", r.status, r.body)
	}
	if r = do("GET", one, nil); r.status != http.StatusOK || r.object(t)["items_seen"] != 2.0 {
		t.Errorf("get: %d %s", r.status, r.body)
	}
	if r = do("DELETE", one, nil); r.status != http.StatusOK {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r = do("GET", one, nil); r.status != http.StatusNotFound {
		t.Errorf("get after the delete: %d %s", r.status, r.body)
	}
	if _, err := b.store.FindAudio(t.Context(), p.ID, fmt.Sprintf("feed-%v:urn:2", created["id"])); err != nil {
		t.Errorf("the feed's audio went with it: %v", err)
	}
}

func TestSourceErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.rssProject(t)
	feeds := fmt.Sprintf("/api/v3/projects/%d/sources", p.ID)
	_, otherKey := b.newAccount(t, "Other")
	theirs := narrator.NewSource(b.rssProject(t).ID, "https://example.com/theirs")
	if err := b.store.CreateSource(t.Context(), theirs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, path string
		body               any
		key                string
		status             int
		want               string
	}{
		{"api project", "POST", fmt.Sprintf("/api/v3/projects/%d/sources", b.project.ID), map[string]any{"url": "https://example.com/f"}, b.key, 400, "type rss"},
		{"no url", "POST", feeds, map[string]any{}, b.key, 400, "url is required"},
		{"file url", "POST", feeds, map[string]any{"url": "file:///etc/passwd"}, b.key, 400, "http or https"},
		{"interval", "POST", feeds, map[string]any{"url": "https://example.com/f", "interval_minutes": 0.5}, b.key, 400, "interval_minutes"},
		{"headers not an object", "POST", feeds, map[string]any{"url": "https://example.com/f", "headers": []string{"a"}}, b.key, 400, "headers"},
		{"host header", "POST", feeds, map[string]any{"url": "https://example.com/f", "headers": map[string]string{"Host": "x"}}, b.key, 400, "Host"},
		{"mapping", "POST", feeds, map[string]any{"url": "https://example.com/f", "mapping": map[string]string{"body": "enclosure"}}, b.key, 400, "enclosure"},
		{"unknown feed", "GET", feeds + "/999", nil, b.key, 404, "not found"},
		{"poll unknown feed", "POST", feeds + "/999/poll", nil, b.key, 404, "not found"},
		{"another project's feed", "GET", fmt.Sprintf("%s/%d", feeds, theirs.ID), nil, b.key, 404, "not found"},
		{"poll another project's feed", "POST", fmt.Sprintf("%s/%d/poll", feeds, theirs.ID), nil, b.key, 404, "not found"},
		{"another account's project", "GET", feeds, nil, otherKey, 404, ""},
		{"no key", "GET", feeds, nil, "", 401, ""},
		{"bad method", "PUT", feeds, nil, b.key, 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.key != "" {
				headers = []string{"Authorization", "Bearer " + tc.key}
			}
			r := b.do(t, tc.method, tc.path, tc.body, headers...)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("%s %s: %d %s; want %d with %q", tc.method, tc.path, r.status, r.body, tc.status, tc.want)
			}
		})
	}
}

// TestSourcesAccountLimit: an account's feeds are bounded over all its
// projects; one more is a clear 409, and another account still adds its.
func TestSourcesAccountLimit(t *testing.T) {
	t.Parallel()
	b := setupLimits(t, narrator.Limits{MaxSources: 3})
	auth := []string{"Authorization", "Bearer " + b.key}
	first, second := b.rssProject(t), b.rssProject(t)
	for i, p := range []*narrator.Project{first, first, second} {
		if r := b.do(t, "POST", fmt.Sprintf("/api/v3/projects/%d/sources", p.ID), map[string]any{"url": fmt.Sprintf("https://example.com/%d", i)}, auth...); r.status != http.StatusCreated {
			t.Fatalf("create %d: %d %s", i, r.status, r.body)
		}
	}
	r := b.do(t, "POST", fmt.Sprintf("/api/v3/projects/%d/sources", second.ID), map[string]any{"url": "https://example.com/4"}, auth...)
	if r.status != http.StatusConflict || r.object(t)["code"] != 40.0 || !strings.Contains(r.object(t)["message"].(string), "the account has 3 feeds") {
		t.Errorf("create over the account's limit: %d %s; want 409, code 40, naming the limit", r.status, r.body)
	}
	other, otherKey := b.newAccount(t, "Other")
	b.account = other
	p := b.rssProject(t)
	if r := b.do(t, "POST", fmt.Sprintf("/api/v3/projects/%d/sources", p.ID), map[string]any{"url": "https://example.com/f"}, "Authorization", "Bearer "+otherKey); r.status != http.StatusCreated {
		t.Errorf("another account's create: %d %s", r.status, r.body)
	}
}
