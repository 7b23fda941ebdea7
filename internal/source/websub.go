package source

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/ratelimit"
)

// linkTagRE finds the link elements of an XML feed, Atom's or in RSS.
var linkTagRE = regexp.MustCompile(`(?is)<(?:[a-z0-9]+:)?link\b[^>]*>`)

// attrRE finds the attributes of one element.
var attrRE = regexp.MustCompile(`(?is)\b(rel|href)\s*=\s*("[^"]*"|'[^']*')`)

// Discover returns the WebSub hub a feed advertises, and its topic: the
// feed's rel=self URL, or feedURL. It reads the Link header, then the
// feed's link elements (Atom, or atom:link in RSS), then a JSON Feed's
// hubs. It returns "" for a feed that names no http or https hub.
func Discover(body []byte, header http.Header, feedURL string) (hub, topic string) {
	for _, v := range header.Values("Link") {
		for _, link := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(link, ";")
			target = strings.Trim(strings.TrimSpace(target), "<>")
			if !ok {
				continue
			}
			for _, rel := range relValues(params) {
				switch rel {
				case "hub":
					hub = first(hub, target)
				case "self":
					topic = first(topic, target)
				}
			}
		}
	}
	if trimmed := strings.TrimSpace(string(body[:min(len(body), 64)])); strings.HasPrefix(trimmed, "{") {
		var jf struct {
			FeedURL string `json:"feed_url"`
			Hubs    []struct {
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"hubs"`
		}
		if json.Unmarshal(body, &jf) == nil {
			for _, h := range jf.Hubs {
				if strings.EqualFold(h.Type, "websub") || strings.EqualFold(h.Type, "pubsubhubbub") {
					hub = first(hub, h.URL)
				}
			}
			topic = first(topic, jf.FeedURL)
		}
	} else {
		// Only the head of a feed holds its links: the items come after.
		head := body[:min(len(body), 64<<10)]
		for _, tag := range linkTagRE.FindAll(head, 50) {
			var rel, href string
			for _, m := range attrRE.FindAllSubmatch(tag, -1) {
				v := string(m[2][1 : len(m[2])-1])
				if strings.EqualFold(string(m[1]), "rel") {
					rel = strings.ToLower(v)
				} else {
					href = strings.TrimSpace(v)
				}
			}
			switch rel {
			case "hub":
				hub = first(hub, href)
			case "self":
				topic = first(topic, href)
			}
		}
	}
	if !httpURL(hub) {
		return "", ""
	}
	if !httpURL(topic) {
		topic = feedURL
	}
	return hub, topic
}

// relValues returns the rel values of a Link header's parameters.
func relValues(params string) []string {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "rel") {
			return strings.Fields(strings.ToLower(strings.Trim(strings.TrimSpace(v), `"`)))
		}
	}
	return nil
}

// first returns a unless it is empty, else b.
func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// httpURL reports whether s is an absolute http or https URL of at most
// narrator.MaxURLChars bytes.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && len(s) <= narrator.MaxURLChars && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// subscribe asks hub for pushes of topic to src's callback, signed with
// the feed's secret (a new one, and a new callback nonce, for a new hub or
// topic: narrator.NewSubscription), and records the
// request, answered or not, as the one pending, so that only it can be
// verified and a hub that fails is asked again only after a while. The
// secret goes only to an https hub (narrator.WebSubHub), and never
// follows a redirect.
func (p *Poller) subscribe(ctx context.Context, src *narrator.Source, hub, topic string) error {
	if !narrator.WebSubHub(hub) {
		return nil
	}
	sub := src.State.WebSub
	if sub.Hub != hub || sub.Topic != topic || sub.Secret == "" || sub.Nonce == "" {
		sub = narrator.NewSubscription(hub, topic)
	}
	sub.Request(narrator.WebSubSubscribe, topic, p.opts.Now())
	form := url.Values{
		"hub.mode":          {narrator.WebSubSubscribe},
		"hub.topic":         {topic},
		"hub.callback":      {p.opts.CallbackURL(src.ID, sub.Nonce)},
		"hub.secret":        {sub.Secret},
		"hub.lease_seconds": {strconv.Itoa(int(narrator.WebSubLease.Seconds()))},
	}
	// The subscription is recorded first: the hub may verify it before it
	// answers this request.
	if err := p.store.SetSubscription(ctx, src.ID, sub); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, hub, strings.NewReader(form.Encode()))
	if err != nil {
		p.opts.Logger.Warn("websub subscribe", "source_id", src.ID, "err", err)
		return nil
	}
	// Without GetBody a 307 or 308 is not followed: the secret goes to
	// the hub's own URL only, never to where it redirects.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.opts.Client.Do(req)
	if err != nil {
		p.opts.Logger.Warn("websub subscribe", "source_id", src.ID, "hub", hub, "err", err)
		return nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		p.opts.Logger.Warn("websub subscribe refused", "source_id", src.ID, "hub", hub, "status", resp.StatusCode)
	}
	return nil
}

