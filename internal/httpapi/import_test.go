package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/extract"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/httpapi"
)

// article is a news page as a site serves it, around its story.
const article = `<!doctype html><html lang="en-GB"><head><title>Harbour wall to be rebuilt | Courier</title>
<link rel="canonical" href="/news/harbour-wall"><meta name="author" content="Dan Pryce"></head>
<body><nav><a href="/">Home</a> <a href="/sport">Sport</a></nav>
<article><h1>Harbour wall to be rebuilt</h1>
<div class="share">Share on Facebook</div>
<p>Residents voted on Tuesday to borrow 14 million pounds to rebuild the sea wall that failed during the January storms.</p>
<figure><img src="w.jpg"><figcaption>The wall after the storm.</figcaption></figure>
<h2>What the money buys</h2>
<p>Engineers said the new wall would be two metres higher than the Victorian structure it replaces, faced with local granite.</p>
<p>Work is expected to start in April and take about two years, with the quay closed to traffic in stages.</p>
</article>
<section class="comments"><p>About time!</p></section></body></html>`

// pageServer serves article at /story, and a few pages that do not import.
func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/story", "/news/harbour-wall":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(article))
		case "/menu":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<html><body><nav><a href="/">Home</a></nav></body></html>`))
		case "/report.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write([]byte("%PDF-1.7"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestImportAudio(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pages := pageServer(t)
	path := b.audiosPath() + "/import"

	r := b.do(t, "POST", path, map[string]any{"api_key": b.key, "url": pages.URL + "/story"})
	if r.status != http.StatusOK {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	canonical := pages.URL + "/news/harbour-wall"
	a, err := b.store.FindAudio(t.Context(), b.project.ID, canonical)
	if err != nil {
		t.Fatalf("no audio with the canonical URL as external ID: %v", err)
	}
	if a.Title != "Harbour wall to be rebuilt" || a.Author != "Dan Pryce" || a.ArticleURL != canonical || a.Metadata["language"] != "en-GB" {
		t.Errorf("audio = %q by %q at %q, metadata %v", a.Title, a.Author, a.ArticleURL, a.Metadata)
	}
	for _, want := range []string{"<p>Residents voted", "<h2>What the money buys</h2>", "quay closed to traffic"} {
		if !strings.Contains(a.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, a.Body)
		}
	}
	for _, unwanted := range []string{"Share", "Home", "after the storm", "About time", "Harbour wall to be rebuilt"} {
		if strings.Contains(a.Body, unwanted) {
			t.Errorf("body holds %q:\n%s", unwanted, a.Body)
		}
	}

	// Again, with an external ID of one's own: a new audio; and again with
	// that ID: the same audio, updated, as a create would.
	r = b.do(t, "POST", path, map[string]any{"api_key": b.key, "url": pages.URL + "/story", "external_id": "story-1", "metadata": map[string]string{"desk": "local"}})
	first := r.object(t)
	r = b.do(t, "POST", path, map[string]any{"api_key": b.key, "url": pages.URL + "/story", "external_id": "story-1"})
	if second := r.object(t); r.status != 200 || second["id"] != first["id"] || first["id"] == float64(a.ID) {
		t.Errorf("imports with external ID story-1: %v then %v (first import %d)", first["id"], second["id"], a.ID)
	}
}

func TestImportAudioErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pages := pageServer(t)
	path := b.audiosPath() + "/import"
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"no url", map[string]any{}, 400, "url is required"},
		{"not http", map[string]any{"url": "ftp://example.com/a"}, 400, "absolute http or https URL"},
		{"no article", map[string]any{"url": pages.URL + "/menu"}, 422, "no article was found"},
		{"not HTML", map[string]any{"url": pages.URL + "/report.pdf"}, 422, "the page is application/pdf"},
		{"missing", map[string]any{"url": pages.URL + "/gone"}, 422, "the page answered 404 Not Found"},
		{"unreachable", map[string]any{"url": "http://127.0.0.1:1/"}, 422, "could not be imported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["api_key"] = b.key
			r := b.do(t, "POST", path, tc.body)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("%d %s; want %d saying %q", r.status, r.body, tc.status, tc.want)
			}
		})
	}
	if r := b.do(t, "POST", path, map[string]any{"url": pages.URL + "/story"}); r.status != 401 {
		t.Errorf("without a key: %d", r.status)
	}
	if r := b.do(t, "GET", path+"?api_key="+b.key, nil); r.status != 405 {
		t.Errorf("GET: %d %s, want 405", r.status, r.body)
	}
	if n, err := b.store.ListAudios(t.Context(), b.project.ID, time.Time{}, 1, 10); err != nil || len(n) != 0 {
		t.Errorf("failed imports left %d audios (%v)", len(n), err)
	}
}

// TestImportRefusesPrivateAddresses: with the server's own reader, which
// does not allow private addresses, a page on loopback is refused, and the
// answer says so.
func TestImportRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pages := pageServer(t)
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Deps{
		Store:    b.store,
		MediaURL: func(key string) string { return "https://media.test/media/" + key },
		Pages:    extract.NewReader(fetch.New(fetch.Options{})),
	}))
	t.Cleanup(srv.Close)
	b.srv = srv
	r := b.do(t, "POST", b.audiosPath()+"/import", map[string]any{"api_key": b.key, "url": pages.URL + "/story"})
	if r.status != 422 || !strings.Contains(string(r.body), "is loopback; Narrator does not fetch loopback addresses") {
		t.Errorf("%d %s; want 422 naming the loopback address", r.status, r.body)
	}
}
