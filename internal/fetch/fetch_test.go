package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pageTypes are what a page fetch accepts in these tests.
var pageTypes = []string{"text/html", "application/xhtml+xml"}

const page = "<!doctype html><html><head><title>T</title></head><body><p>Hello.</p></body></html>"

// mustServer starts a loopback server for the test.
func mustServer(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// countingServer is mustServer that counts the requests h serves.
func countingServer(tb testing.TB, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	tb.Helper()
	var n atomic.Int32
	return mustServer(tb, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}), &n
}

func html(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(page))
}

// wantReason fails the test unless err is an *Error whose reason contains
// want.
func wantReason(t *testing.T, err error, want string) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, want) {
		t.Fatalf("error = %v; want an *Error saying %q", err, want)
	}
}

func TestGetReadsAPage(t *testing.T) {
	t.Parallel()
	var ua atomic.Value
	srv := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.Header.Get("User-Agent"))
		html(w, r)
	})
	c := New(Options{AllowPrivate: true})
	resp, err := c.Get(t.Context(), Request{URL: srv.URL + "/a#frag", Types: pageTypes})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != page || resp.ContentType != "text/html" || resp.Charset != "utf-8" {
		t.Errorf("response = %q %q %q", resp.Body, resp.ContentType, resp.Charset)
	}
	if got := ua.Load(); got != DefaultUserAgent {
		t.Errorf("User-Agent = %q, want %q", got, DefaultUserAgent)
	}
}

func TestRefusesLoopbackUnlessAllowed(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t, html)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := New(Options{})
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/"} {
		_, err := c.Get(t.Context(), Request{URL: u, Types: pageTypes})
		wantReason(t, err, "is loopback; Narrator does not fetch loopback addresses")
		if !errors.Is(err, ErrRefused) {
			t.Errorf("error %v does not match ErrRefused", err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the server got %d requests", hits.Load())
	}
}

// fakeResolver answers every name from its map.
type fakeResolver map[string]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ip, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(ip)}, nil
}

func TestRefusesNamesThatResolveInside(t *testing.T) {
	t.Parallel()
	resolver := fakeResolver{"news.example": "10.0.0.5", "rebound.example": "127.0.0.1", "meta.example": "169.254.169.254"}
	c := New(Options{Resolver: resolver})
	for host, want := range map[string]string{
		"news.example":    "the site's address is private; Narrator does not fetch private addresses",
		"rebound.example": "the site's address is loopback",
		"meta.example":    "the site's address is link-local",
		"gone.example":    "the host name gone.example could not be resolved",
	} {
		_, err := c.Get(t.Context(), Request{URL: "http://" + host + "/story", Types: pageTypes})
		wantReason(t, err, want)
		// The refusal does not say where inside the name points.
		if ip, ok := resolver[host]; ok && strings.Contains(err.Error(), ip) {
			t.Errorf("%s: error %q names the address %s", host, err, ip)
		}
	}
}

// publicLoopback returns a client that treats srv's loopback address as a
// public one, and refuses every other internal address: a stand-in for a
// public site.
func publicLoopback(srv *httptest.Server, opts Options) *Client {
	c := New(opts)
	public := srv.Listener.Addr().String()
	c.check = func(address string) error {
		if address == public {
			return nil
		}
		return CheckAddress(address)
	}
	return c
}

func TestRefusesRedirectToLoopback(t *testing.T) {
	t.Parallel()
	internal, inside := countingServer(t, html)
	public := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/admin", http.StatusFound)
	})
	c := publicLoopback(public, Options{})
	_, err := c.Get(t.Context(), Request{URL: public.URL, Types: pageTypes})
	wantReason(t, err, "is loopback")
	if inside.Load() != 0 {
		t.Errorf("the internal server got %d requests", inside.Load())
	}
}

func TestRedirectsLimited(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	c := New(Options{AllowPrivate: true})
	_, err := c.Get(t.Context(), Request{URL: srv.URL, Types: pageTypes})
	wantReason(t, err, "stopped after 5 redirects")
	if hits.Load() != 6 {
		t.Errorf("server saw %d requests; want the first and 5 redirects", hits.Load())
	}

	done := mustServer(t, html)
	hops := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, done.URL, http.StatusMovedPermanently)
	})
	if _, err := c.Get(t.Context(), Request{URL: hops.URL, Types: pageTypes}); err != nil {
		t.Errorf("one redirect: %v", err)
	}
	ftp := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/x", http.StatusFound)
	})
	_, err = c.Get(t.Context(), Request{URL: ftp.URL, Types: pageTypes})
	wantReason(t, err, "only http and https")
	_, err = c.Get(t.Context(), Request{URL: "file:///etc/passwd"})
	wantReason(t, err, "must start with http:// or https://")
}

