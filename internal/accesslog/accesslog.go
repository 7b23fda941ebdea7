// Package accesslog wraps the server's handler: every request gets a
// request ID, echoed in the X-Request-Id response header, and one access
// log line when its answer ends; an Observer (the metrics) is told its
// route, status and duration.
//
// Secrets never reach the line: it holds no header, values of query
// parameters that carry keys or tokens are replaced, and paths that hold a
// secret token (a private feed's) are cut after their prefix.
package accesslog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Header is the request and response header that carries the request ID.
const Header = "X-Request-Id"

// MaxIDLen bounds a request ID taken from a client.
const MaxIDLen = 128

// Observer is told of every answered request. route is the ServeMux
// pattern that matched it ("" if none did), never the raw path.
type Observer interface {
	ObserveRequest(route, method string, code int, took time.Duration)
}

// Options configures the middleware.
type Options struct {
	// Logger receives one line per request, at Info.
	Logger *slog.Logger
	// Observer, if not nil, is told of every request.
	Observer Observer
	// SecretPrefixes are path prefixes whose remainder is a secret, such
	// as "/feeds/" (a private feed's token): such paths are logged as the
	// prefix followed by "REDACTED".
	SecretPrefixes []string
}

// Middleware returns the access-log middleware.
func Middleware(opts Options) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get(Header)
			if !validID(id) {
				id = newID()
			}
			w.Header().Set(Header, id)
			// The line is logged with the context as it came, so that a
			// ContextHandler does not add the ID a second time.
			logCtx := r.Context()
			r = r.WithContext(context.WithValue(logCtx, idKey{}, id))
			rec := &recorder{ResponseWriter: w}
			defer func() {
				// A panic that net/http recovers (ErrAbortHandler) still
				// gets its line; the status is what was sent, if anything.
				took := time.Since(start)
				code := rec.code
				if code == 0 {
					code = http.StatusOK
				}
				// The muxes set Pattern on this very request as they route
				// it; nested muxes overwrite it with the most specific one.
				if opts.Observer != nil {
					opts.Observer.ObserveRequest(r.Pattern, r.Method, code, took)
				}
				opts.Logger.LogAttrs(logCtx, slog.LevelInfo, "request",
					slog.String("method", r.Method),
					slog.String("route", r.Pattern),
					slog.String("path", opts.redactPath(r.URL.Path)),
					slog.String("query", redactQuery(r.URL.RawQuery)),
					slog.Int("status", code),
					slog.Int64("bytes", rec.bytes),
					slog.Duration("duration", took),
					slog.String("request_id", id),
					slog.String("remote", r.RemoteAddr),
				)
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// idKey is the context key of the request ID.
type idKey struct{}

// RequestID returns the ID of the request whose context ctx is, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(idKey{}).(string)
	return id
}

// validID reports whether a client's request ID is one to keep: not empty,
// bounded, and printable ASCII without spaces, so that it cannot forge log
// lines or headers.
func validID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := range len(id) {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// idPrefix starts every request ID this process makes: 16 random hex
// digits, so that two nodes' IDs do not meet.
var idPrefix = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}()

// idCount numbers the request IDs this process makes.
var idCount atomic.Uint64

// newID returns a new request ID of 32 hex digits: the process's random
// prefix and a count. A request ID tells lines apart; it is no secret, so
// it takes no random read per request.
func newID() string {
	var b [32]byte
	copy(b[:16], idPrefix)
	n := idCount.Add(1)
	for i := 31; i >= 16; i-- {
		b[i] = "0123456789abcdef"[n&15]
		n >>= 4
	}
	return string(b[:])
}

// redactPath cuts a path that holds a secret after its prefix.
func (o Options) redactPath(p string) string {
	for _, prefix := range o.SecretPrefixes {
		if strings.HasPrefix(p, prefix) && len(p) > len(prefix) {
			return prefix + "REDACTED"
		}
	}
	return p
}

// secretParam reports whether a query parameter's value may be a secret:
// an API key, a token, a password, a signature or a session.
func secretParam(name string) bool {
	name = strings.ToLower(name)
	for _, s := range []string{"key", "token", "secret", "pass", "auth", "sig", "session", "cookie", "credential"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// redactQuery replaces the values of secret parameters by "REDACTED",
// keeping the query otherwise as it came. A query whose names do not
// unescape, or with a semicolon (which Go's parser refuses, so that a name
// behind it would not be seen), is dropped whole, since what it holds is
// unknown.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	if strings.ContainsRune(raw, ';') {
		return "UNPARSED"
	}
	var b strings.Builder
	for part := range strings.SplitSeq(raw, "&") {
		name, _, hasValue := strings.Cut(part, "=")
		unescaped, err := url.QueryUnescape(name)
		if err != nil {
			return "UNPARSED"
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		if hasValue && secretParam(unescaped) {
			b.WriteString(name)
			b.WriteString("=REDACTED")
			continue
		}
		b.WriteString(part)
	}
	return b.String()
}

// recorder remembers the status and counts the bytes of an answer.
type recorder struct {
	http.ResponseWriter
	code  int
	bytes int64
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 && code >= 200 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer
// (flushes, per-write deadlines).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ReadFrom implements io.ReaderFrom, so that media copied from files
// still reach the connection with sendfile.
func (r *recorder) ReadFrom(src io.Reader) (int64, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := io.Copy(r.ResponseWriter, src)
	r.bytes += n
	return n, err
}

// ContextHandler is a slog.Handler that adds the request ID of the
// record's context, if it has one, to every record logged with a context
// (ErrorContext and the like), so that a handler's error line and its
// access line share it.
type ContextHandler struct {
	slog.Handler
}

// Handle implements slog.Handler.
func (h ContextHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := RequestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

// WithAttrs implements slog.Handler.
func (h ContextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return ContextHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h ContextHandler) WithGroup(name string) slog.Handler {
	return ContextHandler{h.Handler.WithGroup(name)}
}
