// Package mediaserve serves stored media objects (MP3, HLS playlists and
// segments) over public HTTP.
//
// Keys contain a random token and an object never changes once written, so
// responses are cacheable, for an hour, as objects are deleted with their
// audio; the one exception, a live playlist
// (narrator.MediaIsLive), is served to be revalidated on every use, and
// beside it the live stream as a growing MP3 (narrator.LiveMP3Name), which
// the handler makes from the segments as they are stored. Any origin may fetch them, because web
// players (hls.js, <audio>) load them cross-origin. Range requests, HEAD,
// If-Modified-Since and If-None-Match are answered by http.ServeContent.
//
// Mount the handler under a prefix with http.StripPrefix, so that the path it
// sees is the object key:
//
//	mux.Handle("/media/", http.StripPrefix("/media/", mediaserve.New(store, mediaserve.Options{Logger: logger})))
//
// The files of a signed project (narrator.AccessSigned) are served only
// with ?token=, a token of the folder (narrator.MediaSubject) signed with
// the project's secret, and then not to shared caches; without a valid one
// they are a 404 like a missing file. Options.Access finds a folder's
// project; the files of a folder that no audio owns (one a rendering left
// when its process died, until it is swept) are a 404 too.
//
// A client that stops reading cannot hold a connection and its handler
// for good: every write of a response must finish within
// Options.WriteTimeout, which is renewed before each write. Nor can one
// that reads a trickle: with Options.MinRate, the writes may take, in all,
// RateGrace plus the time their bytes take at that rate. Waiting for the
// next segment of a live stream is not writing, and does not count.
package mediaserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// Opener opens stored media objects.
type Opener interface {
	// Open returns the object at key and its info. It returns an error
	// matching narrator.ErrBlobNotFound if there is no object at key, and an
	// EINVALID *narrator.Error if key is malformed.
	Open(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error)
}

// AccessFinder finds who may fetch a folder's files.
type AccessFinder interface {
	// MediaAccess returns the access settings of the project whose media
	// are in folder. It returns ENOTFOUND when no audio owns the folder.
	MediaAccess(ctx context.Context, folder string) (narrator.ProjectAccess, error)
}

// cacheControl is the Cache-Control of every media object but a live
// playlist. An object's content never changes at its URL, whose folder is
// new for every rendering, so revalidation costs a 304; but an object is
// deleted with its audio, so it is never cached for good: caches keep it
// an hour without asking, and a deleted audio lives on in them for at
// most that long.
const cacheControl = "public, max-age=3600"

// RateGrace is how much longer than Options.MinRate allows the writes of
// a response may take in all: a response's first bytes may wait this long.
const RateGrace = 5 * time.Second

// DefaultWriteTimeout is how long one write of a response may take by
// default: a client that reads nothing for this long is cut off.
const DefaultWriteTimeout = 30 * time.Second

// Options configure a Handler.
type Options struct {
	// Logger receives internal errors; discarded if nil.
	Logger *slog.Logger
	// WriteTimeout bounds each write of a response (at most 32 KiB), not
	// the whole response; DefaultWriteTimeout when zero.
	WriteTimeout time.Duration
	// MinRate is the slowest, in bytes per second, a response may be
	// read once RateGrace is spent; 0 sets no minimum.
	MinRate int
	// Access gates the files of signed projects; nil serves every file to
	// anyone.
	Access AccessFinder
	// Now is the clock that expires media tokens; time.Now when nil.
	Now func() time.Time
}

// Handler is the media http.Handler.
type Handler struct {
	store        Opener
	logger       *slog.Logger
	writeTimeout time.Duration
	minRate      int
	live         *liveWatch
	access       AccessFinder
	now          func() time.Time
}

