package clientlimit

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/clientip"
)

// BodyGrace is how long a request body may take before MinRate applies:
// its first bytes may come this late, and a body's time may exceed its
// size at MinRate by this much.
const BodyGrace = 5 * time.Second

// RequestOptions configure Requests.
type RequestOptions struct {
	// Clients names the client of a request.
	Clients *clientip.Resolver
	// PerClient caps the requests of one client in flight at once; one
	// more is refused with ERATELIMITED.
	PerClient int
	// Exempt reports whether a request is exempt from PerClient: the
	// health checks. Nil exempts none.
	Exempt func(*http.Request) bool
	// MinRate is the slowest a request body may arrive, in bytes per
	// second, once BodyGrace is spent; a slower one is cut off by a read
	// deadline on the connection. 0 sets no minimum.
	MinRate int
	// BodyTimeout bounds the time a request body may take in all, from
	// when the handler is called, whatever its rate, as the server's
	// ReadTimeout would: the read deadlines MinRate sets replace that
	// one. 0 sets no bound.
	BodyTimeout time.Duration
	// WriteError answers a refused request with the service's error body.
	WriteError func(http.ResponseWriter, error)
}

// Requests returns middleware that caps each client's requests in flight
// and the slowness of request bodies.
func Requests(opts RequestOptions) func(http.Handler) http.Handler {
	var (
		mu       sync.Mutex
		inFlight = map[string]int{}
	)
	take := func(key string) bool {
		mu.Lock()
		defer mu.Unlock()
		if inFlight[key] >= opts.PerClient {
			return false
		}
		inFlight[key]++
		return true
	}
	release := func(key string) {
		mu.Lock()
		defer mu.Unlock()
		if inFlight[key]--; inFlight[key] <= 0 {
			delete(inFlight, key)
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if opts.Exempt == nil || !opts.Exempt(r) {
				key := opts.Clients.Key(r)
				if !take(key) {
					w.Header().Set("Retry-After", "1")
					opts.WriteError(w, narrator.Errorf(narrator.ERATELIMITED,
						"Too many requests from your address at once; wait for one to finish."))
					return
				}
				defer release(key)
			}
			if opts.MinRate > 0 && r.Body != nil && r.Body != http.NoBody {
				rr := &rateReader{ReadCloser: r.Body, rc: http.NewResponseController(w), rate: opts.MinRate, now: time.Now,
					size: r.ContentLength, header: w.Header()}
				if opts.BodyTimeout > 0 {
					rr.end = rr.now().Add(opts.BodyTimeout)
				}
				// An answer given before the body has come closes the
				// connection: else the server would read what is left of the
				// body before answering, under no deadline but the
				// connection's, and a client that stalls would hold it that
				// long on any route that does not read its body (a refusal,
				// a health check). The reader lifts this at the body's end.
				rr.header.Set("Connection", "close")
				r.Body = rr
			}
			next.ServeHTTP(w, r)
		})
	}
}

// rateReader reads a request body under a read deadline that gives each
// Read what the body has earned: BodyGrace, plus the time its bytes so far
// take at the minimum rate, less the time already spent waiting in Read.
// A client that sends one byte and stalls is cut off after BodyGrace; one
// that trickles, once its average falls below the rate.
type rateReader struct {
	io.ReadCloser
	rc   *http.ResponseController
	rate int
	now  func() time.Time

	end   time.Time     // no read past this; zero for no bound
	read  int64         // bytes read so far
	busy  time.Duration // time spent in Read so far
	ended bool          // the body returned an error, EOF included

	size   int64       // the body's Content-Length, -1 when unknown
	header http.Header // the response's, whose "Connection: close" the body's end lifts
}

func (b *rateReader) Read(p []byte) (int, error) {
	if b.ended {
		// Past the end, the server reads the connection in the background
		// with no deadline, and a deadline set now would cut that read,
		// and the request's context with it.
		return b.ReadCloser.Read(p)
	}
	allowance := BodyGrace + time.Duration(b.read)*time.Second/time.Duration(b.rate) - b.busy
	start := b.now()
	deadline := start.Add(allowance)
	if !b.end.IsZero() && b.end.Before(deadline) {
		deadline = b.end
	}
	// A connection that cannot take deadlines (a test recorder) reads
	// without.
	_ = b.rc.SetReadDeadline(deadline)
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	b.busy += b.now().Sub(start)
	b.ended = err != nil
	if err == io.EOF || (b.size >= 0 && b.read >= b.size) {
		// Read whole: the connection may serve the client's next request.
		b.header.Del("Connection")
	}
	return n, err
}
