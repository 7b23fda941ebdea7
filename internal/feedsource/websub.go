package feedsource

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
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
// the feed's secret (a new one for a new hub or topic), and records the
// request, answered or not, so that a hub that fails is asked again only
// after a while.
func (p *Poller) subscribe(ctx context.Context, src *narrator.Source, hub, topic string) error {
	sub := src.State.WebSub
	if sub.Hub != hub || sub.Topic != topic || sub.Secret == "" {
		var b [24]byte
		_, _ = rand.Read(b[:]) // crypto/rand never fails
		sub = narrator.Subscription{Hub: hub, Topic: topic, Secret: hex.EncodeToString(b[:])}
	}
	sub.RequestedAt = p.opts.Now()
	form := url.Values{
		"hub.mode":          {"subscribe"},
		"hub.topic":         {topic},
		"hub.callback":      {p.opts.CallbackURL(src.ID)},
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
		p.opts.Logger.Warn("websub subscribe", "feed_id", src.ID, "err", err)
		return nil
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.opts.Client.Do(req)
	if err != nil {
		p.opts.Logger.Warn("websub subscribe", "feed_id", src.ID, "hub", hub, "err", err)
		return nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		p.opts.Logger.Warn("websub subscribe refused", "feed_id", src.ID, "hub", hub, "status", resp.StatusCode)
	}
	return nil
}

// MaxPushBytes caps the body of a push, as the fetcher caps a feed.
const MaxPushBytes = 8 << 20

// Callback serves the WebSub callback of the feed its path's {feed_id}
// names: a GET is the hub's
// verification of intent, answered with its challenge when it is the
// subscription Narrator asked for; a POST is a push, whose signature is
// checked before its body is read as the feed, at once. A push with no or a
// bad signature answers 401 and changes nothing. Every other answer is the
// API's JSON error.
func (p *Poller) Callback(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("feed_id"), 10, 64)
	if err != nil || id <= 0 {
		httpapi.WriteError(w, narrator.Errorf(narrator.ENOTFOUND, "no such feed"))
		return
	}
	src, err := p.store.Source(r.Context(), id)
	if err == nil && src.State.WebSub.Secret == "" {
		err = narrator.Errorf(narrator.ENOTFOUND, "feed %d has no subscription", id)
	}
	if err != nil {
		httpapi.WriteError(w, err)
		return
	}
	switch r.Method {
	case http.MethodGet:
		p.verify(w, r, src)
	case http.MethodPost:
		if err := p.push(r, src); err != nil {
			httpapi.WriteError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST")
		httpapi.WriteError(w, httpapi.MethodNotAllowed(r.Method))
	}
}

// verify answers the hub's verification of intent.
func (p *Poller) verify(w http.ResponseWriter, r *http.Request, src *narrator.Source) {
	q := r.URL.Query()
	sub := src.State.WebSub
	switch q.Get("hub.mode") {
	case "subscribe":
		if q.Get("hub.topic") != sub.Topic || q.Get("hub.challenge") == "" {
			httpapi.WriteError(w, narrator.Errorf(narrator.ENOTFOUND, "no such subscription"))
			return
		}
		lease := narrator.WebSubLease
		if n, err := strconv.Atoi(q.Get("hub.lease_seconds")); err == nil && n > 0 {
			lease = min(time.Duration(n)*time.Second, 365*24*time.Hour)
		}
		sub.ExpiresAt = p.opts.Now().Add(lease)
		if err := p.store.SetSubscription(r.Context(), src.ID, sub); err != nil {
			httpapi.WriteError(w, err)
			return
		}
	case "denied":
		p.opts.Logger.Warn("websub subscription denied", "feed_id", src.ID, "hub", sub.Hub, "reason", q.Get("hub.reason"))
		w.WriteHeader(http.StatusOK)
		return
	default:
		// Narrator unsubscribes by forgetting: an unsubscribe it did
		// not ask for is not confirmed.
		httpapi.WriteError(w, narrator.Errorf(narrator.ENOTFOUND, "no such subscription"))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, q.Get("hub.challenge"))
}

// errSignature is the answer to a push whose signature is missing or wrong.
var errSignature = narrator.Errorf(narrator.EUNAUTHORIZED, "the push's X-Hub-Signature does not match the subscription's secret; it was ignored")

// push checks a push's signature and reads its body as the feed.
func (p *Poller) push(r *http.Request, src *narrator.Source) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxPushBytes))
	if err != nil {
		return narrator.Errorf(narrator.ETOOLARGE, "a push is at most %d bytes", MaxPushBytes)
	}
	if !validSignature(r.Header, body, src.State.WebSub.Secret) {
		return errSignature
	}
	ok, err := p.store.ClaimSource(r.Context(), src.ID, p.opts.Now().Add(Lease))
	if err != nil {
		return err
	}
	if !ok {
		return narrator.Errorf(narrator.EUNAVAILABLE, "the feed is being read now; push again in a moment")
	}
	_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return p.read(r.Context(), src.ID, &Document{Body: body, Charset: params["charset"], URL: src.URL})
}

// validSignature checks X-Hub-Signature-256, else X-Hub-Signature, as
// "method=hex" HMACs of body with secret (sha1, sha256, sha384, sha512).
func validSignature(h http.Header, body []byte, secret string) bool {
	sig := h.Get("X-Hub-Signature-256")
	if sig == "" {
		sig = h.Get("X-Hub-Signature")
	}
	method, digest, ok := strings.Cut(strings.TrimSpace(sig), "=")
	if !ok {
		return false
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
		return false
	}
	want, err := hex.DecodeString(digest)
	if err != nil {
		return false
	}
	mac := hmac.New(newHash, []byte(secret))
	mac.Write(body)
	return hmac.Equal(mac.Sum(nil), want)
}
