// Package player is the embeddable audio player: the pages publishers put
// in an <iframe> on their article pages, the one-line script that inserts
// that iframe, the player's script and styles (also used by the
// dashboard's audio page), and the public endpoint where players report
// listening events.
//
// Routes, mounted at the root of the service's mux:
//
//	GET  /embed.js                         the loader script
//	GET  /embed/{project_id}?external_id=… the player page; or ?url=ARTICLE_URL
//	GET  /embed/{project_id}/status?…      {"state": …} of the same audio, for a page still waiting
//	GET  /embed/{project_id}/playlist?category=…  a player of the project's latest published audios
//	GET  /embed/player.js, /embed/player.css the player's script and styles
//	POST /embed/events                     a listening event; 204
//
// Only the player pages may be framed by other sites (frame-ancestors *, or
// the project's allowed origins); they load nothing from other origins but
// the media, whose origin their Content-Security-Policy names.
//
// The pages and the status show an audio only when the project admits the
// visit (narrator.ProjectAccess.Admits: an allowed origin, a valid token
// in a signed project) and the audio is published (narrator.Listed). Every
// refusal is the answer of an audio that does not exist, so that no answer
// tells whether an audio the visitor may not see exists.
package player

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/httpapi"
)

// Store is what the player needs from storage.
type Store interface {
	// FindAudioByExternalID returns ENOTFOUND unless the project has a live
	// audio with that external ID.
	FindAudioByExternalID(ctx context.Context, projectID int64, externalID string) (*narrator.Audio, error)
	// FindAudioByArticleURL returns the project's newest live audio with
	// that article URL, or ENOTFOUND.
	FindAudioByArticleURL(ctx context.Context, projectID int64, articleURL string) (*narrator.Audio, error)
	// SynthesisProgress returns ENOTFOUND while no progress on the
	// revision is reported.
	SynthesisProgress(ctx context.Context, audioID int64, revision int) (narrator.SynthesisProgress, error)
	// ProjectAccess returns the project's access settings, the defaults
	// for a project that never changed them or does not exist.
	ProjectAccess(ctx context.Context, projectID int64) (narrator.ProjectAccess, error)
	// AudioPublication returns the audio's publication, the default for
	// an audio whose publisher never decided.
	AudioPublication(ctx context.Context, audioID int64) (narrator.Publication, error)
	// ListAudios returns a page (from 1) of a project's live audios,
	// newest first, with their media; since is the zero time here.
	ListAudios(ctx context.Context, projectID int64, since time.Time, page, perPage int) ([]*narrator.Audio, error)
}

// Listens counts listening events (listens.Counter).
type Listens interface {
	// Count counts one event from a client in memory, whatever the IDs;
	// it returns EINVALID for an unknown event and ERATELIMITED when the
	// client sent too many.
	Count(clientKey string, projectID, audioID int64, event string) error
}

