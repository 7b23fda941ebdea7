package feed_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/feed"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/source"
)

// TestFeedNamesHub reads a feed served with a hub as a WebSub subscriber
// does (Narrator's own discovery): it names the hub and its self URL, the
// topic pings name; without a hub it names none.
func TestFeedNamesHub(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const hub = "https://hub.example/"
	self := publicBase + narrator.FeedPath(b.feed.Token)
	// Discovery gives no topic without a hub.
	for _, tc := range []struct{ name, hub, topic string }{{"with a hub", hub, self}, {"without", "", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("/feeds/{name}", feed.New(feed.Config{Store: b.store, MediaURL: func(k string) string { return mediaBase + k },
				PublicURL: publicBase, Hub: tc.hub}))
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			feedURL := srv.URL + narrator.FeedPath(b.feed.Token)
			resp, body := get(t, feedURL, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			gotHub, topic := source.Discover(body, resp.Header, feedURL)
			if gotHub != tc.hub || topic != tc.topic {
				t.Errorf("discovered hub %q, topic %q; want %q, %q", gotHub, topic, tc.hub, tc.topic)
			}
		})
	}
}

// hub is a loopback WebSub hub that records the pings it gets and answers
// each with the next of its statuses (204 once they run out).
type hub struct {
	mu       sync.Mutex
	statuses []int
	pings    []url.Values
	types    []string
}

func (h *hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pings = append(h.pings, r.PostForm)
	h.types = append(h.types, r.Header.Get("Content-Type"))
	status := http.StatusNoContent
	if len(h.statuses) > 0 {
		status, h.statuses = h.statuses[0], h.statuses[1:]
	}
	w.WriteHeader(status)
}

func (h *hub) got() []url.Values {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]url.Values(nil), h.pings...)
}

func TestPinger(t *testing.T) {
	t.Parallel()
	h := &hub{statuses: []int{http.StatusServiceUnavailable}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	const topic = publicBase + "/feeds/abc.xml"
	// Tests allow loopback, which the guarded fetcher refuses by default.
	p := feed.NewPinger(fetch.New(fetch.Options{AllowPrivate: true}))
	if err := p.Ping(t.Context(), srv.URL, topic); err == nil {
		t.Error("no error from a hub that answered 503")
	}
	if err := p.Ping(t.Context(), srv.URL, topic); err != nil {
		t.Errorf("second ping: %v", err)
	}
	if err := feed.NewPinger(fetch.New(fetch.Options{})).Ping(t.Context(), srv.URL, topic); err == nil {
		t.Error("the guarded fetcher reached a loopback hub")
	}
	ping := url.Values{"hub.mode": {"publish"}, "hub.url": {topic}}
	if diff := cmp.Diff([]url.Values{ping, ping}, h.got()); diff != "" {
		t.Errorf("pings (-want +got):\n%s", diff)
	}
	for _, ct := range h.types {
		if ct != "application/x-www-form-urlencoded" {
			t.Errorf("Content-Type %q", ct)
		}
	}
}
