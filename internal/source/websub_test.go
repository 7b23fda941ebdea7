package source_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/source"
	"github.com/narrator/narrator/internal/storetest"
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
		hub, topic := source.Discover([]byte(tc.body), tc.header, "https://example.com/feed")
		if hub != tc.hub || topic != tc.topic {
			t.Errorf("%s: Discover = %q, %q; want %q, %q", tc.name, hub, topic, tc.hub, tc.topic)
		}
	}
}

// hub is a WebSub hub written for the test, served over https: it records
// each subscription request, verifies it at once unless told to wait, then
// pushes what the test gives it.
type hub struct {
	t        *testing.T
	mu       sync.Mutex
	wait     bool   // leave the verification to the test
	redirect string // answer each request with a 307 there
	requests int
	callback string
	topic    string
	secret   string
}

func (h *hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("hub.mode") != "subscribe" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if h.redirect != "" {
		http.Redirect(w, r, h.redirect, http.StatusTemporaryRedirect)
		return
	}
	h.mu.Lock()
	h.requests++
	h.callback, h.topic, h.secret = r.Form.Get("hub.callback"), r.Form.Get("hub.topic"), r.Form.Get("hub.secret")
	wait := h.wait
	h.mu.Unlock()
	// Verification of intent, before the hub answers (the spec allows it).
	if !wait {
		if got := h.verify(h.topic, "challenge-1"); got != "challenge-1" {
			h.t.Errorf("verification answered %q; want the challenge", got)
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// verify asks the callback to confirm a subscription to topic.
func (h *hub) verify(topic, challenge string) string {
	status, _, body := h.get(url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.challenge": {challenge}, "hub.lease_seconds": {"3600"}})
	if status != http.StatusOK {
		return fmt.Sprint(status)
	}
	return body
}

// get sends the callback a GET of q; it returns the answer.
func (h *hub) get(q url.Values) (int, http.Header, string) {
	resp, err := http.Get(h.callback + "?" + q.Encode())
	if err != nil {
		h.t.Error(err)
		return 0, nil, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// push sends body to the callback with a signature header; it returns the
// status.
func (h *hub) push(body, header, signature string) int {
	status, _ := h.pushAnswer(body, header, signature)
	return status
}

// pushAnswer is push, with the answer's body.
func (h *hub) pushAnswer(body, header, signature string) (int, string) {
	req, _ := http.NewRequest("POST", h.callback, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/atom+xml")
	if header != "" {
		req.Header.Set(header, signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func sign(body, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return fmt.Sprintf("sha256=%x", mac.Sum(nil))
}

// entry is an Atom entry: its ID, its text, and when it was last updated
// (none when zero).
type entry struct {
	id, text string
	updated  time.Time
}

func atomFeed(hubURL, self string, ids ...string) string {
	var es []entry
	for _, id := range ids {
		es = append(es, entry{id: id, text: "Text " + id + "."})
	}
	return atomEntries(hubURL, self, es...)
}

func atomEntries(hubURL, self string, es ...entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><link rel="hub" href="%s"/><link rel="self" href="%s"/>`, hubURL, self)
	for _, e := range es {
		fmt.Fprintf(&b, `<entry><id>%s</id><title>Story %s</title><link href="https://example.com/%s"/>`, e.id, e.id, e.id)
		if !e.updated.IsZero() {
			fmt.Fprintf(&b, `<updated>%s</updated>`, e.updated.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(&b, `<content type="html">&lt;p&gt;%s&lt;/p&gt;</content></entry>`, e.text)
	}
	b.WriteString(`</feed>`)
	return b.String()
}

// webSub is a feed on loopback that advertises a hub, the hub, and a
// poller that serves its callbacks, on a clock the test moves.
type webSub struct {
	*testBundle
	clock     *storetest.Clock
	hub       *hub
	hubURL    string
	callbacks string
	self      string
	mu        sync.Mutex
	feedBody  string
}

// setFeed sets what the feed serves.
func (ws *webSub) setFeed(body string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.feedBody = body
}

// callback returns the callback URL of feed id at nonce.
func (ws *webSub) callback(id int64, nonce string) string {
	return fmt.Sprintf("%s/websub/%d/%s", ws.callbacks, id, nonce)
}

// subscribed adds a source of an Atom feed of one item at b.self that names b's hub, and
// polls it once, which subscribes it; it returns the source as added and as polled.
func (b *webSub) subscribed(t *testing.T) (src, polled *narrator.Source) {
	t.Helper()
	b.setFeed(atomFeed(b.hubURL, b.self, "1"))
	src = b.mustSource(t, b.self, nil)
	return src, b.mustPoll(t, src.ID)
}

// setupWebSub starts a feed, its https hub (plain http when plain is set)
// and a poller serving the callbacks.
func setupWebSub(t *testing.T, plain bool) *webSub {
	t.Helper()
	ws := &webSub{testBundle: setup(t, fetch.Options{AllowPrivate: true}), clock: storetest.NewClock(time.Now().UTC().Truncate(time.Microsecond)), hub: &hub{t: t}}
	var hubSrv *httptest.Server
	if plain {
		hubSrv = httptest.NewServer(ws.hub)
	} else {
		hubSrv = httptest.NewTLSServer(ws.hub)
	}
	t.Cleanup(hubSrv.Close)
	ws.hubURL = hubSrv.URL
	roots := x509.NewCertPool()
	if cert := hubSrv.Certificate(); cert != nil {
		roots.AddCert(cert)
	}
	feedSrv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		w.Header().Set("Content-Type", "application/atom+xml")
		io.WriteString(w, ws.feedBody)
	}))
	ws.self = feedSrv.URL + "/atom"
	mux := http.NewServeMux()
	callbacks := serve(t, mux)
	ws.callbacks = callbacks.URL
	ws.poller = source.New(ws.store, source.Options{
		Client:      fetch.New(fetch.Options{AllowPrivate: true, RootCAs: roots}),
		CallbackURL: ws.callback,
		Now:         ws.clock.Now,
	})
	// As cmd/narrator serves them: with the nonce, and without one or with
	// more segments (the same refusal as a wrong one).
	mux.HandleFunc("/websub/{source_id}/{nonce...}", ws.poller.Callback)
	mux.HandleFunc("/websub/{source_id}", ws.poller.Callback)
	return ws
}

func TestWebSub(t *testing.T) {
	t.Parallel()
	b := setupWebSub(t, false)
	h := b.hub
	self := b.self
	src, got := b.subscribed(t)
	sub := got.State.WebSub
	if got.State.Created != 1 || sub.Hub != b.hubURL || sub.Topic != self || sub.Secret == "" || sub.Secret != h.secret ||
		!sub.ExpiresAt.Equal(b.clock.Now().Add(time.Hour)) || sub.Pending != (narrator.WebSubRequest{}) {
		t.Fatalf("after the first read: state %+v; want 1 created and a verified subscription", got.State)
	}
	if h.callback != b.callback(src.ID, sub.Nonce) || sub.Nonce == "" {
		t.Errorf("callback %q; want one with the nonce %q", h.callback, sub.Nonce)
	}
	// A second read does not subscribe again.
	h.secret = ""
	b.mustPoll(t, src.ID)
	if h.secret != "" {
		t.Error("a read with a live subscription subscribed again")
	}

	// A push is narrated before it is answered.
	pushed := atomFeed(b.hubURL, self, "2", "1")
	if status := h.push(pushed, "X-Hub-Signature-256", sign(pushed, sub.Secret)); status != http.StatusNoContent {
		t.Fatalf("signed push answered %d", status)
	}
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, narrator.ItemExternalID(src.ID, "2")); err != nil {
		t.Fatalf("the pushed item was not narrated: %v", err)
	}
	// The older header with SHA-1 works too.
	pushed = atomFeed(b.hubURL, self, "3", "2", "1")
	mac := hmac.New(sha1.New, []byte(sub.Secret))
	mac.Write([]byte(pushed))
	if status := h.push(pushed, "X-Hub-Signature", fmt.Sprintf("sha1=%x", mac.Sum(nil))); status != http.StatusNoContent {
		t.Fatalf("sha1-signed push answered %d", status)
	}

	// Bad, missing and foreign signatures are refused and change nothing.
	before, _ := b.store.Source(t.Context(), src.ID)
	evil := atomFeed(b.hubURL, self, "evil", "3", "2", "1")
	for _, tc := range []struct{ header, sig string }{
		{"X-Hub-Signature-256", sign(evil, "not the secret")},
		{"X-Hub-Signature-256", sign(pushed, sub.Secret)}, // another body's
		{"X-Hub-Signature-256", "sha256=zz"},
		{"X-Hub-Signature", "md5=abc"},
		{"", ""},
	} {
		if status := h.push(evil, tc.header, tc.sig); status != http.StatusNotFound {
			t.Errorf("push with %s %q answered %d; want 404", tc.header, tc.sig, status)
		}
	}
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, narrator.ItemExternalID(src.ID, "evil")); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("an unsigned push was narrated: %v", err)
	}
	after, _ := b.store.Source(t.Context(), src.ID)
	if after.State.Created != before.State.Created || !after.State.LastFetchAt.Equal(before.State.LastFetchAt) {
		t.Errorf("a refused push changed the feed: %+v → %+v", before.State, after.State)
	}
}

// TestWebSubVerify checks that only the request Narrator sent, while it
// waits, can be verified; that the lease is capped; that the challenge
// cannot be read as anything but text; and that every refusal, of a feed
// that exists or not, GET or POST, is the same answer (issue 32, item 4).
func TestWebSubVerify(t *testing.T) {
	t.Parallel()
	b := setupWebSub(t, false)
	h := b.hub
	h.wait = true
	src, got := b.subscribed(t)
	nonce := got.State.WebSub.Nonce
	if h.requests != 1 || h.callback != b.callback(src.ID, nonce) {
		t.Fatalf("the hub got %d requests for %q", h.requests, h.callback)
	}
	subscribe := func(lease, challenge string) url.Values {
		return url.Values{"hub.mode": {"subscribe"}, "hub.topic": {b.self}, "hub.challenge": {challenge}, "hub.lease_seconds": {lease}}
	}

	// The one refusal: a feed that does not exist, or is not a number.
	type answer struct {
		Status int
		Body   string
	}
	refusal := func(q url.Values) answer {
		t.Helper()
		status, _, body := h.get(q)
		return answer{status, body}
	}
	missing := &hub{t: t, callback: b.callback(src.ID+1000, nonce)}
	status, _, body := missing.get(subscribe("3600", "c"))
	want := answer{status, body}
	if want.Status != http.StatusNotFound {
		t.Fatalf("verifying a missing feed answered %+v", want)
	}
	missing.callback = b.callback(0, nonce) + "x"
	if status, _, body := missing.get(subscribe("3600", "c")); (answer{status, body}) != want {
		t.Errorf("verifying a feed ID that is no number answered %d %q; want %+v", status, body, want)
	}
	for name, q := range map[string]url.Values{
		"another topic": {"hub.mode": {"subscribe"}, "hub.topic": {"https://elsewhere.example/feed"}, "hub.challenge": {"c"}, "hub.lease_seconds": {"60"}},
		"an unsubscribe Narrator never asked for": {"hub.mode": {"unsubscribe"}, "hub.topic": {b.self}, "hub.challenge": {"c"}},
		"no challenge":              {"hub.mode": {"subscribe"}, "hub.topic": {b.self}, "hub.lease_seconds": {"60"}},
		"another mode":              {"hub.mode": {"publish"}, "hub.topic": {b.self}, "hub.challenge": {"c"}},
		"a denial of another topic": {"hub.mode": {"denied"}, "hub.topic": {"https://elsewhere.example/feed"}},
	} {
		if got := refusal(q); got != want {
			t.Errorf("%s answered %+v; want %+v", name, got, want)
		}
	}

	// The hub's verification, asking for a year: the challenge, as text
	// nothing runs, and a lease of narrator.WebSubLease.
	b.clock.Advance(59 * time.Minute)
	status, header, body := h.get(subscribe("31536000", "<script>alert(1)</script>"))
	if status != http.StatusOK || body != "<script>alert(1)</script>" {
		t.Fatalf("the hub's verification answered %d %q; want the challenge", status, body)
	}
	for k, v := range map[string]string{
		"Content-Type":            "text/plain; charset=utf-8",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
	} {
		if header.Get(k) != v {
			t.Errorf("the challenge's %s is %q; want %q", k, header.Get(k), v)
		}
	}
	got, _ = b.store.Source(t.Context(), src.ID)
	if wantExp := b.clock.Now().Add(narrator.WebSubLease); !got.State.WebSub.ExpiresAt.Equal(wantExp) {
		t.Errorf("the lease ends %v; want %v (capped)", got.State.WebSub.ExpiresAt, wantExp)
	}
	// That request is verified: answering it again, or anyone else, is the
	// refusal, and changes nothing.
	if got := refusal(subscribe("31536000", "again")); got != want {
		t.Errorf("a second verification answered %+v; want %+v", got, want)
	}
	again, _ := b.store.Source(t.Context(), src.ID)
	if diff := cmp.Diff(got.State.WebSub, again.State.WebSub); diff != "" {
		t.Errorf("a refused verification changed the subscription (-before +after):\n%s", diff)
	}

	// A push with a bad signature to this subscribed feed is answered as
	// one to a feed that does not exist.
	evil := atomFeed(b.hubURL, b.self, "evil")
	status, body = h.pushAnswer(evil, "X-Hub-Signature-256", sign(evil, "guess"))
	missing.callback = b.callback(src.ID+1000, nonce)
	mstatus, mbody := missing.pushAnswer(evil, "X-Hub-Signature-256", sign(evil, "guess"))
	if (answer{status, body}) != want || (answer{mstatus, mbody}) != want {
		t.Errorf("bad pushes answered %d %q (subscribed) and %d %q (missing); want both %+v", status, body, mstatus, mbody, want)
	}

	// A request the hub does not verify within the hour cannot be
	// verified after it.
	sub := got.State.WebSub
	sub.ExpiresAt = time.Time{}
	sub.Request(narrator.WebSubSubscribe, b.self, b.clock.Now())
	if err := b.store.SetSubscription(t.Context(), src.ID, sub); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Hour)
	if got := refusal(subscribe("60", "late")); got != want {
		t.Errorf("a verification an hour late answered %+v; want %+v", got, want)
	}
}

// TestWebSubNonce checks that only the hub, which alone got the callback
// URL, can answer or refuse Narrator's request, or push: a verification,
// a denial or a push with the right feed, topic and signature, but to the
// guessable URL without the nonce or with another one, is the one refusal
// and changes nothing, while the hub's own, with the nonce, are taken.
func TestWebSubNonce(t *testing.T) {
	t.Parallel()
	b := setupWebSub(t, false)
	h := b.hub
	h.wait = true
	src, got := b.subscribed(t)
	secret := got.State.WebSub.Secret
	if h.requests != 1 || secret == "" {
		t.Fatalf("the hub got %d requests", h.requests)
	}
	hubCallback := h.callback
	type answer struct {
		Status int
		Body   string
	}
	call := func(callback string, q url.Values) answer {
		t.Helper()
		status, _, body := (&hub{t: t, callback: callback}).get(q)
		return answer{status, body}
	}
	bare := fmt.Sprintf("%s/websub/%d", b.callbacks, src.ID)
	want := call(fmt.Sprintf("%s/websub/%d", b.callbacks, src.ID+1000), url.Values{"hub.mode": {"denied"}, "hub.topic": {b.self}})
	if want.Status != http.StatusNotFound {
		t.Fatalf("a denial to a missing feed answered %+v", want)
	}
	deny := url.Values{"hub.mode": {"denied"}, "hub.topic": {b.self}, "hub.reason": {"forged"}}
	verify := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {b.self}, "hub.challenge": {"forged"}, "hub.lease_seconds": {"31536000"}}
	forged := func() {
		t.Helper()
		before, _ := b.store.Source(t.Context(), src.ID)
		for _, callback := range []string{bare, bare + "/", bare + "/AAAAAAAAAAAAAAAAAAAAAA", hubCallback + "x", hubCallback[:len(hubCallback)-1]} {
			if got := call(callback, deny); got != want {
				t.Errorf("a denial at %s answered %+v; want %+v", callback, got, want)
			}
			if got := call(callback, verify); got != want {
				t.Errorf("a verification at %s answered %+v; want %+v", callback, got, want)
			}
			evil := atomFeed(b.hubURL, b.self, "evil")
			if status, body := (&hub{t: t, callback: callback}).pushAnswer(evil, "X-Hub-Signature-256", sign(evil, secret)); (answer{status, body}) != want {
				t.Errorf("a push signed with the secret at %s answered %d %q; want %+v", callback, status, body, want)
			}
		}
		after, _ := b.store.Source(t.Context(), src.ID)
		if diff := cmp.Diff(before.State, after.State); diff != "" {
			t.Errorf("forged callbacks changed the feed (-before +after):\n%s", diff)
		}
		if _, err := b.store.FindAudio(t.Context(), b.project.ID, narrator.ItemExternalID(src.ID, "evil")); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("a push without the nonce was narrated: %v", err)
		}
	}

	// The hub's denial, after the forged ones, is taken.
	forged()
	if got := call(hubCallback, deny); got != (answer{http.StatusOK, ""}) {
		t.Fatalf("the hub's denial answered %+v", got)
	}
	if got, _ := b.store.Source(t.Context(), src.ID); got.State.WebSub.Pending != (narrator.WebSubRequest{}) {
		t.Errorf("the hub's denial left the request pending: %+v", got.State.WebSub)
	}

	// The request made again, an hour later, goes to the same callback;
	// the hub's verification, after the forged ones, is taken.
	b.clock.Advance(time.Hour)
	b.mustPoll(t, src.ID)
	if h.requests != 2 || h.callback != hubCallback {
		t.Fatalf("the hub got %d requests, the last for %q; want 2, for %q", h.requests, h.callback, hubCallback)
	}
	forged()
	if got := call(hubCallback, verify); got != (answer{http.StatusOK, "forged"}) {
		t.Fatalf("the hub's verification answered %+v", got)
	}
	if got, _ := b.store.Source(t.Context(), src.ID); got.State.WebSub.ExpiresAt.IsZero() {
		t.Errorf("the hub's verification was not recorded: %+v", got.State.WebSub)
	}
	pushed := atomFeed(b.hubURL, b.self, "2", "1")
	if status := h.push(pushed, "X-Hub-Signature-256", sign(pushed, secret)); status != http.StatusNoContent {
		t.Errorf("the hub's push answered %d", status)
	}
}

// TestWebSubPush checks that a signed push of an item's older or equal
// version narrates nothing, however often it is replayed; that a feed takes
// narrator.WebSubPushBurst pushes at once, then one per
// narrator.WebSubPushEvery; and that a push larger than what is held in
// memory before its signature is checked is read whole (issue 32, item 5).
func TestWebSubPush(t *testing.T) {
	t.Parallel()
	b := setupWebSub(t, false)
	t1 := b.clock.Now().Add(-time.Hour).Truncate(time.Second)
	t2 := t1.Add(10 * time.Minute)
	v1 := atomEntries(b.hubURL, b.self, entry{"1", "The first version.", t1})
	v2 := atomEntries(b.hubURL, b.self, entry{"1", "The second version.", t2})
	b.setFeed(v1)
	src := b.mustSource(t, b.self, nil)
	got := b.mustPoll(t, src.ID)
	secret := got.State.WebSub.Secret
	if got.State.Created != 1 || secret == "" {
		t.Fatalf("after the first read: %+v", got.State)
	}
	pushes := 0
	push := func(body string) int {
		t.Helper()
		pushes++
		return b.hub.push(body, "X-Hub-Signature-256", sign(body, secret))
	}
	if status := push(v2); status != http.StatusNoContent {
		t.Fatalf("the push of a newer version answered %d", status)
	}
	// Replays of the old push and the new one, alternately.
	for _, body := range []string{v1, v2, v1, v2, v1} {
		if status := push(body); status != http.StatusNoContent {
			t.Fatalf("a replayed push answered %d; want 204, as to the hub", status)
		}
	}
	got, _ = b.store.Source(t.Context(), src.ID)
	a, err := b.store.FindAudio(t.Context(), b.project.ID, narrator.ItemExternalID(src.ID, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.State.Updated != 1 || !strings.Contains(a.Body, "second version") {
		t.Errorf("after replays: %d updates, body %q; want 1 update to the second version", got.State.Updated, a.Body)
	}
	// An undated change is not taken from a push; a read of the feed
	// itself takes it.
	undated := atomEntries(b.hubURL, b.self, entry{"1", "An undated version.", time.Time{}})
	if status := push(undated); status != http.StatusNoContent {
		t.Fatalf("an undated push answered %d", status)
	}
	if got, _ = b.store.Source(t.Context(), src.ID); got.State.Updated != 1 {
		t.Errorf("an undated push updated the audio: %d updates", got.State.Updated)
	}
	b.setFeed(undated)
	if got = b.mustPoll(t, src.ID); got.State.Updated != 2 {
		t.Errorf("a read of the changed feed: %d updates; want 2", got.State.Updated)
	}

	// A large push, spooled while its signature is checked, is read whole.
	large := atomEntries(b.hubURL, b.self, entry{"2", strings.Repeat("Word ", 19_000), t2})
	if status := push(large); status != http.StatusNoContent {
		t.Fatalf("a signed push of %d bytes answered %d", len(large), status)
	}
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, narrator.ItemExternalID(src.ID, "2")); err != nil {
		t.Errorf("the large push was not narrated: %v", err)
	}

	// The rate limit: the burst, then one a minute.
	for pushes < narrator.WebSubPushBurst {
		if status := push(v2); status != http.StatusNoContent {
			t.Fatalf("push %d answered %d", pushes, status)
		}
	}
	req, _ := http.NewRequest("POST", b.hub.callback, strings.NewReader(v2))
	req.Header.Set("X-Hub-Signature-256", sign(v2, secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
		t.Errorf("a push over the limit answered %d, Retry-After %q; want 429, 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	b.clock.Advance(narrator.WebSubPushEvery)
	if status := push(v2); status != http.StatusNoContent {
		t.Errorf("a push a minute later answered %d", status)
	}
}

// TestWebSubPlainHub checks that the secret never travels in clear: a
// feed whose hub is plain http is not subscribed to, and an https hub that
// redirects to http does not get the request resent there (issue 32,
// item 5).
func TestWebSubPlainHub(t *testing.T) {
	t.Parallel()
	b := setupWebSub(t, true)
	_, got := b.subscribed(t)
	if b.hub.requests != 0 || b.hub.secret != "" || got.State.WebSub.Secret != "" {
		t.Errorf("a plain-http hub got %d requests (secret %q); the feed's subscription is %+v", b.hub.requests, b.hub.secret, got.State.WebSub)
	}

	tls := setupWebSub(t, false)
	tls.hub.redirect = b.hubURL
	tls.subscribed(t)
	if b.hub.requests != 0 || b.hub.secret != "" {
		t.Errorf("an https hub's redirect took the request to plain http: %d requests, secret %q", b.hub.requests, b.hub.secret)
	}
}

// zeros is a body of n zero bytes that allocates nothing.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), z.n)
	clear(p[:n])
	z.n -= n
	return n, nil
}

// TestWebSubPushMemory checks that a push is not held in memory before its
// signature is checked: refusing a forged push of nearly MaxPushBytes
// allocates a small part of it (issue 32, item 5). It runs alone, not in
// parallel, so that the allocations it counts are its own.
func TestWebSubPushMemory(t *testing.T) {
	b := setupWebSub(t, false)
	_, got := b.subscribed(t)
	if got.State.WebSub.Secret == "" {
		t.Fatalf("no subscription: %+v", got.State)
	}
	const size = source.MaxPushBytes - 1
	push := func() int {
		req, _ := http.NewRequest("POST", b.hub.callback, &zeros{size})
		req.ContentLength = size
		req.Header.Set("X-Hub-Signature-256", sign("forged", "guess"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	push() // warms up the connection and the handler's first allocations
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	status := push()
	runtime.ReadMemStats(&after)
	if status != http.StatusNotFound {
		t.Errorf("a forged push answered %d; want 404", status)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > size/4 {
		t.Errorf("refusing a forged push of %d bytes allocated %d bytes; want at most a quarter of it", size, n)
	}
}
