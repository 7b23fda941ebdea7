// Package fetch is the one way Narrator reaches out to a URL someone else
// chose: a page to import, a webhook endpoint. Every such URL is hostile
// until proven otherwise, so the client:
//   - dials only public unicast addresses, checked on the address actually
//     dialled, after name resolution (a net.Dialer Control), so neither a
//     name that resolves to a private address, nor DNS rebinding, nor a
//     redirect reaches inside the server's network, unless the operator
//     allows it (Options.AllowPrivate);
//   - speaks http and https only, ignores proxy settings, follows at most
//     five redirects, and sends a request's own headers after a redirect
//     only to the same scheme, host and port, so never from https to http;
//   - never reads the Narrator server it runs in (Options.Self), by the
//     address dialled or by the marker on its answers;
//   - bounds connecting, waiting for headers, and the whole exchange;
//   - caps the body, after decompression too (it asks for gzip and decodes
//     it itself, so a gzip bomb stops at the cap);
//   - checks the content type against what the caller can read;
//   - names itself in its User-Agent, and honours robots.txt where asked.
//
// Errors of Get are *Error values whose text a user can read.
package fetch

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults of Options.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultTimeout        = 30 * time.Second
	DefaultMaxRedirects   = 5
	DefaultMaxBytes       = 8 << 20
	// DefaultUserAgent names Narrator and where to read about it.
	DefaultUserAgent = "Narrator/1 (+https://github.com/narrator/narrator)"
	// RobotsAgent is the product token robots.txt groups are matched on.
	RobotsAgent = "Narrator"
)

// robotsTTL is how long a host's robots.txt is trusted.
const robotsTTL = 5 * time.Minute

// maxRobotsHosts bounds the robots.txt cache; past it, the cache starts
// again empty.
const maxRobotsHosts = 1024

// Resolver looks host names up; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configures a Client. Zero values take the defaults.
type Options struct {
	// AllowPrivate lets the client reach loopback, private, link-local and
	// other internal addresses. Off in production: the URLs it fetches are
	// whatever a customer typed.
	AllowPrivate bool
	// ConnectTimeout bounds one TCP connect; HeaderTimeout the wait for a
	// response's headers (and a TLS handshake); Timeout a whole Get,
	// redirects and body included.
	ConnectTimeout, HeaderTimeout, Timeout time.Duration
	// MaxRedirects is how many redirects a request follows;
	// DefaultMaxRedirects when 0, none when negative.
	MaxRedirects int
	// MaxBytes caps a body Get reads, after decompression;
	// DefaultMaxBytes when 0.
	MaxBytes int64
	// UserAgent is sent with every request; DefaultUserAgent when empty.
	UserAgent string
	// Resolver looks host names up; net.DefaultResolver when nil. Tests
	// inject one to play a name that resolves to a private address.
	Resolver Resolver
	// Logger gets a line per refused address; discarded when nil.
	Logger *slog.Logger
	// Now is the clock of the robots.txt cache; time.Now when nil.
	Now func() time.Time
	// RootCAs are the certificate authorities https servers are checked
	// against; the system's when nil. Tests trust their own server with it.
	RootCAs *x509.CertPool
	// Self is the Narrator server the client runs in, whose addresses
	// and answers it refuses; nil refuses none.
	Self *Self
}

// Client fetches URLs. It is safe for concurrent use.
type Client struct {
	opts      Options
	transport *http.Transport
	// check is the address check of every dial; CheckAddress but in
	// tests that let one loopback server pass for a public one.
	check func(address string) error

	mu     sync.Mutex
	robots map[string]robotsEntry // by scheme://host:port
}

type robotsEntry struct {
	robots  *Robots
	err     error
	expires time.Time
}