// New returns a Handler that serves the objects of store.
func New(store Opener, opts Options) *Handler {
	h := &Handler{store: store, logger: opts.Logger, writeTimeout: opts.WriteTimeout, minRate: opts.MinRate, access: opts.Access, now: opts.Now}
	if h.now == nil {
		h.now = time.Now
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	if h.writeTimeout <= 0 {
		h.writeTimeout = DefaultWriteTimeout
	}
	h.live = &liveWatch{read: h.read, streams: map[string]*liveStream{}}
	return h
}

const allowedMethods = "GET, HEAD, OPTIONS"

// ServeHTTP serves the object whose key is r.URL.Path (one leading slash is
// ignored). A missing object or a malformed key is a 404 with the v3 error
// body; a method other than GET, HEAD or OPTIONS is a 405.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := newDeadlineWriter(rw, h.writeTimeout, h.minRate)
	defer w.done()
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Access-Control-Expose-Headers", "Content-Length, Content-Range, Accept-Ranges")
	hdr.Set("X-Content-Type-Options", "nosniff")

	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		// CORS preflight: players send Range, which is not a simple header.
		hdr.Set("Allow", allowedMethods)
		hdr.Set("Access-Control-Allow-Methods", allowedMethods)
		hdr.Set("Access-Control-Allow-Headers", "Range")
		hdr.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		hdr.Set("Allow", allowedMethods)
		writeError(w, http.StatusMethodNotAllowed, 10, "Method "+r.Method+" is not allowed; use GET or HEAD")
		return
	}

	key := strings.TrimPrefix(r.URL.Path, "/")
	// Installed voices' models are the operator's, not the public's.
	if narrator.ValidateBlobKey(key) != nil || strings.HasPrefix(key, narrator.VoiceFilePrefix) {
		writeNotFound(w)
		return
	}
	signed, err := h.admit(r, key)
	if err != nil {
		h.openFailed(w, r, key, err)
		return
	}
	if path.Base(key) == narrator.LiveMP3Name {
		h.serveLiveMP3(w, r, key)
		return
	}
	f, info, err := h.store.Open(r.Context(), key)
	if err != nil {
		h.openFailed(w, r, key, err)
		return
	}
	defer f.Close()

	hdr.Set("Content-Type", narrator.MediaContentType(key))
	// Size and time identify an object's content; the ETag makes
	// If-None-Match and If-Range work.
	hdr.Set("ETag", fmt.Sprintf(`"%x-%x"`, info.Size, info.ModTime.UnixNano()))
	modTime := info.ModTime
	if narrator.MediaIsLive(key) {
		// A live playlist grows while its audio is made, and players
		// reload it: every reload must see the latest version, checked by
		// ETag. Last-Modified is left out, as a playlist can change twice
		// within its one-second resolution.
		hdr.Set("Cache-Control", "no-cache")
		modTime = time.Time{}
	} else if signed {
		// A subscriber's copy: no shared cache may hand it to others.
		hdr.Set("Cache-Control", "private, max-age=3600")
	} else {
		// Every other object is never rewritten with other content (each
		// rendering has a folder of its own), but it is deleted with its
		// audio: caches keep it an hour, then revalidate by ETag.
		hdr.Set("Cache-Control", cacheControl)
	}
	// ServeContent answers Range (206, 416), HEAD and conditional requests.
	// On an error status it drops Cache-Control and ETag itself.
	http.ServeContent(&jsonErrors{ResponseWriter: w}, r, "", modTime, f)
}

// admit reports whether the file at key is a signed project's, and returns
// an error matching narrator.ErrBlobNotFound, as for a missing file, if it
// is and the request carries no valid token for its folder, or if no
// audio owns its folder: whose it is, and so who may read it, is unknown.
func (h *Handler) admit(r *http.Request, key string) (bool, error) {
	if h.access == nil {
		return false, nil
	}
	folder, _, _ := strings.Cut(key, "/")
	a, err := h.access.MediaAccess(r.Context(), folder)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return false, fmt.Errorf("media of no audio: %w", narrator.ErrBlobNotFound)
	case err != nil:
		return false, err
	}
	if a.Mode != narrator.AccessSigned {
		return false, nil
	}
	if !narrator.CheckEmbedToken(a.SigningSecret, a.ProjectID, narrator.MediaSubject(folder), r.URL.Query().Get("token"), h.now()) {
		return true, fmt.Errorf("media of a signed project without a valid token: %w", narrator.ErrBlobNotFound)
	}
	return true, nil
}

