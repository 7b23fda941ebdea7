package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/webhook"
)

// verify checks a delivery as the Standard Webhooks specification tells a
// receiver to, written from the specification alone: the secret's part
// after "whsec_" is base64 and decodes to the key; the signed content is
// id + "." + timestamp + "." + body; the header holds space-separated
// "v1,<base64 HMAC-SHA256>" signatures, any of which may match.
func verify(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("timestamp too far from now")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, b64, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no signature matches")
}

func TestSignMatchesTheSpecification(t *testing.T) {
	t.Parallel()
	// The example of the Standard Webhooks specification.
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	ts := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	got, err := webhook.Sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %q, want the specification's %q", got, want)
	}
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", got)
	if err := verify(secret, h, body, ts); err != nil {
		t.Errorf("independent verifier: %v", err)
	}
	if err := verify(secret, h, append(body, ' '), ts); err == nil {
		t.Error("independent verifier accepted a changed body")
	}
	if _, err := webhook.Sign("no prefix", "msg", ts, body); err == nil {
		t.Error("Sign accepted a secret without whsec_")
	}
}

// receiver records what a test endpoint gets.
type receiver struct {
	mu      sync.Mutex
	headers []http.Header
	bodies  [][]byte
	status  int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	r.bodies = append(r.bodies, body)
	w.WriteHeader(r.status)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func mustHook(t *testing.T, url string) (*narrator.Webhook, *narrator.WebhookDelivery) {
	t.Helper()
	h, err := narrator.NewWebhook(1, url, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e := &narrator.Event{Type: narrator.EventWebhookTest, ProjectID: 1, CreatedAt: time.Now()}
	d, err := narrator.NewDelivery(h, e, []byte(`{"action_type":"webhook.test"}`))
	if err != nil {
		t.Fatal(err)
	}
	return h, d
}

// serve starts h on loopback, closed when the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestSendSignsAndReports(t *testing.T) {
	t.Parallel()
	rec := &receiver{status: http.StatusNoContent}
	srv := serve(t, rec)
	c := webhook.New(webhook.Options{AllowPrivate: true})
	h, d := mustHook(t, srv.URL+"/hook?token=abc")
	a := c.Send(t.Context(), h, d)
	if !a.OK() || a.ResponseCode != http.StatusNoContent {
		t.Fatalf("attempt = %+v; want a success with 204", a)
	}
	if rec.count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rec.count())
	}
	if err := verify(h.Secret, rec.headers[0], rec.bodies[0], time.Now()); err != nil {
		t.Errorf("independent verifier: %v", err)
	}
	if got := rec.headers[0].Get("webhook-id"); got != d.MessageID {
		t.Errorf("webhook-id = %q, want %q", got, d.MessageID)
	}
	if string(rec.bodies[0]) != string(d.Body) {
		t.Errorf("body = %s, want %s", rec.bodies[0], d.Body)
	}

	rec.mu.Lock()
	rec.status = http.StatusInternalServerError
	rec.mu.Unlock()
	a = c.Send(t.Context(), h, d)
	if a.OK() || a.ResponseCode != 500 || !strings.Contains(a.Error, "500") {
		t.Errorf("attempt against a 500 = %+v; want a failure with the code", a)
	}
	if strings.Contains(a.Error, "token") || strings.Contains(a.Error, h.Secret) {
		t.Errorf("attempt error %q shows the URL or the secret", a.Error)
	}
}

func TestRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	rec := &receiver{status: http.StatusOK}
	srv := serve(t, rec)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := webhook.New(webhook.Options{})
	// By address, and by a name that resolves to it: the check runs on
	// the address dialled, after resolution.
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/"} {
		h, d := mustHook(t, u)
		a := c.Send(t.Context(), h, d)
		if a.OK() || !strings.Contains(a.Error, "refused") {
			t.Errorf("Send to %s = %+v; want refused", u, a)
		}
	}
	if rec.count() != 0 {
		t.Errorf("the loopback receiver got %d requests", rec.count())
	}
}

func TestRedirectsLimited(t *testing.T) {
	t.Parallel()
	var hops int
	var mu sync.Mutex
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hops++
		mu.Unlock()
		http.Redirect(w, r, "/again", http.StatusTemporaryRedirect)
	}))
	c := webhook.New(webhook.Options{AllowPrivate: true, MaxRedirects: 2})
	h, d := mustHook(t, srv.URL)
	a := c.Send(t.Context(), h, d)
	if a.OK() || !strings.Contains(a.Error, "redirects") {
		t.Errorf("attempt = %+v; want stopped by the redirect limit", a)
	}
	if hops != 3 {
		t.Errorf("server saw %d requests; want the first and 2 redirects", hops)
	}
}

// TestRedirectKeepsPost checks that a 307 or 308 is followed with the same
// signed POST, while a 301, 302 or 303, which would make it an empty GET,
// is a failed attempt that says why.
func TestRedirectKeepsPost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code   int
		follow bool
	}{
		{http.StatusMovedPermanently, false},
		{http.StatusFound, false},
		{http.StatusSeeOther, false},
		{http.StatusTemporaryRedirect, true},
		{http.StatusPermanentRedirect, true},
	} {
		var (
			mu  sync.Mutex
			got []string
		)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("webhook-id")+" "+string(body))
			mu.Unlock()
			if r.URL.Path == "/in" {
				http.Redirect(w, r, "/after", tc.code)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		c := webhook.New(webhook.Options{AllowPrivate: true, MaxRedirects: 2})
		h, d := mustHook(t, srv.URL+"/in")
		a := c.Send(t.Context(), h, d)
		srv.Close()
		if tc.follow {
			want := "POST /after " + d.MessageID + " " + string(d.Body)
			if !a.OK() || len(got) != 2 || got[1] != want {
				t.Errorf("%d: attempt %+v, requests %q; want the POST again at /after", tc.code, a, got)
			}
			continue
		}
		if a.OK() || a.ResponseCode != tc.code || !strings.Contains(a.Error, "307 and 308") || len(got) != 1 {
			t.Errorf("%d: attempt %+v, requests %q; want a failure naming the redirect and no second request", tc.code, a, got)
		}
	}
}

// TestRedirectToAnotherHostDropsHeaders: a 307 to another host is
// followed, but the delivery's own headers stay with the endpoint's host.
func TestRedirectToAnotherHostDropsHeaders(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got http.Header
	)
	other := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
	}))
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/moved", http.StatusTemporaryRedirect)
	}))
	h, d := mustHook(t, srv.URL)
	a := webhook.New(webhook.Options{AllowPrivate: true}).Send(t.Context(), h, d)
	mu.Lock()
	defer mu.Unlock()
	if a.OK() || got == nil {
		t.Fatalf("attempt %+v; want the redirect followed and failed", a)
	}
	for _, k := range []string{webhook.HeaderID, webhook.HeaderTimestamp, webhook.HeaderSignature} {
		if v := got.Get(k); v != "" {
			t.Errorf("the other host got %s: %q", k, v)
		}
	}
	if got.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q; the generic headers stay", got.Get("Content-Type"))
	}
}
