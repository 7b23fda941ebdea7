package fetch

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// TestSelfRefused: a client never reads the server it runs in, whatever
// name or address the URL gives: by its IP, by another name, by a name
// with a trailing dot, with private addresses allowed (as with
// --webhooks-allow-private) or not.
func TestSelfRefused(t *testing.T) {
	t.Parallel()
	self := NewSelf("https://narr.test")
	srv, hits := countingServer(t, self.Mark(http.HandlerFunc(html)).ServeHTTP)
	self.Listening(srv.Listener.Addr())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	resolver := fakeResolver{"narr.test.": "127.0.0.1", "alias.test": "127.0.0.1", "localhost": "127.0.0.1"}
	private := New(Options{AllowPrivate: true, Self: self, Resolver: resolver})
	public := publicLoopback(srv, Options{Self: self, Resolver: resolver})
	for _, c := range []*Client{private, public} {
		for _, u := range []string{
			srv.URL + "/feeds/token.xml",
			"http://narr.test.:" + port + "/feeds/token.xml",
			"http://alias.test:" + port + "/feeds/token.xml",
			"http://localhost:" + port + "/api/v3/openapi.json",
		} {
			for _, robots := range []bool{false, true} {
				_, err := c.Get(t.Context(), Request{URL: u, What: "feed", Robots: robots})
				wantReason(t, err, "the feed is at Narrator's own address")
				if !errors.Is(err, ErrSelf) {
					t.Errorf("%s: error %v does not match ErrSelf", u, err)
				}
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests; want each refused before it is sent", n)
	}
}

// TestSelfAnswerRefused: the server reached where the client cannot tell
// by the address (behind a proxy, or a translated address) is known by the
// marker on its answers, on the answer itself or on a redirect; another
// installation's answers are read.
func TestSelfAnswerRefused(t *testing.T) {
	t.Parallel()
	self := NewSelf("https://narr.test")
	other, otherHits := countingServer(t, NewSelf("https://other.example").Mark(http.HandlerFunc(html)).ServeHTTP)
	narrator := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		self.Mark(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/go" {
				http.Redirect(w, r, other.URL, http.StatusFound)
				return
			}
			html(w, r)
		})).ServeHTTP(w, r)
	})
	c := New(Options{AllowPrivate: true, Self: self})
	for _, u := range []string{narrator.URL + "/feeds/token.xml", narrator.URL + "/go"} {
		_, err := c.Get(t.Context(), Request{URL: u, What: "page"})
		wantReason(t, err, "the page is at Narrator's own address; Narrator does not read its own answers")
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, narrator.URL, nil)
	if _, err := c.Do(req); !errors.Is(err, ErrSelf) || Describe(err) != "the address is Narrator's own; Narrator does not read its own answers" {
		t.Errorf("Do: %v; want ErrSelf", err)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
	if _, err := c.Get(t.Context(), Request{URL: other.URL, What: "page"}); err != nil {
		t.Errorf("another installation's page: %v", err)
	}
	if _, err := New(Options{AllowPrivate: true}).Get(t.Context(), Request{URL: narrator.URL}); err != nil {
		t.Errorf("a client with no Self: %v", err)
	}
}

// TestSelfOwns: a listener on the unspecified address answers on every
// address of the machine, on its port only.
func TestSelfOwns(t *testing.T) {
	t.Parallel()
	self := NewSelf("https://narr.test")
	self.local = func() ([]net.Addr, error) {
		return []net.Addr{
			&net.IPNet{IP: net.ParseIP("192.0.2.10"), Mask: net.CIDRMask(24, 32)},
			&net.IPNet{IP: net.ParseIP("2001:db8::10"), Mask: net.CIDRMask(64, 128)},
		}, nil
	}
	self.Listening(net.TCPAddrFromAddrPort(netip.MustParseAddrPort("0.0.0.0:8080")))
	self.Listening(net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:9090")))
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":           true,
		"127.0.0.2:8080":           true,
		"[::1]:8080":               true,
		"0.0.0.0:8080":             true,
		"192.0.2.10:8080":          true,
		"[2001:db8::10]:8080":      true,
		"[::ffff:192.0.2.10]:8080": true,
		"192.0.2.11:8080":          false,
		"192.0.2.10:8081":          false,
		"127.0.0.1:9090":           true,
		"127.0.0.2:9090":           false,
		"not an address":           false,
	} {
		if got := self.owns(addr); got != want {
			t.Errorf("owns(%s) = %v, want %v", addr, got, want)
		}
	}
	var none *Self
	if none.owns("127.0.0.1:8080") || none.answered(http.Header{SelfHeader: {strings.Repeat("0", 32)}}) {
		t.Error("a nil Self owns something")
	}
}
