// Package feedsource reads the feeds of rss projects: it fetches a feed
// through the guarded client (internal/fetch), parses it with gofeed (the
// one package that imports it), and turns its new and changed items into
// audios through the store's create, by the rules of narrator.Source. A
// Poller reads due feeds (each under a lease in the store, so one node at a
// time reads it) and feeds asked for; it subscribes to a feed's WebSub hub
// and serves the callback where the hub verifies and pushes.
package feedsource

import (
	"bytes"
	"errors"
	"strings"

	"github.com/mmcdole/gofeed"
	"github.com/narrator/narrator"
)

// FeedTypes are the media types a feed may be served as. Feeds are often
// served as plain XML or text, so those are read too.
var FeedTypes = []string{
	"application/rss+xml", "application/atom+xml", "application/rdf+xml", "application/xml", "text/xml",
	"application/feed+json", "application/json", "text/plain",
}

// Feed is a parsed feed: its items in the feed's order.
type Feed struct {
	Items []*narrator.FeedItem
	// Total counts the feed's items, of which Items holds at most
	// narrator.MaxItemsPerFeed.
	Total int
}

// ErrNotFeed is the error of Parse for a body that is no feed; its text is
// what a user reads.
var ErrNotFeed = errors.New("the feed is not RSS, Atom or JSON Feed")

// Parse parses an RSS 0.9x, 1.0 or 2.0, Atom or JSON Feed document. Its
// errors say in plain words why the body is no feed.
func Parse(body []byte) (*Feed, error) {
	f, err := gofeed.NewParser().Parse(bytes.NewReader(body))
	if err != nil {
		if errors.Is(err, gofeed.ErrFeedTypeNotDetected) {
			return nil, ErrNotFeed
		}
		return nil, errors.New("the feed could not be parsed: " + oneLine(err.Error()))
	}
	out := &Feed{Total: len(f.Items)}
	for _, it := range f.Items[:min(len(f.Items), narrator.MaxItemsPerFeed)] {
		if it == nil {
			continue
		}
		item := &narrator.FeedItem{
			GUID:       it.GUID,
			Link:       it.Link,
			Title:      it.Title,
			Content:    it.Content,
			Summary:    it.Description,
			Categories: it.Categories,
		}
		var authors []string
		for _, p := range it.Authors {
			if p != nil && strings.TrimSpace(p.Name) != "" {
				authors = append(authors, strings.TrimSpace(p.Name))
			}
		}
		item.Author = strings.Join(authors, ", ")
		switch {
		case it.PublishedParsed != nil:
			item.Published = it.PublishedParsed.UTC()
		case it.UpdatedParsed != nil:
			item.Published = it.UpdatedParsed.UTC()
		}
		if it.UpdatedParsed != nil {
			item.Updated = it.UpdatedParsed.UTC()
		}
		out.Items = append(out.Items, item)
	}
	return out, nil
}

// oneLine returns the first line of s, at most 200 bytes of it.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}
