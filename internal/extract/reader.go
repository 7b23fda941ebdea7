package extract

import (
	"context"
	"errors"
	"net/url"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/fetch"
)

// PageTypes are the media types Extract reads.
var PageTypes = []string{"text/html", "application/xhtml+xml"}

// MaxConcurrentReads is how many pages a Reader reads at once. Each may
// hold a whole page (up to the client's size cap) in memory, so a burst of
// imports must not multiply that without bound; one more is refused at
// once rather than queued.
const MaxConcurrentReads = 8

// Reader fetches article pages through a guarded client and extracts them.
// It is safe for concurrent use.
type Reader struct {
	client *fetch.Client
	slots  chan struct{}
}

// NewReader returns a Reader that fetches through c.
func NewReader(c *fetch.Client) *Reader {
	return &Reader{client: c, slots: make(chan struct{}, MaxConcurrentReads)}
}

// ReadPage fetches the page at rawURL, honouring its site's robots.txt,
// and returns its article. It returns EINVALID for a URL that is not
// absolute http or https, and EUNREADABLE, with the reason, for a page
// that cannot be fetched (refused address, no answer, error status, too
// large, not HTML, robots.txt) or holds no article. It returns
// EUNAVAILABLE while MaxConcurrentReads pages are being read.
func (r *Reader) ReadPage(ctx context.Context, rawURL string) (*narrator.Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, narrator.Errorf(narrator.EINVALID, "url must be an absolute http or https URL")
	}
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	default:
		return nil, narrator.Errorf(narrator.EUNAVAILABLE, "Narrator is reading as many pages as it may at once; try again in a few seconds")
	}
	resp, err := r.client.Get(ctx, fetch.Request{URL: rawURL, Types: PageTypes, Robots: true, What: "page"})
	if err != nil {
		return nil, narrator.Errorf(narrator.EUNREADABLE, "the page could not be imported: %s", fetch.Describe(err))
	}
	a, err := Extract(resp.Body, resp.Header.Get("Content-Type"), resp.URL)
	if errors.Is(err, ErrNoArticle) {
		return nil, narrator.Errorf(narrator.EUNREADABLE, "the page could not be imported: no article was found on it")
	}
	if err != nil {
		return nil, narrator.Errorf(narrator.EUNREADABLE, "the page could not be imported: it could not be read as HTML")
	}
	return &narrator.Page{URL: a.URL, Title: a.Title, Author: a.Author, Language: a.Language, Body: a.Body, Image: a.Image}, nil
}