// Deps are the collaborators of the player.
type Deps struct {
	Store Store
	// Listens counts the listening events; required.
	Listens Listens
	// Now is the clock of publication schedules and media tokens; time.Now when nil.
	Now func() time.Time
	// ClientKey names the client of a request for the limits on
	// listening events (clientip.Resolver.Key); the peer's address, an
	// IPv6 one grouped by /64, when nil.
	ClientKey func(r *http.Request) string
	Logger    *slog.Logger
	// MediaURL turns a media key into the absolute URL it is served at.
	MediaURL func(key string) string
	// MediaOrigin is the scheme://host media are served from, when it is
	// not the origin the player pages are served from; the pages'
	// Content-Security-Policy allows it for audio and the transcript.
	MediaOrigin string
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// maxEventBytes caps the body of a listening event, which is about 60
// bytes.
const maxEventBytes = 1024

// Handler is the player as an http.Handler.
type Handler struct {
	store       Store
	listens     Listens
	clientKey   func(*http.Request) string
	now         func() time.Time
	logger      *slog.Logger
	mediaURL    func(string) string
	mediaOrigin string
	page        *template.Template
	loader      []byte
	mux         *http.ServeMux
	paths       *http.ServeMux          // the routes' paths without methods; see serveOther
	others      map[string]otherMethods // by path pattern; see serveOther
}

// New parses the embedded templates and returns the player's handler.
func New(d Deps) (*Handler, error) {
	t, err := template.New("embed.html").Funcs(template.FuncMap{"duration": formatDuration, "seconds": formatSeconds}).ParseFS(templateFS, "templates/embed.html")
	if err != nil {
		return nil, fmt.Errorf("player: parse template: %w", err)
	}
	loader, err := staticFS.ReadFile("static/embed.js")
	if err != nil {
		return nil, fmt.Errorf("player: read loader: %w", err)
	}
	h := &Handler{
		store:       d.Store,
		listens:     d.Listens,
		clientKey:   d.ClientKey,
		now:         d.Now,
		logger:      d.Logger,
		mediaURL:    d.MediaURL,
		mediaOrigin: d.MediaOrigin,
		page:        t,
		loader:      loader,
		mux:         http.NewServeMux(),
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	if h.clientKey == nil {
		h.clientKey = clientip.New(nil).Key
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.mediaURL == nil {
		h.mediaURL = func(key string) string { return "/media/" + key }
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("player: static files: %w", err)
	}
	files := staticHeaders(http.StripPrefix("/embed", http.FileServerFS(static)))
	routes := []struct {
		method, path string
		h            http.Handler
		json         bool // a method it does not support gets the v3 JSON 405, not a page
	}{
		{"GET", "/embed.js", http.HandlerFunc(h.serveLoader), false},
		{"GET", "/embed/player.js", files, false},
		{"GET", "/embed/player.css", files, false},
		{"GET", "/embed/{project_id}", http.HandlerFunc(h.servePage), false},
		{"GET", "/embed/{project_id}/status", http.HandlerFunc(h.serveStatus), true},
		{"GET", "/embed/{project_id}/playlist", http.HandlerFunc(h.servePlaylist), false},
		{"POST", "/embed/events", http.HandlerFunc(h.serveEvent), true},
	}
	// paths holds each route's path without its method, for serveOther to
	// find the route a request's path names; it never serves.
	h.paths = http.NewServeMux()
	h.others = make(map[string]otherMethods)
	for _, rt := range routes {
		h.mux.Handle(rt.method+" "+rt.path, rt.h)
		o, ok := h.others[rt.path]
		if !ok {
			h.paths.Handle(rt.path, http.NotFoundHandler())
		}
		o.methods, o.json = append(o.methods, rt.method), rt.json
		h.others[rt.path] = o
	}
	h.mux.HandleFunc("/embed/", h.serveOther)
	return h, nil
}

// otherMethods is what a path answers to a method that none of its routes
// takes.
type otherMethods struct {
	methods []string // the methods its routes take
	json    bool     // the v3 JSON 405, rather than a page
}

// serveOther answers what no route takes: a method that a route's path does
// not support gets 405 with Allow (JSON on the JSON routes), anything else
// 404.
func (h *Handler) serveOther(w http.ResponseWriter, r *http.Request) {
	_, pattern := h.paths.Handler(r)
	o, ok := h.others[pattern]
	switch {
	case !ok:
	case o.json:
		w.Header().Set("Allow", httpapi.AllowHeader(o.methods...))
		httpapi.WriteError(w, httpapi.MethodNotAllowed(r.Method))
		return
	default:
		w.Header().Set("Allow", httpapi.AllowHeader(o.methods...))
		h.renderMessage(w, r, http.StatusMethodNotAllowed, "Method not allowed", "This page can only be read.")
		return
	}
	h.renderMessage(w, r, http.StatusNotFound, "Not found", "There is no player here.")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// staticHeaders caches the player's files for an hour: their names do not
// change between builds.
func staticHeaders(files http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// serveLoader serves the script that publishers put on their pages. It
// runs on their origin and inserts the player's iframe.
func (h *Handler) serveLoader(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/javascript; charset=utf-8")
	hdr.Set("Cache-Control", "public, max-age=3600")
	hdr.Set("Access-Control-Allow-Origin", "*")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.loader))
}

// lookup is how an embed names its audio.
type lookup struct {
	projectID  int64
	externalID string // "" when url is given
	url        string
	token      string // the page's embed token, "" for none
	origin     string // the embedding page's origin, "" when unknown
}

// query returns the lookup's query string, for the status URL.
func (l lookup) query() string {
	q := "url=" + url.QueryEscape(l.url)
	if l.externalID != "" {
		q = "external_id=" + url.QueryEscape(l.externalID)
	}
	if l.token != "" {
		q += "&token=" + url.QueryEscape(l.token)
	}
	return q
}

// visit is what the lookup presents to the project's access settings.
func (l lookup) visit() narrator.EmbedVisit {
	return narrator.EmbedVisit{Subject: narrator.EmbedSubject(l.externalID, l.url), Token: l.token, Origin: l.origin}
}

// pageOrigin returns the origin of the page that embeds the player: the
// origin the loader passes, else the Referer's (browsers send the
// embedding page's origin when they load a cross-origin frame), else "".
func pageOrigin(r *http.Request) string {
	if o := r.URL.Query().Get("origin"); o != "" {
		return o
	}
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Scheme != "" && ref.Host != "" {
		return ref.Scheme + "://" + ref.Host
	}
	return ""
}

// readLookup reads the project from the path and the audio's external_id
// or article url from the query; external_id wins if both are given. A
// token that expires further ahead than narrator.MaxEmbedTokenLife from
// now is EINVALID: the CMS that signed it is told so, and the answer
// depends on the token alone, not on what exists.
func readLookup(r *http.Request, now time.Time) (lookup, error) {
	var l lookup
	id, err := strconv.ParseInt(r.PathValue("project_id"), 10, 64)
	if err != nil || id <= 0 {
		return l, narrator.Errorf(narrator.ENOTFOUND, "no project %q", r.PathValue("project_id"))
	}
	l.projectID = id
	q := r.URL.Query()
	l.externalID, l.url, l.token = q.Get("external_id"), q.Get("url"), q.Get("token")
	l.origin = pageOrigin(r)
	if err := narrator.CheckEmbedTokenExpiry(l.token, now); err != nil {
		return l, err
	}
	switch {
	case l.externalID != "":
		if utf8.RuneCountInString(l.externalID) > narrator.MaxExternalIDChars || !narrator.ValidText(l.externalID) {
			return l, narrator.Errorf(narrator.EINVALID, "external_id must be at most %d characters of text", narrator.MaxExternalIDChars)
		}
		l.url = ""
	case l.url != "":
		// The fragment names a place in the page, not another article.
		l.url, _, _ = strings.Cut(l.url, "#")
		probe := narrator.Audio{Body: "x", ArticleURL: l.url}
		if err := probe.Validate(); err != nil {
			return l, narrator.Errorf(narrator.EINVALID, "url must be the article's absolute http or https URL, at most %d characters", narrator.MaxURLChars)
		}
	default:
		return l, narrator.Errorf(narrator.EINVALID, "give the audio's external_id or the article's url")
	}
	return l, nil
}

// find returns the audio a lookup names, with its project's access
// settings, if the project admits the visit and the audio is published;
// else the ENOTFOUND of an audio that does not exist.
func (h *Handler) find(ctx context.Context, l lookup) (*narrator.Audio, narrator.ProjectAccess, error) {
	notFound := narrator.Errorf(narrator.ENOTFOUND, "no audio for this article")
	access, err := h.store.ProjectAccess(ctx, l.projectID)
	if err != nil {
		return nil, access, err
	}
	now := h.now()
	if !access.Admits(l.visit(), now) {
		return nil, access, notFound
	}
	var a *narrator.Audio
	if l.externalID != "" {
		a, err = h.store.FindAudioByExternalID(ctx, l.projectID, l.externalID)
	} else {
		a, err = h.store.FindAudioByArticleURL(ctx, l.projectID, l.url)
	}
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return nil, access, notFound
	case err != nil:
		return nil, access, err
	}
	pub, err := h.store.AudioPublication(ctx, a.ID)
	if err != nil {
		return nil, access, err
	}
	if !narrator.Listed(a, pub, now) {
		return nil, access, notFound
	}
	return a, access, nil
}

// pageData is what the page template gets.
type pageData struct {
	Title   string
	Heading string
	Message string
	// Pending is set while the audio is being made: the page checks
	// StatusURL and reloads itself once it is done.
	Pending   bool
	StatusURL string
	Audio     *narrator.Audio
	Player    *playerData
	// Playlist is the audios of a playlist page, Player the first.
	Playlist []*playerData
	// Site is the host of the embedding page, the lock screen's artist
	// where an audio names no author.
	Site string
	// Download shows a button that downloads the MP3 (the project's
	// ProjectAccess.DownloadButton).
	Download bool
	// frameAncestors is the CSP's frame-ancestors of the page: the
	// project's allowed origins, or * (also for every message page, which
	// shows nothing of a project).
	frameAncestors string
}

// playerData is what the player's markup carries: the player script
// reads it from data attributes. The dashboard builds the same markup.
type playerData struct {
	MP3URL        string
	HLSURL        string
	TranscriptURL string
	// EventsURL, ProjectID and AudioID say where to report listening
	// events; EventsURL is "" where nothing is reported.
	EventsURL string
	ProjectID int64
	AudioID   int64
	// Duration is the audio's length in seconds, shown until the browser
	// knows it.
	Duration float64
	// Title and Author name the audio on the lock screen (Media Session).
	Title, Author string
}

// newPlayerData returns the player of a processed audio, or nil if it has
// no MP3 yet.
func newPlayerData(a *narrator.Audio, mediaURL func(string) string) *playerData {
	mp3, ok := a.MediaOf(narrator.ContentTypeMP3)
	if !ok || mp3.Key == "" || a.State != narrator.StateProcessed {
		return nil
	}
	p := &playerData{MP3URL: mediaURL(mp3.Key), ProjectID: a.ProjectID, AudioID: a.ID, Duration: float64(a.DurationMS) / 1000,
		Title: untitled(a.Title), Author: a.Author}
	if m, ok := a.MediaOf(narrator.ContentTypeM3U8); ok && m.Key != "" {
		p.HLSURL = mediaURL(m.Key)
	}
	jsonKey, _ := narrator.TranscriptKeys(mp3.Key)
	p.TranscriptURL = mediaURL(jsonKey)
	return p
}

// servePage serves the player page of an audio, or a message in its place.
func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	l, err := readLookup(r, h.now())
	if err != nil {
		h.renderError(w, r, err)
		return
	}
	a, access, err := h.find(r.Context(), l)
	if err != nil {
		h.renderError(w, r, err)
		return
	}
	d := pageData{Title: untitled(a.Title), Audio: a, frameAncestors: access.FrameAncestors(), Site: siteName(l.origin),
		Download: access.DownloadButton}
	d.Player = newPlayerData(a, h.mediaURLs(access, time.Duration(a.DurationMS)*time.Millisecond))
	switch {
	case d.Player != nil:
		d.Player.EventsURL = "/embed/events"
		if access.Mode == narrator.AccessSigned {
			// An HLS playlist names its segments by relative URLs, which
			// cannot carry the token: a signed project plays the MP3.
			d.Player.HLSURL = ""
		}
	case a.State == narrator.StateUnprocessed:
		d.Pending = true
		d.Heading = "The audio of this article is being prepared"
		d.Message = "It will be ready in a moment. This player checks again by itself."
		d.StatusURL = fmt.Sprintf("/embed/%d/status?%s", l.projectID, l.query())
	default:
		d.Heading = "This audio is not available"
		d.Message = "Sorry, the audio of this article could not be prepared."
	}
	if d.Player == nil {
		// Anyone may ask for any external ID: an article that is not
		// published as audio yet keeps its title to itself.
		d.Title = d.Heading
	}
	h.render(w, r, http.StatusOK, d)
}

// mediaURLs returns how a page of a project names the media of an audio of
// duration (0 while it is made): by their URLs, or in a signed project with
// a token of their folder (narrator.MediaSubject) that expires soon after
// the audio could have been heard (narrator.MediaTokenExpiry), so that a
// URL copied out of a subscriber's page soon stops working.
func (h *Handler) mediaURLs(access narrator.ProjectAccess, duration time.Duration) func(string) string {
	if access.Mode != narrator.AccessSigned {
		return h.mediaURL
	}
	expires := narrator.MediaTokenExpiry(h.now(), duration)
	return func(key string) string {
		return h.mediaURL(key) + "?token=" + url.QueryEscape(access.MediaToken(key, expires))
	}
}

// statusBody is the answer of the status endpoint.
type statusBody struct {
	State string `json:"state"`
	// LiveMP3URL is the live stream as a growing MP3, once an unprocessed
	// audio's first words are out: the waiting player plays it at once.
	LiveMP3URL string `json:"live_mp3_url,omitempty"`
}

// serveStatus tells a waiting page the state of its audio: "unprocessed",
// "processed" or "failed", or 404 with "not_found"; and, while it is
// made, its live stream once that plays.
func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	var a *narrator.Audio
	var access narrator.ProjectAccess
	l, err := readLookup(r, h.now())
	if err == nil {
		a, access, err = h.find(r.Context(), l)
	}
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		httpapi.WriteJSON(w, http.StatusNotFound, statusBody{State: "not_found"})
		return
	case err != nil:
		if narrator.ErrorCode(err) == narrator.EINTERNAL {
			h.logError(r, err)
		}
		httpapi.WriteError(w, err)
		return
	}
	body := statusBody{State: a.State}
	if a.State == narrator.StateUnprocessed {
		p, err := h.store.SynthesisProgress(r.Context(), a.ID, a.Revision)
		switch {
		case err == nil && p.Current(a) && p.LiveKey != "":
			body.LiveMP3URL = h.mediaURLs(access, 0)(narrator.LiveMP3Key(p.LiveKey))
		case err != nil && narrator.ErrorCode(err) != narrator.ENOTFOUND:
			h.logError(r, err)
			httpapi.WriteError(w, err)
			return
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, body)
}