// New returns a client.
func New(opts Options) *Client {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.HeaderTimeout <= 0 {
		opts.HeaderTimeout = DefaultHeaderTimeout
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	opts.MaxRedirects = max(opts.MaxRedirects, 0)
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Client{opts: opts, robots: map[string]robotsEntry{}, check: CheckAddress}
	c.transport = &http.Transport{
		// A proxy would connect on our behalf to addresses we must not
		// reach.
		Proxy:                 nil,
		DialContext:           c.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   opts.HeaderTimeout,
		ResponseHeaderTimeout: opts.HeaderTimeout,
		// Get asks for gzip and decodes it itself, under the size cap.
		DisableCompression: true,
	}
	if opts.RootCAs != nil {
		c.transport.TLSClientConfig = &tls.Config{RootCAs: opts.RootCAs}
	}
	return c
}

// dial resolves addr's host with the client's resolver, then connects to
// its addresses in turn. The dialer's Control checks each address as it is
// dialled: whatever the name said, the connection goes nowhere else.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = c.opts.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, &hostError{host: host, err: err}
		}
	}
	d := &net.Dialer{Timeout: c.opts.ConnectTimeout, KeepAlive: 30 * time.Second}
	if !c.opts.AllowPrivate || c.opts.Self != nil {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			var err error
			switch {
			case c.opts.Self.owns(address):
				err = selfError{}
			case !c.opts.AllowPrivate:
				err = c.check(address)
			}
			if err != nil {
				// The address goes to the log only: the error a
				// user reads does not name it.
				c.opts.Logger.Warn("fetch refused", "address", address, "err", err)
			}
			return err
		}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, &hostError{host: host, err: errors.New("no addresses")}
	}
	return nil, errors.Join(errs...)
}

// hostError is a failed name lookup.
type hostError struct {
	host string
	err  error
}

func (e *hostError) Error() string { return "look up " + e.host + ": " + e.err.Error() }
func (e *hostError) Unwrap() error { return e.err }

// Error is the error of Get: Reason is a sentence a user can read, which
// names neither the server's internals nor the URL's query.
type Error struct {
	Reason string
	err    error
}

// Error implements error.
func (e *Error) Error() string { return e.Reason }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.err }

func errorf(err error, format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...), err: err}
}

// Describe says in words a user can read why a request got no answer,
// without the URL, which may carry a token in its query.
func Describe(err error) string {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Reason
	}
	var ae *AddressError
	var he *hostError
	var ue *url.Error
	switch {
	case errors.Is(err, ErrSelf):
		return selfError{}.Error()
	case errors.As(err, &ae):
		return ae.Error()
	case errors.As(err, &he):
		return fmt.Sprintf("the host name %s could not be resolved", he.host)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ue) && ue.Timeout():
		return "no answer within the time limit"
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	case errors.As(err, new(*tls.CertificateVerificationError)), errors.As(err, new(x509.HostnameError)),
		errors.As(err, new(x509.UnknownAuthorityError)), errors.As(err, new(x509.CertificateInvalidError)):
		return "the site's TLS certificate could not be verified"
	case errors.As(err, &ue):
		var re *redirectError
		if errors.As(err, &re) {
			return re.Error()
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			return "the server could not be reached"
		}
		return "the connection failed"
	default:
		return "the connection failed"
	}
}

// redirectError is a redirect the client will not follow.
type redirectError struct{ reason string }

func (e *redirectError) Error() string { return e.reason }

// sameHostHeaders are the headers a request keeps when a redirect takes it
// to another origin: they say nothing about the caller.
var sameHostHeaders = []string{"User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Content-Type", "Content-Length"}

// checkRedirect is the redirect policy of every request: at most
// MaxRedirects, http and https only, no change of method (a 301, 302 or
// 303 after a POST ends the request with the redirect as its answer), and
// the first request's own headers dropped on the way to another origin:
// another scheme (https to http above all), host or port. Go itself keeps
// Authorization and cookies for the same host whatever the scheme; this
// drops them, and everything else a caller set, such as a paywalled
// feed's token or a webhook's signature. A redirect that the server the
// client runs in answered ends the request.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if req.Response != nil && c.opts.Self.answered(req.Response.Header) {
		return selfError{}
	}
	if len(via) > c.opts.MaxRedirects {
		return &redirectError{fmt.Sprintf("stopped after %d redirects", c.opts.MaxRedirects)}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return &redirectError{fmt.Sprintf("a redirect to a %s URL; Narrator fetches only http and https", req.URL.Scheme)}
	}
	if req.Method != via[0].Method {
		return http.ErrUseLastResponse
	}
	if origin(req.URL) != origin(via[0].URL) {
		for name := range req.Header {
			if !slices.Contains(sameHostHeaders, http.CanonicalHeaderKey(name)) {
				req.Header.Del(name)
			}
		}
	}
	return nil
}