func TestHeadersStayWithTheirHost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name+r.URL.Path] = r.Header.Get("X-Feed-Token") + "|" + r.Header.Get("User-Agent")
			mu.Unlock()
			html(w, r)
		}
	}
	other := mustServer(t, record("other"))
	srv := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/landed", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
		default:
			record("srv")(w, r)
		}
	})
	c := New(Options{AllowPrivate: true})
	h := http.Header{"X-Feed-Token": {"secret"}}
	for _, path := range []string{"/same", "/away"} {
		if _, err := c.Get(t.Context(), Request{URL: srv.URL + path, Header: h, Types: pageTypes}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := seen["srv/landed"], "secret|"+DefaultUserAgent; got != want {
		t.Errorf("same host after a redirect got %q, want %q", got, want)
	}
	if got, want := seen["other/landed"], "|"+DefaultUserAgent; got != want {
		t.Errorf("another host after a redirect got %q, want %q (no token)", got, want)
	}
}

func TestBodyCapped(t *testing.T) {
	t.Parallel()
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	chunk := make([]byte, 1<<20)
	for range 16 {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	gz := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb.Bytes())
	})
	endless := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		buf := bytes.Repeat([]byte("<p>more</p>"), 1000)
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	})
	c := New(Options{AllowPrivate: true, MaxBytes: 1 << 20})
	for name, srv := range map[string]*httptest.Server{"gzip bomb": gz, "endless body": endless} {
		_, err := c.Get(t.Context(), Request{URL: srv.URL, Types: pageTypes})
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		wantReason(t, err, "the page is larger than 1 MB")
	}

	small := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = zw.Write([]byte(page))
		_ = zw.Close()
	})
	resp, err := c.Get(t.Context(), Request{URL: small.URL, Types: pageTypes})
	if err != nil {
		t.Fatalf("gzip page: %v", err)
	}
	if string(resp.Body) != page {
		t.Errorf("gzip page = %q", resp.Body)
	}
}

func TestContentTypeChecked(t *testing.T) {
	t.Parallel()
	srv := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write([]byte("%PDF-1.7"))
		case "/sniffed":
			w.Header()["Content-Type"] = nil // no header at all: sniffed
			_, _ = w.Write([]byte(page))
		case "/endless.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			for r.Context().Err() == nil {
				if _, err := w.Write(make([]byte, 64<<10)); err != nil {
					return
				}
			}
		case "/missing":
			http.NotFound(w, r)
		}
	})
	c := New(Options{AllowPrivate: true})
	_, err := c.Get(t.Context(), Request{URL: srv.URL + "/pdf", Types: pageTypes})
	wantReason(t, err, "the page is application/pdf, not one of text/html, application/xhtml+xml")
	// A declared type is refused before the body is read.
	_, err = c.Get(t.Context(), Request{URL: srv.URL + "/endless.pdf", Types: pageTypes})
	wantReason(t, err, "the page is application/pdf")
	if _, err := c.Get(t.Context(), Request{URL: srv.URL + "/sniffed", Types: pageTypes}); err != nil {
		t.Errorf("sniffed HTML: %v", err)
	}
	_, err = c.Get(t.Context(), Request{URL: srv.URL + "/missing", Types: pageTypes})
	wantReason(t, err, "the page answered 404 Not Found")
}

func TestSlowServer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<p>first"))
			w.(http.Flusher).Flush()
		}
		select { // never answers on its own
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	c := New(Options{AllowPrivate: true, Timeout: 100 * time.Millisecond})
	_, err := c.Get(t.Context(), Request{URL: srv.URL + "/headers", Types: pageTypes})
	wantReason(t, err, "the page did not answer within 100ms")
	_, err = c.Get(t.Context(), Request{URL: srv.URL + "/body", Types: pageTypes})
	wantReason(t, err, "the page was not read whole within 100ms")
}