// eventBody is a listening event as players send it.
type eventBody struct {
	ProjectID int64  `json:"project_id"`
	AudioID   int64  `json:"audio_id"`
	Event     string `json:"event"`
}

// serveEvent counts one listening event, in memory (Listens): the answer
// is 204 whatever the IDs, and costs no database write. The body is a small
// JSON object, sent as application/json or, by navigator.sendBeacon, as
// text/plain. Anything else is refused with a 4xx, and a client over its
// budget with 429; nothing about the sender is stored.
func (h *Handler) serveEvent(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := h.recordEvent(r); err != nil {
		if narrator.ErrorCode(err) == narrator.EINTERNAL {
			h.logError(r, err)
		}
		httpapi.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) recordEvent(r *http.Request) error {
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "application/json" && mediaType != "text/plain" {
		return narrator.Errorf(narrator.EINVALID, "the body must be JSON (application/json or text/plain)")
	}
	if r.ContentLength > maxEventBytes {
		return narrator.Errorf(narrator.ETOOLARGE, "the request body is larger than %d bytes", maxEventBytes)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxEventBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return narrator.Errorf(narrator.ETOOLARGE, "the request body is larger than %d bytes", maxEventBytes)
		}
		return narrator.BodyError(err)
	}
	var e eventBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return narrator.Errorf(narrator.EINVALID, "the body must be a JSON object with project_id, audio_id and event")
	}
	if _, err := dec.Token(); err != io.EOF {
		return narrator.Errorf(narrator.EINVALID, "the body must hold a single JSON object")
	}
	if e.ProjectID <= 0 || e.AudioID <= 0 {
		return narrator.Errorf(narrator.EINVALID, "project_id and audio_id must be positive integers")
	}
	if err := narrator.ValidateListenEvent(e.Event); err != nil {
		return err
	}
	return h.listens.Count(h.clientKey(r), e.ProjectID, e.AudioID, e.Event)
}

