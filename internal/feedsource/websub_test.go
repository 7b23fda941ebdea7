package feedsource_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/feedsource"
	"github.com/narrator/narrator/internal/fetch"
)

func TestDiscover(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		header     http.Header
		hub, topic string
	}{
		{"atom", `<feed xmlns="http://www.w3.org/2005/Atom"><link rel="hub" href="https://hub.example/"/><link rel='self' href='https://example.com/atom'/></feed>`,
			nil, "https://hub.example/", "https://example.com/atom"},
		{"rss with atom:link", `<rss><channel><atom:link href="https://hub.example/" rel="hub"/></channel></rss>`,
			nil, "https://hub.example/", "https://example.com/feed"},
		{"json feed", `{"version":"https://jsonfeed.org/version/1.1","feed_url":"https://example.com/f.json","hubs":[{"type":"WebSub","url":"https://hub.example/"}]}`,
			nil, "https://hub.example/", "https://example.com/f.json"},
		{"link header", `<rss/>`, http.Header{"Link": {`<https://hub.example/>; rel="hub", <https://example.com/self>; rel="self"`}},
			"https://hub.example/", "https://example.com/self"},
		{"none", `<rss><channel><link>https://example.com/</link></channel></rss>`, nil, "", ""},
		{"not http", `<feed><link rel="hub" href="file:///etc/passwd"/></feed>`, nil, "", ""},
	} {
		hub, topic := feedsource.Discover([]byte(tc.body), tc.header, "https://example.com/feed")
		if hub != tc.hub || topic != tc.topic {
			t.Errorf("%s: Discover = %q, %q; want %q, %q", tc.name, hub, topic, tc.hub, tc.topic)
		}
	}
}

// hub is a WebSub hub written for the test: it verifies each subscription
// at once, then pushes what the test gives it.
type hub struct {
	t        *testing.T
	mu       sync.Mutex
	callback string
	topic    string
	secret   string
}

func (h *hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("hub.mode") != "subscribe" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.callback, h.topic, h.secret = r.Form.Get("hub.callback"), r.Form.Get("hub.topic"), r.Form.Get("hub.secret")
	h.mu.Unlock()
	// Verification of intent, before the hub answers (the spec allows it).
	if got := h.verify(h.topic, "challenge-1"); got != "challenge-1" {
		h.t.Errorf("verification answered %q; want the challenge", got)
	}
	w.WriteHeader(http.StatusAccepted)
}

// verify asks the callback to confirm a subscription to topic.
func (h *hub) verify(topic, challenge string) string {
	q := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.challenge": {challenge}, "hub.lease_seconds": {"3600"}}
	resp, err := http.Get(h.callback + "?" + q.Encode())
	if err != nil {
		h.t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprint(resp.StatusCode)
	}
	return string(body)
}

