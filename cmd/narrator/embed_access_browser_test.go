//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/narrator/narrator"
)

// pageServer serves an article page with one embed script; host replaces
// 127.0.0.1 in its URL (localhost is another origin).
func pageServer(t *testing.T, host, script string) string {
	t.Helper()
	page := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Members' article</title></head>
<body><h1>Members' article</h1><div id="player">` + script + `</div></body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", host, 1) + "/article"
}

// TestEmbedAccessInBrowser plays the embedded player of a signed project
// with the token a CMS signed, in headless chromium, through the media
// tokens the player hands out; and checks that the page without a token,
// and an origin-restricted project's player on a foreign page, show no
// audio.
func TestEmbedAccessInBrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	access := fmt.Sprintf("/api/v3/projects/%d/access", proj.ID)
	status, raw := s.call(t, "POST", access+"/rotate-secret?api_key="+acct.APIKey, nil)
	if status != 200 {
		t.Fatalf("rotate secret: %d %s", status, raw)
	}
	var rotated struct {
		Secret string `json:"signing_secret"`
	}
	if err := json.Unmarshal(raw, &rotated); err != nil {
		t.Fatal(err)
	}
	if status, raw := s.call(t, "PUT", access, map[string]any{"api_key": acct.APIKey, "mode": "signed"}); status != 200 {
		t.Fatalf("sign the project: %d %s", status, raw)
	}
	s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Members only", "body": embedArticle, "external_id": "paid-1",
	})
	s.waitProcessed(t, proj.ID, "paid-1", acct.APIKey, 90*time.Second)
	token := narrator.SignEmbed(rotated.Secret, proj.ID, narrator.EmbedSubject("paid-1", ""), time.Now().Add(time.Hour))
	ctx := newBrowser(t, chromium)
	const audio = `document.querySelector('#player')`

	// A subscriber's page: the CMS signed the token.
	subscriber := pageServer(t, "localhost", fmt.Sprintf(`<script src="%s/embed.js" data-project="%d" data-external-id="paid-1" data-token="%s" async></script>`,
		s.base, proj.ID, token))
	browse(t, ctx, "subscriber's page", chromedp.Navigate(subscriber),
		waitJS(`document.querySelectorAll('iframe.narrator-player').length === 1`, 20*time.Second))
	frame := frameContext(t, ctx, "token=")
	var src string
	clickIn(t, ctx, frame, "iframe.narrator-player", `.np-play`)
	browse(t, frame, "playing with a media token",
		waitJS(audio+`.currentTime > 0.5 && !`+audio+`.paused`, 30*time.Second),
		chromedp.Evaluate(audio+`.currentSrc`, &src))
	if !strings.Contains(src, "audio.mp3?token=") {
		t.Errorf("the player plays %s, want the MP3 with a media token", src)
	}
	// The same MP3 URL without its token opens nothing.
	plain, _, _ := strings.Cut(src, "?")
	if res, err := http.Get(plain); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("the MP3 without a token: %v %v, want 404", res.StatusCode, err)
	} else {
		res.Body.Close()
	}

	// Everyone else's page: no token, no audio.
	visitor := pageServer(t, "localhost", fmt.Sprintf(`<script src="%s/embed.js" data-project="%d" data-external-id="paid-1" async></script>`,
		s.base, proj.ID))
	browse(t, ctx, "visitor's page", chromedp.Navigate(visitor),
		waitJS(`document.querySelectorAll('iframe.narrator-player').length === 1`, 20*time.Second))
	bare := frameContext(t, ctx, "external_id=paid-1&origin=")
	var text string
	browse(t, bare, "no audio without a token",
		waitJS(`document.querySelector('.np-message-heading') !== null`, 20*time.Second),
		chromedp.Evaluate(`document.body.innerText + String(document.querySelector('audio') !== null)`, &text))
	if !strings.Contains(text, "This audio is not available") || strings.HasSuffix(text, "true") {
		t.Errorf("the page without a token shows %q", text)
	}

	// An origin-restricted public project: its player plays on its
	// publisher's origin only.
	allowed := pageServer(t, "localhost", fmt.Sprintf(`<script src="%s/embed.js" data-project="%d" data-external-id="paid-1" async></script>`,
		s.base, proj.ID))
	origin := strings.TrimSuffix(allowed, "/article")
	if status, raw := s.call(t, "PUT", access, map[string]any{"api_key": acct.APIKey, "mode": "public", "allowed_origins": []string{origin}}); status != 200 {
		t.Fatalf("restrict the project: %d %s", status, raw)
	}
	browse(t, ctx, "allowed origin", chromedp.Navigate(allowed),
		waitJS(`document.querySelectorAll('iframe.narrator-player').length === 1`, 20*time.Second))
	ok := frameContext(t, ctx, "origin="+strings.ReplaceAll(strings.ReplaceAll(origin, ":", "%3A"), "/", "%2F"))
	browse(t, ok, "player on the allowed origin", waitJS(`document.querySelector('#player') !== null`, 20*time.Second))

	foreign := pageServer(t, "127.0.0.1", fmt.Sprintf(`<script src="%s/embed.js" data-project="%d" data-external-id="paid-1" async></script>`,
		s.base, proj.ID))
	if strings.HasPrefix(foreign, origin) {
		t.Fatalf("the foreign page %s is on the allowed origin", foreign)
	}
	browse(t, ctx, "foreign origin", chromedp.Navigate(foreign),
		waitJS(`document.querySelectorAll('iframe.narrator-player').length === 1`, 20*time.Second))
	// Chromium refuses to show a frame that frame-ancestors forbids, and
	// the server answers the foreign origin as a missing audio: either
	// way no player loads in it.
	status, raw = s.call(t, "GET", fmt.Sprintf("/embed/%d/status?external_id=paid-1&origin=%s", proj.ID, strings.TrimSuffix(strings.Replace(foreign, "/article", "", 1), "/")), nil)
	if status != http.StatusNotFound || !strings.Contains(string(raw), "not_found") {
		t.Errorf("status from the foreign origin: %d %s", status, raw)
	}
}
