//go:build e2e

package main

import (
	"compress/gzip"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narrator/narrator/client"
)

// TestSourceProject drives an rss project through a real server: a feed on
// loopback is narrated, its WebSub hub (written here) is subscribed to and
// its signed push narrated before it is answered, a bad signature changes
// nothing, hostile feeds get a clear error each while the server keeps
// answering, and a restart narrates nothing twice.
func TestSourceProject(t *testing.T) {
	t.Parallel()
	data, acct, _ := fixture(t)
	proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Wire", "--language", "en_US", "--type", "rss"))
	addr := freeAddr(t)

	var mu sync.Mutex
	var items []string
	var secret, callback string
	site := http.NewServeMux()
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	// Narrator subscribes only at https hubs: the server trusts this one's
	// certificate through SSL_CERT_FILE.
	hubs := http.NewServeMux()
	hubSrv := httptest.NewTLSServer(hubs)
	t.Cleanup(hubSrv.Close)
	certFile := filepath.Join(t.TempDir(), "hub.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hubSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	atom := func(ids ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `<feed xmlns="http://www.w3.org/2005/Atom"><title>Wire</title><link rel="hub" href="%s/hub"/><link rel="self" href="%s/atom"/>`, hubSrv.URL, srv.URL)
		for _, id := range ids {
			fmt.Fprintf(&b, `<entry><id>urn:%s</id><title>Story %s</title><link href="https://wire.example/%s"/><content type="html">&lt;p&gt;The text of story %s.&lt;/p&gt;</content></entry>`, id, id, id, id)
		}
		return b.String() + `</feed>`
	}
	site.HandleFunc("/atom", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/atom+xml")
		io.WriteString(w, atom(items...))
	})
	hubs.HandleFunc("/hub", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		secret, callback = r.Form.Get("hub.secret"), r.Form.Get("hub.callback")
		mu.Unlock()
		q := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {r.Form.Get("hub.topic")}, "hub.challenge": {"ch4llenge"}, "hub.lease_seconds": {"86400"}}
		res, err := http.Get(callback + "?" + q.Encode())
		if err != nil {
			t.Error(err)
			return
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(body) != "ch4llenge" {
			t.Errorf("verification answered %d %q", res.StatusCode, body)
		}
		w.WriteHeader(http.StatusAccepted)
	})
	site.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zeros := make([]byte, 1<<20)
		for range 32 {
			if _, err := zw.Write(zeros); err != nil {
				return
			}
		}
		zw.Close()
	})
	site.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		chunk := []byte(strings.Repeat("<item>", 1024))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	site.HandleFunc("/invalid", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		io.WriteString(w, `<rss version="2.0"><channel><item><title>Broken</ti`)
	})
	site.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		io.WriteString(w, `<rss version="2.0"><channel>`)
		for i := range 100_000 {
			fmt.Fprintf(w, `<item><guid>%d</guid><description>x</description></item>`, i)
		}
		io.WriteString(w, `</channel></rss>`)
	})

	start := func() *node {
		return startServerEnv(t, []string{"SSL_CERT_FILE=" + certFile}, data, addr, "--engine-standin", "10ms", "--webhooks-allow-private", "--public-url", "http://"+addr)
	}
	s := start()
	c := s.client(t, acct.APIKey)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	add := func(u string) *client.Source {
		t.Helper()
		f, err := c.AddSource(ctx, proj.ID, client.NewSource{URL: u, BackfillItems: 10})
		if err != nil {
			t.Fatalf("add %s: %v", u, err)
		}
		return f
	}
	poll := func(id int64) *client.Source {
		t.Helper()
		f, err := c.PollSource(ctx, proj.ID, id)
		if err != nil {
			t.Fatalf("poll %d: %v", id, err)
		}
		return f
	}

	mu.Lock()
	items = []string{"2", "1"}
	mu.Unlock()
	main := add(srv.URL + "/atom")
	if got := poll(main.ID); got.Status != "ok" || got.Created != 2 {
		t.Fatalf("first read: %+v; want ok, 2 created", got)
	}
	for _, id := range []string{"1", "2"} {
		if _, err := c.WaitProcessed(ctx, proj.ID, fmt.Sprintf("feed-%d:urn:%s", main.ID, id), client.WaitOptions{}); err != nil {
			t.Fatalf("item %s: %v", id, err)
		}
	}

	// The hub pushes a new item, signed: narrated before the answer.
	mu.Lock()
	items = []string{"3", "2", "1"}
	pushSecret, pushTo := secret, callback
	mu.Unlock()
	bare := fmt.Sprintf("http://%s/websub/%d", addr, main.ID)
	if nonce, ok := strings.CutPrefix(pushTo, bare+"/"); pushSecret == "" || !ok || len(nonce) != 22 {
		t.Fatalf("no subscription: secret %q, callback %q; want %s/ and a nonce", pushSecret, pushTo, bare)
	}
	push := func(body, sig string) int {
		req, _ := http.NewRequest("POST", pushTo, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/atom+xml")
		req.Header.Set("X-Hub-Signature-256", sig)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	sign := func(body, secret string) string {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(body))
		return fmt.Sprintf("sha256=%x", m.Sum(nil))
	}
	body := atom("3", "2", "1")
	if status := push(body, sign(body, pushSecret)); status != http.StatusNoContent {
		t.Fatalf("signed push: %d", status)
	}
	if _, err := c.GetAudio(ctx, proj.ID, fmt.Sprintf("feed-%d:urn:3", main.ID)); err != nil {
		t.Fatalf("the pushed item is not there when the push is answered: %v", err)
	}
	// Signed, but to the guessable URL without the nonce: refused.
	unnonced := atom("unnonced", "3", "2", "1")
	good := pushTo
	pushTo = bare
	if status := push(unnonced, sign(unnonced, pushSecret)); status != http.StatusNotFound {
		t.Errorf("signed push without the nonce: %d; want 404", status)
	}
	pushTo = good
	evil := atom("evil", "3", "2", "1")
	if status := push(evil, sign(evil, "guessed")); status != http.StatusNotFound {
		t.Errorf("push with a bad signature: %d; want 404, as for a feed with no subscription", status)
	}
	if _, err := c.GetAudio(ctx, proj.ID, fmt.Sprintf("feed-%d:urn:evil", main.ID)); err == nil {
		t.Error("a push with a bad signature was narrated")
	}

	// The hostile-feed drill: a clear error on each, and the server keeps
	// answering good requests, with no 5xx.
	for path, want := range map[string]string{
		"/bomb":    "larger than 8 MB",
		"/endless": "larger than 8 MB",
		"/invalid": "could not be parsed",
		"/huge":    "only the first 1000 are read",
		"/atom":    "", // the same feed twice is a second feed, namespaced apart
	} {
		f := add(srv.URL + path)
		got := poll(f.ID)
		if !strings.Contains(got.LastError, want) {
			t.Errorf("%s: %+v; want an error with %q", path, got, want)
		}
		if _, err := c.ListProjects(ctx); err != nil {
			t.Errorf("after %s the server does not answer: %v", path, err)
		}
	}

	// A feed on the server itself (its podcast feed, or any of its
	// answers) is refused, by any name: the one of its public URL, or
	// another that resolves to it.
	_, port, _ := net.SplitHostPort(addr)
	for _, u := range []string{
		"http://" + addr + "/feeds/token.xml",
		"http://localhost:" + port + "/feeds/token.xml",
		"http://localhost:" + port + "/api/v3/openapi.json",
	} {
		if got := poll(add(u).ID); got.Status != "error" || !strings.Contains(got.LastError, "own address") {
			t.Errorf("%s, on the server itself: %+v; want an error naming its own address", u, got)
		}
	}

	// A restart narrates nothing twice.
	s.stop(t, syscall.SIGTERM)
	s = start()
	c = s.client(t, acct.APIKey)
	if got := poll(main.ID); got.Created != 3 || got.Updated != 0 {
		t.Errorf("after a restart: %+v; want 3 created, none updated", got)
	}
	list, err := c.ListAudios(ctx, proj.ID, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 3 of the main feed, 3 of its twin, 10 of the huge feed's backfill.
	if len(list) != 16 {
		t.Errorf("%d audios; want 16", len(list))
	}
}