func TestRobotsHonoured(t *testing.T) {
	t.Parallel()
	var robotsReads atomic.Int32
	srv := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsReads.Add(1)
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /members/\n"))
			return
		}
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/members/story", http.StatusFound)
			return
		}
		html(w, r)
	})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	c := New(Options{AllowPrivate: true, Now: func() time.Time { return *clock.Load() }})
	get := func(path string, robots bool) error {
		_, err := c.Get(t.Context(), Request{URL: srv.URL + path, Types: pageTypes, Robots: robots})
		return err
	}
	if err := get("/news/story", true); err != nil {
		t.Fatal(err)
	}
	wantReason(t, get("/members/story", true), "the site's robots.txt asks Narrator not to fetch /members/story")
	wantReason(t, get("/moved", true), "robots.txt asks Narrator not to fetch")
	// Paths the site reads as a disallowed one are refused too.
	for _, path := range []string{"//members/story", "/%6Dembers/story", "/news/../members/story"} {
		wantReason(t, get(path, true), "robots.txt asks Narrator not to fetch")
	}
	if err := get("/members/story", false); err != nil {
		t.Errorf("without Robots: %v", err)
	}
	if n := robotsReads.Load(); n != 1 {
		t.Errorf("robots.txt read %d times; want once, then cached", n)
	}
	later := now.Add(robotsTTL + time.Second)
	clock.Store(&later)
	if err := get("/news/story", true); err != nil || robotsReads.Load() != 2 {
		t.Errorf("after the cache expired: %v, %d reads; want a second read", err, robotsReads.Load())
	}
}

func TestRobotsUnreadable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   string // "" when the page is fetched
	}{
		{http.StatusNotFound, ""},
		{http.StatusForbidden, ""},
		{http.StatusServiceUnavailable, "the site's robots.txt answered 503 Service Unavailable"},
	} {
		srv := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.WriteHeader(tc.status)
				return
			}
			html(w, r)
		})
		c := New(Options{AllowPrivate: true})
		_, err := c.Get(t.Context(), Request{URL: srv.URL + "/a", Types: pageTypes, Robots: true})
		if tc.want == "" {
			if err != nil {
				t.Errorf("robots.txt %d: %v", tc.status, err)
			}
			continue
		}
		wantReason(t, err, tc.want)
	}
}

func TestUnverifiedCertificate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(html))
	t.Cleanup(srv.Close)
	_, err := New(Options{AllowPrivate: true}).Get(t.Context(), Request{URL: srv.URL, Types: pageTypes})
	wantReason(t, err, "the site's TLS certificate could not be verified")
}

func TestDoKeepsTheMethod(t *testing.T) {
	t.Parallel()
	srv := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/in" {
			http.Redirect(w, r, "/out", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := New(Options{AllowPrivate: true})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/in", strings.NewReader("{}"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status = %d; want the 302 itself, not a GET of /out", resp.StatusCode)
	}
	u, _ := url.Parse("gopher://x")
	if _, err := c.Do(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}); err == nil {
		t.Error("Do sent a gopher request")
	}
}

// TestHeadersNeverDowngrade: a feed's own headers (its credentials) follow
// a redirect only to the same scheme, host and port. The host name is the
// same on both servers, each on its scheme's default port, as on a real
// site: https://example.com (a TLS server) redirects to
// http://example.com (a plain one).
func TestHeadersNeverDowngrade(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]http.Header{}
	record := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		html(w, r)
	}
	plain := mustServer(t, record)
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/down":
			http.Redirect(w, r, "http://example.com/plain", http.StatusFound)
		case "/port":
			http.Redirect(w, r, "https://example.com:8443/other-port", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "https://example.com/landed", http.StatusFound)
		default:
			record(w, r)
		}
	}))
	t.Cleanup(secure.Close)
	// example.com resolves to loopback; its ports 443 and 80 are the two
	// servers', 8443 the TLS server again.
	c := New(Options{AllowPrivate: true, Resolver: fakeResolver{"example.com": "127.0.0.1"}})
	c.transport.TLSClientConfig = secure.Client().Transport.(*http.Transport).TLSClientConfig
	ports := map[string]string{"443": secure.Listener.Addr().String(), "8443": secure.Listener.Addr().String(), "80": plain.Listener.Addr().String()}
	c.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, _ := net.SplitHostPort(addr)
		_, to, _ := net.SplitHostPort(ports[port])
		return c.dial(ctx, network, net.JoinHostPort("example.com", to))
	}
	h := http.Header{"Authorization": {"Bearer secret"}, "Cookie": {"session=secret"}, "X-Token": {"secret"}}
	for _, path := range []string{"/down", "/port", "/same"} {
		if _, err := c.Get(t.Context(), Request{URL: "https://example.com" + path, Header: h, Types: pageTypes}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	for path, want := range map[string]string{"/plain": "", "/other-port": "", "/landed": "secret"} {
		got := seen[path]
		if got == nil {
			t.Errorf("%s was not reached", path)
			continue
		}
		for _, name := range []string{"Authorization", "Cookie", "X-Token"} {
			if v := got.Get(name); strings.Contains(v, "secret") != (want != "") {
				t.Errorf("%s got %s %q; want the feed's own headers only on the same scheme, host and port", path, name, v)
			}
		}
		if got.Get("User-Agent") != DefaultUserAgent {
			t.Errorf("%s got User-Agent %q", path, got.Get("User-Agent"))
		}
	}
}