// push sends body to the callback with a signature header; it returns the
// status.
func (h *hub) push(body, header, signature string) int {
	req, _ := http.NewRequest("POST", h.callback, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/atom+xml")
	if header != "" {
		req.Header.Set(header, signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Error(err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func sign(body, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return fmt.Sprintf("sha256=%x", mac.Sum(nil))
}

func atomFeed(hubURL, self string, ids ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><link rel="hub" href="%s"/><link rel="self" href="%s"/>`, hubURL, self)
	for _, id := range ids {
		fmt.Fprintf(&b, `<entry><id>%s</id><title>Story %s</title><link href="https://example.com/%s"/><content type="html">&lt;p&gt;Text %s.&lt;/p&gt;</content></entry>`, id, id, id, id)
	}
	b.WriteString(`</feed>`)
	return b.String()
}

func TestWebSub(t *testing.T) {
	t.Parallel()
	b := setup(t, fetch.Options{AllowPrivate: true})
	h := &hub{t: t}
	hubSrv := httptest.NewServer(h)
	t.Cleanup(hubSrv.Close)
	var feedBody string
	var mu sync.Mutex
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/atom+xml")
		io.WriteString(w, feedBody)
	}))
	t.Cleanup(feedSrv.Close)
	mux := http.NewServeMux()
	callbacks := httptest.NewServer(mux)
	t.Cleanup(callbacks.Close)
	b.poller = feedsource.New(b.store, feedsource.Options{
		Client:      fetch.New(fetch.Options{AllowPrivate: true}),
		CallbackURL: func(id int64) string { return fmt.Sprintf("%s/websub/%d", callbacks.URL, id) },
	})
	mux.HandleFunc("/websub/{feed_id}", b.poller.Callback)

	self := feedSrv.URL + "/atom"
	feedBody = atomFeed(hubSrv.URL, self, "1")
	src := b.mustSource(t, feedSrv.URL, nil)
	got := b.mustPoll(t, src.ID)
	sub := got.State.WebSub
	if got.State.Created != 1 || sub.Hub != hubSrv.URL || sub.Topic != self || sub.Secret == "" || sub.Secret != h.secret ||
		sub.ExpiresAt.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("after the first read: state %+v; want 1 created and a verified subscription", got.State)
	}
	if h.callback != fmt.Sprintf("%s/websub/%d", callbacks.URL, src.ID) {
		t.Errorf("callback %q", h.callback)
	}
	// A second read does not subscribe again.
	h.secret = ""
	b.mustPoll(t, src.ID)
	if h.secret != "" {
		t.Error("a read with a live subscription subscribed again")
	}

	// A push is narrated before it is answered.
	pushed := atomFeed(hubSrv.URL, self, "2", "1")
	if status := h.push(pushed, "X-Hub-Signature-256", sign(pushed, sub.Secret)); status != http.StatusNoContent {
		t.Fatalf("signed push answered %d", status)
	}
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, narrator.ItemExternalID(src.ID, "2")); err != nil {
		t.Fatalf("the pushed item was not narrated: %v", err)
	}
	// The older header with SHA-1 works too.
	pushed = atomFeed(hubSrv.URL, self, "3", "2", "1")
	mac := hmac.New(sha1.New, []byte(sub.Secret))
	mac.Write([]byte(pushed))
	if status := h.push(pushed, "X-Hub-Signature", fmt.Sprintf("sha1=%x", mac.Sum(nil))); status != http.StatusNoContent {
		t.Fatalf("sha1-signed push answered %d", status)
	}

	// Bad, missing and foreign signatures are refused and change nothing.
	before, _ := b.store.Source(t.Context(), src.ID)
	evil := atomFeed(hubSrv.URL, self, "evil", "3", "2", "1")
	for _, tc := range []struct{ header, sig string }{
		{"X-Hub-Signature-256", sign(evil, "not the secret")},
		{"X-Hub-Signature-256", sign(pushed, sub.Secret)}, // another body's
		{"X-Hub-Signature-256", "sha256=zz"},
		{"X-Hub-Signature", "md5=abc"},
		{"", ""},
	} {
		if status := h.push(evil, tc.header, tc.sig); status != http.StatusUnauthorized {
			t.Errorf("push with %s %q answered %d; want 401", tc.header, tc.sig, status)
		}
	}
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, narrator.ItemExternalID(src.ID, "evil")); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("an unsigned push was narrated: %v", err)
	}
	after, _ := b.store.Source(t.Context(), src.ID)
	if after.State.Created != before.State.Created || !after.State.LastFetchAt.Equal(before.State.LastFetchAt) {
		t.Errorf("a refused push changed the feed: %+v → %+v", before.State, after.State)
	}

	// Verification of anything but Narrator's own subscription fails.
	if got := h.verify("https://elsewhere.example/feed", "c"); got != "404" {
		t.Errorf("verifying another topic answered %q; want 404", got)
	}
	h.callback = fmt.Sprintf("%s/websub/%d", callbacks.URL, src.ID+1000)
	if got := h.verify(self, "c"); got != "404" {
		t.Errorf("verifying an unknown feed answered %q; want 404", got)
	}
}
