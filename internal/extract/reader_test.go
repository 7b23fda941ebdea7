package extract_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/extract"
	"github.com/narrator/narrator/internal/fetch"
)

func TestReadPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
		case "/story":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<html lang="en"><head><title>Story</title><link rel="canonical" href="/stories/1"></head><body><article><h1>Story</h1>` + story + `</article></body></html>`))
		case "/copy":
			// A third party's copy naming the publisher's article as
			// its canonical URL.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<html><head><title>Copy</title><link rel="canonical" href="https://publisher.example/stories/1"></head><body><article>` + story + `</article></body></html>`))
		case "/empty", "/private/story":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<html><body><nav>Home</nav></body></html>`))
		case "/feed":
			w.Header().Set("Content-Type", "application/rss+xml")
			_, _ = w.Write([]byte(`<rss/>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	r := extract.NewReader(fetch.New(fetch.Options{AllowPrivate: true}))
	p, err := r.ReadPage(t.Context(), srv.URL+"/story")
	if err != nil {
		t.Fatal(err)
	}
	if p.URL != srv.URL+"/stories/1" || p.Title != "Story" || p.Language != "en" || !strings.Contains(p.Body, "The council met") {
		t.Errorf("page = %+v", p)
	}
	// The copy is the copy's: its audio is not the publisher's article's,
	// for imports and full-text feed items alike.
	if p, err := r.ReadPage(t.Context(), srv.URL+"/copy"); err != nil || p.URL != srv.URL+"/copy" {
		t.Errorf("a page naming another site's canonical URL: %+v, %v; want its own URL", p, err)
	}
	for path, want := range map[string]string{
		"/empty":         "no article was found on it",
		"/private/story": "robots.txt asks Narrator not to fetch /private/story",
		"/feed":          "the page is application/rss+xml",
		"/gone":          "the page answered 404 Not Found",
	} {
		_, err := r.ReadPage(t.Context(), srv.URL+path)
		if narrator.ErrorCode(err) != narrator.EUNREADABLE || !strings.Contains(narrator.ErrorMessage(err), want) {
			t.Errorf("%s: %v; want EUNREADABLE saying %q", path, err, want)
		}
	}
	_, err = extract.NewReader(fetch.New(fetch.Options{})).ReadPage(t.Context(), srv.URL+"/story")
	if narrator.ErrorCode(err) != narrator.EUNREADABLE || !strings.Contains(narrator.ErrorMessage(err), "is loopback") {
		t.Errorf("without AllowPrivate: %v", err)
	}
	if _, err := r.ReadPage(t.Context(), "file:///etc/passwd"); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("file URL: %v; want EINVALID", err)
	}
}

// TestReadPageBusy: while MaxConcurrentReads pages are being read, one
// more is refused at once, and accepted again when one is done.
func TestReadPageBusy(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, extract.MaxConcurrentReads)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body><article>" + story + "</article></body></html>"))
	}))
	t.Cleanup(srv.Close)
	r := extract.NewReader(fetch.New(fetch.Options{AllowPrivate: true}))
	done := make(chan error, extract.MaxConcurrentReads)
	for range extract.MaxConcurrentReads {
		go func() {
			_, err := r.ReadPage(t.Context(), srv.URL+"/slow")
			done <- err
		}()
	}
	for range extract.MaxConcurrentReads {
		<-arrived
	}
	if _, err := r.ReadPage(t.Context(), srv.URL+"/fast"); narrator.ErrorCode(err) != narrator.EUNAVAILABLE {
		t.Errorf("one read too many: %v; want EUNAVAILABLE", err)
	}
	close(release)
	for range extract.MaxConcurrentReads {
		if err := <-done; err != nil {
			t.Errorf("a slow read: %v", err)
		}
	}
	if _, err := r.ReadPage(t.Context(), srv.URL+"/fast"); err != nil {
		t.Errorf("after the reads ended: %v", err)
	}
}