// render writes the page with the headers of a page that other sites may
// frame.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	var buf bytes.Buffer
	if err := h.page.Execute(&buf, d); err != nil {
		h.logError(r, fmt.Errorf("render embed page: %w", err))
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString("<!doctype html><title>Error</title><p>The player could not be shown.</p>")
	}
	media := "'self'"
	if h.mediaOrigin != "" {
		media += " " + h.mediaOrigin
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	// Any site may frame the player: that is what it is for. Everything it
	// loads comes from here, except the media, from their origin.
	ancestors := d.frameAncestors
	if ancestors == "" {
		ancestors = "*"
	}
	hdr.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"media-src "+media+"; connect-src "+media+"; form-action 'none'; base-uri 'none'; frame-ancestors "+ancestors)
	hdr.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderMessage writes a page with a message in place of the player.
func (h *Handler) renderMessage(w http.ResponseWriter, r *http.Request, status int, heading, message string) {
	h.render(w, r, status, pageData{Title: heading, Heading: heading, Message: message})
}

// renderError writes the message page of an error.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, err error) {
	switch narrator.ErrorCode(err) {
	case narrator.ENOTFOUND:
		h.renderMessage(w, r, http.StatusNotFound, "This audio is not available", "Sorry, there is no audio for this article.")
	case narrator.EINVALID:
		h.renderMessage(w, r, http.StatusBadRequest, "This player is not set up right", narrator.Sentence(narrator.ErrorMessage(err)))
	default:
		h.logError(r, err)
		h.renderMessage(w, r, http.StatusInternalServerError, "The player is not available", "Something went wrong. Try again in a moment.")
	}
}

func (h *Handler) logError(r *http.Request, err error) {
	h.logger.ErrorContext(r.Context(), "embed request failed", "method", r.Method, "path", r.URL.Path, "err", err)
}

// untitled returns a title for the page, or a placeholder for none.
func untitled(title string) string {
	if strings.TrimSpace(title) == "" {
		return "Listen to this article"
	}
	return title
}

// formatSeconds shows seconds as m:ss, as the player does.
func formatSeconds(s float64) string {
	return formatDuration(int64(s * 1000))
}

// siteName returns the host of an origin, "" for none.
func siteName(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// formatDuration shows milliseconds as m:ss, as the player does.
func formatDuration(ms int64) string {
	sec := ms / 1000
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}