// origin returns u's scheme, host and port, in lower case, the port the
// scheme's default when u names none: where a request's own headers may go.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Do sends req as it is, through the guarded transport and the redirect
// policy, and returns the response for the caller to read and close. Only
// the connect and header timeouts apply: req's context bounds the rest. It
// sets the User-Agent unless req has one.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if err := checkScheme(req.URL); err != nil {
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	hc := &http.Client{Transport: c.transport, CheckRedirect: c.checkRedirect}
	resp, err := hc.Do(req)
	if err == nil && c.opts.Self.answered(resp.Header) {
		resp.Body.Close()
		return nil, &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: selfError{}}
	}
	return resp, err
}

func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return errorf(nil, "the URL must start with http:// or https://")
	}
	if u.Host == "" {
		return errorf(nil, "the URL has no host")
	}
	return nil
}

// Request is what Get fetches.
type Request struct {
	// URL is the absolute http or https URL.
	URL string
	// Header holds extra request headers; after a redirect they are sent
	// only to the same scheme, host and port.
	Header http.Header
	// Types are the media types the caller reads ("text/html"); an answer
	// of another type is refused. Empty accepts any.
	Types []string
	// Robots has robots.txt consulted, for the first URL and every
	// redirect: a page the site asks Narrator not to fetch is refused.
	Robots bool
	// What names the thing fetched in errors: "page", "feed".
	What string
}

// Response is what Get read.
type Response struct {
	// URL is where the body came from, after redirects.
	URL *url.URL
	// Header is the final response's header.
	Header http.Header
	// ContentType is the media type of the body, lower case, without
	// parameters; Charset its charset parameter, if any.
	ContentType, Charset string
	// Body is the whole body, decoded from gzip when it came so.
	Body []byte
	// NotModified reports a 304 answer to a conditional request (one
	// whose Header has If-None-Match or If-Modified-Since); Body is then
	// empty.
	NotModified bool
}

// Get fetches r.URL with GET and reads the whole body, within the client's
// timeout and size cap. Any answer but a 2xx of one of r.Types is an
// *Error that says why.
func (c *Client) Get(ctx context.Context, r Request) (*Response, error) {
	if r.What == "" {
		r.What = "page"
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, errorf(err, "the URL is not valid")
	}
	if err := checkScheme(u); err != nil {
		return nil, err
	}
	u.Fragment, u.RawFragment = "", ""
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, errorf(err, "the URL is not valid")
	}
	c.setHeader(req, r)
	if r.Robots {
		if err := c.allowedByRobots(ctx, u); errors.Is(err, ErrSelf) {
			return nil, selfRefusal(err, r.What)
		} else if err != nil {
			return nil, err
		}
	}
	resp, err := c.httpClient(r.Robots).Do(req)
	if err == nil && c.opts.Self.answered(resp.Header) {
		resp.Body.Close()
		err = selfError{}
	}
	if errors.Is(err, ErrSelf) {
		return nil, selfRefusal(err, r.What)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, errorf(err, "the %s did not answer within %s", r.What, c.opts.Timeout)
		}
		return nil, &Error{Reason: Describe(err), err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && (req.Header.Get("If-None-Match") != "" || req.Header.Get("If-Modified-Since") != "") {
		return &Response{URL: resp.Request.URL, Header: resp.Header, NotModified: true}, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errorf(nil, "the %s answered %d %s", r.What, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	out := &Response{URL: resp.Request.URL, Header: resp.Header}
	// A declared type is checked before the body is read; a missing one
	// is sniffed from the body.
	if declared, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
		if err := checkType(strings.ToLower(declared), r); err != nil {
			return nil, err
		}
	}
	body, err := c.readBody(resp, r.What)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, errorf(err, "the %s was not read whole within %s", r.What, c.opts.Timeout)
		}
		return nil, err
	}
	out.Body = body
	out.ContentType, out.Charset = mediaType(resp.Header.Get("Content-Type"), body)
	if err := checkType(out.ContentType, r); err != nil {
		return nil, err
	}
	return out, nil
}