// MaxPushBytes caps the body of a push, as the fetcher caps a feed.
const MaxPushBytes = 8 << 20

// pushMemory is how much of a push is held in memory before its signature
// is checked; the rest waits in a temporary file until it is.
const pushMemory = 64 << 10

// errRefused is the one answer to every verification and push that
// Narrator does not take, whatever the reason, for a feed that exists or
// not: the answers tell nothing of which feeds exist or have a
// subscription.
var errRefused = narrator.Errorf(narrator.ENOTFOUND, "no such subscription")

// errPushTooLarge is the answer to a push over MaxPushBytes, signed or not.
var errPushTooLarge = narrator.Errorf(narrator.ETOOLARGE, "a push is at most %d bytes", MaxPushBytes)

// Callback serves the WebSub callback of the feed its path's {source_id}
// names, at the nonce its path's {nonce} names: a verification, denial or
// push whose nonce is not the subscription's (narrator.Subscription.Called)
// is refused, so that only the hub given the callback URL can reach it. A
// GET is the hub's verification of intent, answered with its
// challenge only for the request Narrator sent and still waits for
// (narrator.Subscription.Verify). A POST is a push: its signature is
// checked, with at most pushMemory bytes of it in memory meanwhile, before
// it is read as the feed, at once; a push is refused unless its
// subscription's secret went to an https hub, and each feed takes
// narrator.WebSubPushBurst pushes at once, then one per
// narrator.WebSubPushEvery. Every refusal, of a feed that exists or not,
// is the same 404; other answers are the API's JSON errors.
func (p *Poller) Callback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		httpapi.WriteError(w, httpapi.MethodNotAllowed(r.Method))
		return
	}
	var src *narrator.Source
	id, err := strconv.ParseInt(r.PathValue("source_id"), 10, 64)
	if err == nil && id > 0 {
		src, err = p.store.Source(r.Context(), id)
		if err != nil && narrator.ErrorCode(err) != narrator.ENOTFOUND {
			httpapi.WriteError(w, err)
			return
		}
	}
	nonce := r.PathValue("nonce")
	if r.Method == http.MethodGet {
		p.verify(w, r, src, nonce)
		return
	}
	if err := p.push(w, r, src, nonce); err != nil {
		httpapi.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// verify answers the hub's verification of intent of src's subscription
// (nil: no such feed), that came to the callback with nonce.
func (p *Poller) verify(w http.ResponseWriter, r *http.Request, src *narrator.Source, nonce string) {
	q := r.URL.Query()
	mode, topic, challenge := q.Get("hub.mode"), q.Get("hub.topic"), q.Get("hub.challenge")
	if src == nil {
		httpapi.WriteError(w, errRefused)
		return
	}
	sub := src.State.WebSub
	now := p.opts.Now()
	var ok bool
	switch mode {
	case narrator.WebSubSubscribe, narrator.WebSubUnsubscribe:
		var lease time.Duration
		if n, err := strconv.ParseInt(q.Get("hub.lease_seconds"), 10, 64); err == nil && n > 0 {
			lease = time.Duration(min(n, int64(narrator.WebSubLease/time.Second))) * time.Second
		}
		ok = challenge != "" && sub.Verify(mode, topic, nonce, lease, now)
	case "denied":
		ok = sub.Deny(topic, nonce, now)
		challenge = ""
	}
	if !ok {
		httpapi.WriteError(w, errRefused)
		return
	}
	if err := p.store.SetSubscription(r.Context(), src.ID, sub); err != nil {
		httpapi.WriteError(w, err)
		return
	}
	if mode == "denied" {
		p.opts.Logger.Warn("websub subscription denied", "source_id", src.ID, "hub", src.State.WebSub.Hub, "reason", q.Get("hub.reason"))
	}
	// The challenge is the caller's text on Narrator's origin: it must
	// never be run or rendered as anything but text.
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; sandbox")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, challenge)
}

// push checks a push's nonce and signature and reads its body as src's
// feed (nil: no such feed). A push to a callback URL that is not a live
// subscription's (no such feed, a wrong nonce) is refused before any of its
// body is read: only the hub knows the nonce. A push with the nonce whose
// signature is refused is read to its end, or to MaxPushBytes, whatever the
// reason, so that it is answered alike.
func (p *Poller) push(w http.ResponseWriter, r *http.Request, src *narrator.Source, nonce string) error {
	if src == nil || !src.State.WebSub.Called(nonce) {
		return errRefused
	}
	body := http.MaxBytesReader(w, r.Body, MaxPushBytes)
	if !src.State.WebSub.Authenticates() {
		return refuse(body)
	}
	mac, want, ok := signature(r.Header, src.State.WebSub.Secret)
	if !ok {
		return refuse(body)
	}
	data, err := p.readSigned(body, mac, want)
	if err != nil {
		return err
	}
	if err := p.pushes.Take(w, "This feed was pushed too often.", ratelimit.Limit{Key: "websub:" + strconv.FormatInt(src.ID, 10),
		Burst: narrator.WebSubPushBurst, Every: narrator.WebSubPushEvery}); err != nil {
		return err
	}
	ok, err = p.store.ClaimSource(r.Context(), src.ID, p.opts.Now().Add(Lease))
	if err != nil {
		return err
	}
	if !ok {
		return narrator.Errorf(narrator.EUNAVAILABLE, "the feed is being read now; push again in a moment")
	}
	_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return p.read(r.Context(), src.ID, &Document{Body: data, Charset: params["charset"], URL: src.URL})
}

// refuse reads a refused push's body to its end, without keeping it, and
// returns its answer.
func refuse(body io.Reader) error {
	if _, err := io.Copy(io.Discard, body); err != nil {
		return pushReadError(err)
	}
	return errRefused
}

// pushReadError is the answer to a push whose body could not be read.
func pushReadError(err error) error {
	if errors.As(err, new(*http.MaxBytesError)) {
		return errPushTooLarge
	}
	return narrator.Errorf(narrator.EINVALID, "the push's body could not be read")
}

// readSigned reads a push's body and returns it if mac of it is want, else
// errRefused. It holds at most pushMemory bytes in memory until the
// signature is checked: the rest goes to a temporary file, read back only
// once the push is known to be the hub's.
func (p *Poller) readSigned(body io.Reader, mac hash.Hash, want []byte) ([]byte, error) {
	var head bytes.Buffer
	n, err := io.CopyN(io.MultiWriter(&head, mac), body, pushMemory)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, pushReadError(err)
	}
	if n < pushMemory {
		if !hmac.Equal(mac.Sum(nil), want) {
			return nil, errRefused
		}
		return head.Bytes(), nil
	}
	f, err := os.CreateTemp(p.opts.TempDir, "narrator-push-")
	if err != nil {
		return nil, fmt.Errorf("spool push: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(head.Bytes()); err != nil {
		return nil, fmt.Errorf("spool push: %w", err)
	}
	if _, err := io.Copy(io.MultiWriter(f, mac), body); err != nil {
		var werr *os.PathError
		if errors.As(err, &werr) {
			return nil, fmt.Errorf("spool push: %w", err)
		}
		return nil, pushReadError(err)
	}
	if !hmac.Equal(mac.Sum(nil), want) {
		return nil, errRefused
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spool push: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("spool push: %w", err)
	}
	return data, nil
}

// signature returns the HMAC a push's signature header asks for, keyed
// with secret, and the digest it names: X-Hub-Signature-256, else
// X-Hub-Signature, as "method=hex" (sha1, sha256, sha384, sha512). It
// reports false for a missing or malformed header.
func signature(h http.Header, secret string) (hash.Hash, []byte, bool) {
	sig := h.Get("X-Hub-Signature-256")
	if sig == "" {
		sig = h.Get("X-Hub-Signature")
	}
	method, digest, ok := strings.Cut(strings.TrimSpace(sig), "=")
	if !ok {
		return nil, nil, false
	}
	var newHash func() hash.Hash
	switch strings.ToLower(method) {
	case "sha1":
		newHash = sha1.New
	case "sha256":
		newHash = sha256.New
	case "sha384":
		newHash = sha512.New384
	case "sha512":
		newHash = sha512.New
	default:
		return nil, nil, false
	}
	want, err := hex.DecodeString(digest)
	if err != nil || len(want) != newHash().Size() {
		return nil, nil, false
	}
	return hmac.New(newHash, []byte(secret)), want, true
}