// deadlineWriter gives every write of a response its own deadline, so
// that a client that stops reading is cut off while one that reads a long
// download at a steady pace is not. The server's WriteTimeout, which
// would bound the whole response, stays zero. With a minimum rate, the
// deadline is also no later than what the bytes written so far earned:
// RateGrace plus their time at the rate, less the time already spent in
// writes.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	rate    int // bytes per second; 0 for no minimum

	written int64
	busy    time.Duration // time spent in writes so far
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration, rate int) *deadlineWriter {
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, rate: rate}
}

// Write writes b within the deadline. It hides the ResponseWriter's
// ReadFrom, so that http.ServeContent copies in 32 KiB writes, each under
// its own deadline.
func (w *deadlineWriter) Write(b []byte) (int, error) {
	start := w.extend()
	n, err := w.ResponseWriter.Write(b)
	w.written += int64(n)
	w.busy += time.Since(start)
	return n, err
}

// Flush sends what is buffered within the deadline.
func (w *deadlineWriter) Flush() error {
	start := w.extend()
	err := w.rc.Flush()
	w.busy += time.Since(start)
	return err
}

// extend sets the deadline of the next write and returns the time it set
// it at.
func (w *deadlineWriter) extend() time.Time {
	now := time.Now()
	d := w.timeout
	if w.rate > 0 {
		d = min(d, RateGrace+time.Duration(w.written)*time.Second/time.Duration(w.rate)-w.busy)
	}
	// A writer that cannot take deadlines (a test recorder) writes without.
	_ = w.rc.SetWriteDeadline(now.Add(d))
	return now
}

// done sends the rest of the response within the timeout, then lifts the
// deadline: the server, with no WriteTimeout, does not reset it for the
// next request on the connection.
func (w *deadlineWriter) done() {
	_ = w.Flush()
	_ = w.rc.SetWriteDeadline(time.Time{})
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// openFailed answers a request whose object could not be opened.
func (h *Handler) openFailed(w http.ResponseWriter, r *http.Request, key string, err error) {
	switch {
	case errors.Is(err, narrator.ErrBlobNotFound), narrator.ErrorCode(err) == narrator.EINVALID:
		writeNotFound(w)
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// the client went away
	case narrator.ErrorCode(err) == narrator.EUNAVAILABLE:
		h.logger.WarnContext(r.Context(), "open media: unavailable", "key", key, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(int(narrator.UnavailableRetryAfter.Seconds())))
		writeError(w, http.StatusServiceUnavailable, 50, narrator.ErrorMessage(err))
	default:
		h.logger.ErrorContext(r.Context(), "open media", "key", key, "err", err)
		writeError(w, http.StatusInternalServerError, 50, "Internal error")
	}
}

// jsonErrors turns the plain-text errors of http.ServeContent (416 for a
// range past the end, 412 for a failed precondition) into the v3 error body.
type jsonErrors struct {
	http.ResponseWriter
	failed bool
}

// WriteHeader writes the v3 error body in place of an error status's text.
func (w *jsonErrors) WriteHeader(status int) {
	if status < 400 {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.failed = true
	writeError(w.ResponseWriter, status, 10, http.StatusText(status))
}

// Write drops the text that follows an error status.
func (w *jsonErrors) Write(b []byte) (int, error) {
	if w.failed {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// errorBody is the v3 error response.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, 30, "Object not found")
}

// writeError writes the v3 error body. Errors are never cached: a missing
// object may be published a moment later.
func writeError(w http.ResponseWriter, status, code int, message string) {
	body, _ := json.Marshal(errorBody{Code: code, Message: message}) // cannot fail
	body = append(body, '\n')
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
