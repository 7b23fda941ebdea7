// Package feed serves a project's podcast feed: GET /feeds/{token}.xml, RSS
// 2.0 with the iTunes and Podcasting 2.0 namespaces, one item per processed
// audio, newest first (narrator.MaxFeedItems at most).
//
// The token in the path is the feed's only credential: an unknown token, a
// rotated one and the token of a feed turned off all answer 404 alike.
// Responses carry a strong ETag computed from the XML and a Last-Modified
// from the feed's settings and audios (narrator.FeedContent.LastModified),
// and http.ServeContent answers If-None-Match and If-Modified-Since with
// 304. Podcast apps poll feeds; a conditional poll still reads the feed's
// items (one indexed read of at most narrator.MaxFeedItems rows, a few milliseconds
// at a million audios) and renders the XML to compare ETags, but transfers
// nothing.
//
// Mount the handler on a pattern with a {name} wildcard:
//
//	mux.Handle("/feeds/{name}", feed.New(feed.Config{...}))
//
// Methods other than GET and HEAD get 405.
package feed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/narrator/narrator"
)

// Store reads feeds.
type Store interface {
	// FeedByToken returns what the turned-on feed with that token shows,
	// with up to limit audios. It returns ENOTFOUND if no turned-on feed
	// has that token.
	FeedByToken(ctx context.Context, token string, limit int) (*narrator.FeedContent, error)
}

// Config configures a Handler.
type Config struct {
	Store Store
	// MediaURL turns a media key into the absolute URL it is served at.
	MediaURL func(key string) string
	// PublicURL is the base of the server's URLs, without a trailing
	// slash: the feed's own URL is PublicURL + narrator.FeedPath(token),
	// and it is the channel's link for projects without a website.
	PublicURL string
	// Hub is the URL of the WebSub hub the feeds name (atom:link
	// rel="hub"), which Narrator pings when a feed changes (Pinger); ""
	// for none.
	Hub string
	// Logger receives internal errors; discarded when nil.
	Logger *slog.Logger
}

// CacheControl is sent with every feed: podcast apps and caches may reuse a
// feed for five minutes, then ask again with a conditional request. A
// rotated or disabled feed may thus linger that long in a shared cache.
const CacheControl = "public, max-age=300"

// ContentType is the media type of a feed.
const ContentType = "application/rss+xml; charset=utf-8"

// Handler serves feeds.
type Handler struct {
	cfg Config
}

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg}
}

// ServeHTTP serves the feed named by the request's {name} path value,
// "TOKEN.xml". GET and HEAD only; the mux pattern decides the method.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "A feed can only be read.", http.StatusMethodNotAllowed)
		return
	}
	token, ok := strings.CutSuffix(r.PathValue("name"), ".xml")
	if !ok || narrator.ValidateFeedToken(token) != nil {
		notFound(w)
		return
	}
	c, err := h.cfg.Store.FeedByToken(r.Context(), token, narrator.MaxFeedItems)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		notFound(w)
		return
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return // the client went away
	case err != nil:
		h.cfg.Logger.ErrorContext(r.Context(), "read feed", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	body, err := render(c, h.cfg)
	if err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "render feed", "project_id", c.Feed.ProjectID, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(body)
	hdr := w.Header()
	hdr.Set("Content-Type", ContentType)
	hdr.Set("Cache-Control", CacheControl)
	hdr.Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	hdr.Set("X-Content-Type-Options", "nosniff")
	// Web players read feeds from other origins.
	hdr.Set("Access-Control-Allow-Origin", "*")
	http.ServeContent(w, r, "", c.LastModified(), bytes.NewReader(body))
}

// notFound answers 404 for a feed that does not exist, or no longer does;
// never cached, since the same URL may be turned on again.
func notFound(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "feed not found", http.StatusNotFound)
}

// render returns the RSS document of c, with media URLs from
// cfg.MediaURL, cfg.PublicURL as the base of the feed's own URL, and
// cfg.Hub's link.
func render(c *narrator.FeedContent, cfg Config) ([]byte, error) {
	doc := newDocument(c, cfg.MediaURL, cfg.PublicURL, cfg.Hub)
	var buf bytes.Buffer
	buf.WriteString(xmlHeader)
	enc := newEncoder(&buf)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode feed of project %d: %w", c.Feed.ProjectID, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