// setHeader sets the request's header: r.Header, then the client's own fields.
func (c *Client) setHeader(req *http.Request, r Request) {
	for k, vs := range r.Header {
		req.Header[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	if len(r.Types) > 0 {
		req.Header.Set("Accept", strings.Join(r.Types, ", ")+", */*;q=0.1")
	}
	req.Header.Set("Accept-Encoding", "gzip")
}

// httpClient returns an HTTP client over the guarded transport that checks each redirect,
// and also asks robots.txt of each redirect's target if robots is true.
func (c *Client) httpClient(robots bool) *http.Client {
	return &http.Client{Transport: c.transport, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if err := c.checkRedirect(next, via); err != nil {
			return err
		}
		if robots {
			return c.allowedByRobots(next.Context(), next.URL)
		}
		return nil
	}}
}

// selfRefusal is the error of Get for a request that would reach, or
// reached, the server the client runs in.
func selfRefusal(err error, what string) *Error {
	return errorf(err, "the %s is at Narrator's own address; Narrator does not read its own answers", what)
}

// checkType refuses a media type that r does not read.
func checkType(mt string, r Request) error {
	if len(r.Types) > 0 && !slices.Contains(r.Types, mt) {
		return errorf(nil, "the %s is %s, not one of %s", r.What, mt, strings.Join(r.Types, ", "))
	}
	return nil
}

// readBody reads resp's body whole, decoding gzip, and refuses one longer
// than the cap before or after decoding.
func (c *Client) readBody(resp *http.Response, what string) ([]byte, error) {
	limit := c.opts.MaxBytes
	tooLarge := errorf(nil, "the %s is larger than %s", what, size(limit))
	if resp.ContentLength > limit {
		return nil, tooLarge
	}
	var body io.Reader = io.LimitReader(resp.Body, limit+1)
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, errorf(err, "the %s is not valid gzip", what)
		}
		defer zr.Close()
		body = zr
	default:
		return nil, errorf(nil, "the %s came in the %q encoding, which Narrator does not read", what, enc)
	}
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	if err != nil {
		if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errorf(err, "the %s was cut short or is not valid gzip", what)
		}
		return nil, errorf(err, "the %s could not be read whole", what)
	}
	return data, nil
}

// size writes n bytes in words: "8 MB", "500 KB", "12 bytes".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KB"
	default:
		return strconv.FormatInt(n, 10) + " bytes"
	}
}

// mediaType returns the media type and charset of a Content-Type header,
// sniffing the body when the header is missing or unreadable.
func mediaType(header string, body []byte) (string, string) {
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || mt == "" {
		mt, params, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	return strings.ToLower(mt), params["charset"]
}

// allowedByRobots returns an *Error if the robots.txt of u's host asks
// Narrator not to fetch u. A robots.txt that answers 4xx allows all; one
// that cannot be read (5xx, no answer) disallows all, as RFC 9309 says.
func (c *Client) allowedByRobots(ctx context.Context, u *url.URL) error {
	rb, err := c.robotsFor(ctx, u)
	if err != nil {
		return err
	}
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if !rb.Allowed(path) {
		return errorf(nil, "the site's robots.txt asks Narrator not to fetch %s", u.EscapedPath())
	}
	return nil
}

// robotsFor returns the robots.txt rules of u's host, from the cache when
// fresh.
func (c *Client) robotsFor(ctx context.Context, u *url.URL) (*Robots, error) {
	key := u.Scheme + "://" + strings.ToLower(u.Host)
	now := c.opts.Now()
	c.mu.Lock()
	e, ok := c.robots[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.robots, e.err
	}
	rb, err := c.readRobots(ctx, key)
	if ctx.Err() != nil {
		return nil, err // not the site's fault: not cached
	}
	c.mu.Lock()
	if len(c.robots) >= maxRobotsHosts {
		clear(c.robots)
	}
	c.robots[key] = robotsEntry{robots: rb, err: err, expires: now.Add(robotsTTL)}
	c.mu.Unlock()
	return rb, err
}

// readRobots fetches and parses origin + "/robots.txt".
func (c *Client) readRobots(ctx context.Context, origin string) (*Robots, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/robots.txt", nil)
	if err != nil {
		return nil, errorf(err, "the URL is not valid")
	}
	resp, err := c.Do(req)
	if errors.Is(err, ErrRefused) || errors.Is(err, ErrSelf) {
		return nil, errorf(err, "%s", Describe(err))
	}
	if err != nil {
		return nil, errorf(err, "the site's robots.txt could not be read (%s), so Narrator does not fetch from it", Describe(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxRobotsBytes))
		if err != nil {
			return nil, errorf(err, "the site's robots.txt could not be read whole, so Narrator does not fetch from it")
		}
		return ParseRobots(data, RobotsAgent), nil
	case resp.StatusCode >= 400 && resp.StatusCode <= 499:
		return &Robots{}, nil
	default:
		return nil, errorf(nil, "the site's robots.txt answered %d %s, so Narrator does not fetch from it", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
}
