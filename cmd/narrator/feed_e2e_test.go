//go:build e2e

package main

import (
	"bytes"
	"context"
	bin "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hajimehoshi/go-mp3"
	"github.com/mmcdole/gofeed"

	"github.com/narrator/narrator"
)

// dashboard is a signed-in dashboard client: cookies kept, redirects not
// followed.
type dashboard struct {
	t      *testing.T
	base   string
	client *http.Client
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func signIn(t *testing.T, base, email, password string) *dashboard {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &dashboard{t: t, base: base, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	status, _ := d.post("/signin", d.csrf("/signin"), url.Values{"email": {email}, "password": {password}})
	if status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", status)
	}
	return d
}

func (d *dashboard) get(path string) (int, string) {
	d.t.Helper()
	res, body := send(d.t, d.client, "GET", d.base+path, nil)
	return res.StatusCode, string(body)
}

// csrf returns the CSRF token of the forms on a page.
func (d *dashboard) csrf(path string) string {
	d.t.Helper()
	_, body := d.get(path)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		d.t.Fatalf("no CSRF token on %s", path)
	}
	return m[1]
}

func (d *dashboard) post(path, csrf string, form url.Values) (int, string) {
	d.t.Helper()
	form.Set("csrf_token", csrf)
	res, body := send(d.t, d.client, "POST", d.base+path, strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded")
	return res.StatusCode, string(body)
}

var feedURLField = regexp.MustCompile(`id="feed-url" readonly value="([^"]+)"`)

// TestPodcastFeed turns a project's feed on in the dashboard of a real
// server whose audios are rendered by the real pipeline (lame, HLS) with
// the engine stand-in, and reads the feed with gofeed: every enclosure's
// length is the size of the MP3 its URL serves. An intro set through the
// API between the two audios begins the second's MP3, its transcript
// shifted past it, and not the first's. The server names a loopback WebSub
// hub (--websub-hub), which hears of the feed at its latest URL.
func TestPodcastFeed(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	const password = "a long enough password"
	createUser(t, data, acct.ID, "ed@acme.test", password)
	hub := &websubHub{}
	hubSrv := httptest.NewServer(hub)
	t.Cleanup(hubSrv.Close)
	// The guarded fetcher reaches the loopback hub only with
	// --webhooks-allow-private.
	s := startServer(t, data, freeAddr(t), "--engine-standin", "20ms", "--websub-hub", hubSrv.URL+"/hub", "--webhooks-allow-private")
	intro := writeWAV(t, "intro.wav", 3*16000, 32000) // 1.5 s at the pipeline's rate
	titles := map[string]string{
		"one": "Q&A: <Tom> said \"]]>\" 🎙️",
		"two": "A second story, somewhat longer",
	}
	for i, ref := range []string{"one", "two"} {
		req := map[string]any{
			"api_key": acct.APIKey, "title": titles[ref], "external_id": ref, "article_url": "https://acme.test/" + ref,
			"body": article + strings.Repeat("<p>More text for the second story.</p>", 5*i),
		}
		if ref == "one" { // the article's publication date, as the API's metadata gives it
			req["metadata"] = map[string]string{narrator.MetadataPublished: "2026-04-01T10:00:00Z"}
		}
		s.create(t, proj.ID, req)
		s.waitProcessed(t, proj.ID, ref, acct.APIKey, 60*time.Second)
		if ref == "one" {
			putIntro(t, s, proj.ID, acct.APIKey, intro)
		}
	}

	d := signIn(t, s.base, "ed@acme.test", password)
	page := fmt.Sprintf("/projects/%d/feed", proj.ID)
	tok := d.csrf(page)
	if status, body := d.post(page, tok, url.Values{"title": {"Acme Daily"}, "language": {"en-US"}, "author": {"Acme"},
		"category": {"News > Daily News"}}); status != http.StatusSeeOther {
		t.Fatalf("turn the feed on: %d\n%s", status, body)
	}
	_, body := d.get(page)
	m := feedURLField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no feed URL on the page:\n%s", body)
	}
	feedURL := m[1]
	if !strings.HasPrefix(feedURL, s.base+"/feeds/") || !strings.HasSuffix(feedURL, ".xml") {
		t.Fatalf("feed URL %q", feedURL)
	}

	res, raw := fetch(t, feedURL)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/rss+xml; charset=utf-8" {
		t.Fatalf("feed: %d %v", res.StatusCode, res.Header)
	}
	f, err := gofeed.NewParser().ParseString(string(raw))
	if err != nil {
		t.Fatalf("gofeed: %v\n%s", err, raw)
	}
	if f.Title != "Acme Daily" || f.ITunesExt == nil || f.ITunesExt.Author != "Acme" || len(f.Items) != 2 {
		t.Fatalf("feed %q by %+v with %d items", f.Title, f.ITunesExt, len(f.Items))
	}
	if links := f.Extensions["atom"]["link"]; len(links) != 2 || links[1].Attrs["rel"] != "hub" || links[1].Attrs["href"] != hubSrv.URL+"/hub" {
		t.Errorf("atom:link %+v, want self and the hub", links)
	}
	for i, ref := range []string{"two", "one"} { // newest first
		it := f.Items[i]
		if it.Title != titles[ref] || it.Link != "https://acme.test/"+ref || len(it.Enclosures) != 1 {
			t.Fatalf("item %d: %q, link %q, %d enclosures", i, it.Title, it.Link, len(it.Enclosures))
		}
		enc := it.Enclosures[0]
		mres, mp3 := fetch(t, enc.URL)
		if mres.StatusCode != 200 || mres.Header.Get("Content-Type") != "audio/mpeg" {
			t.Fatalf("item %d: enclosure %s: %d", i, enc.URL, mres.StatusCode)
		}
		if enc.Type != "audio/mpeg" || enc.Length != strconv.Itoa(len(mp3)) || len(mp3) == 0 {
			t.Errorf("item %d: enclosure length %s, type %s; the MP3 has %d bytes", i, enc.Length, enc.Type, len(mp3))
		}
		dur, _ := decodeMP3(t, mp3)
		if c := introCorrelation(t, mp3, intro); (ref == "two") != (c > 0.9) {
			t.Errorf("item %d (%s): its start correlates %.3f with the intro", i, ref, c)
		}
		secs, err := strconv.Atoi(it.ITunesExt.Duration)
		if diff := time.Duration(secs)*time.Second - dur; err != nil || diff > time.Second || diff < -time.Second {
			t.Errorf("item %d: itunes:duration %q, the MP3 lasts %s", i, it.ITunesExt.Duration, dur)
		}
		// The WebVTT and the Podcasting 2.0 JSON transcripts, which web
		// players read from other origins.
		tr := it.Extensions["podcast"]["transcript"]
		folder := strings.TrimSuffix(enc.URL, "audio.mp3")
		if len(tr) != 2 || tr[0].Attrs["url"] != folder+narrator.TranscriptVTTName || tr[0].Attrs["rel"] != "captions" ||
			tr[1].Attrs["url"] != folder+narrator.PodcastTranscriptName || tr[1].Attrs["type"] != "application/json" {
			t.Fatalf("item %d: podcast:transcript %+v", i, tr)
		}
		for j, prefix := range []string{"WEBVTT", `{"version":"1.0.0","segments":[{"startTime":`} {
			tres, tbody := fetch(t, tr[j].Attrs["url"], "Origin", "https://player.example")
			if tres.StatusCode != 200 || tres.Header.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.HasPrefix(tres.Header.Get("Content-Type"), tr[j].Attrs["type"]) || !strings.HasPrefix(string(tbody), prefix) {
				t.Errorf("item %d: transcript %s: %d, %v\n%.100s", i, tr[j].Attrs["url"], tres.StatusCode, tres.Header, tbody)
			}
			var segs struct{ Segments []struct{ StartTime float64 } }
			if j == 1 && (json.Unmarshal(tbody, &segs) != nil || len(segs.Segments) == 0 || (ref == "two") != (segs.Segments[0].StartTime >= 1.5)) {
				t.Errorf("item %d (%s): the transcript starts at %+v; the intro lasts 1.5 s", i, ref, segs.Segments[:min(1, len(segs.Segments))])
			}
		}
		ch := it.Extensions["podcast"]["chapters"]
		if len(ch) != 1 || ch[0].Attrs["url"] != folder+narrator.ChaptersName {
			t.Fatalf("item %d: podcast:chapters %+v", i, ch)
		}
		cres, cbody := fetch(t, ch[0].Attrs["url"], "Origin", "https://player.example")
		var chapters struct {
			Version  string
			Chapters []struct {
				StartTime float64
				Title     string
			}
		}
		if err := json.Unmarshal(cbody, &chapters); err != nil || cres.StatusCode != 200 ||
			cres.Header.Get("Access-Control-Allow-Origin") != "*" || cres.Header.Get("Content-Type") != "application/json+chapters" ||
			chapters.Version != "1.2.0" || len(chapters.Chapters) == 0 || chapters.Chapters[0].Title != titles[ref] {
			t.Errorf("item %d: chapters: %d, %v, %v\n%.200s", i, cres.StatusCode, err, cres.Header, cbody)
		}
		if txt := it.Extensions["podcast"]["txt"]; len(txt) != 1 || txt[0].Attrs["purpose"] != "ai-content" {
			t.Errorf("item %d: podcast:txt %+v", i, txt)
		}
		if ref == "one" && (it.PublishedParsed == nil || !it.PublishedParsed.Equal(time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC))) {
			t.Errorf("item %d: published %v, want the article's date", i, it.PublishedParsed)
		}
	}

	// A conditional poll costs nothing; a rotated URL is gone.
	if res, body := fetch(t, feedURL, "If-None-Match", res.Header.Get("ETag")); res.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("conditional GET: %d, %d bytes", res.StatusCode, len(body))
	}
	if status, _ := d.post(page+"/rotate", tok, url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("rotate: %d", status)
	}
	if res, _ := fetch(t, feedURL); res.StatusCode != http.StatusNotFound {
		t.Errorf("old feed URL after rotation: %d", res.StatusCode)
	}
	_, body = d.get(page)
	if m := feedURLField.FindStringSubmatch(body); m == nil || m[1] == feedURL {
		t.Fatalf("no new feed URL after rotation")
	} else if res, _ := fetch(t, m[1]); res.StatusCode != 200 {
		t.Errorf("new feed URL: %d", res.StatusCode)
	} else {
		hub.waitFor(t, m[1])
	}
}

// websubHub is a loopback WebSub hub that records the feed URLs it is
// pinged with (hub.mode=publish).
type websubHub struct {
	mu   sync.Mutex
	urls []string
}

func (h *websubHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil || r.PostForm.Get("hub.mode") != "publish" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.urls = append(h.urls, r.PostForm.Get("hub.url"))
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// waitFor waits until the hub is pinged with feedURL: pings come at the
// end of a window of narrator.FeedPingWindow.
func (h *websubHub) waitFor(t *testing.T, feedURL string) {
	t.Helper()
	deadline := time.Now().Add(3 * narrator.FeedPingWindow)
	for {
		h.mu.Lock()
		urls := slices.Clone(h.urls)
		h.mu.Unlock()
		if slices.Contains(urls, feedURL) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hub got pings for %q, not %s", urls, feedURL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPodcastFeedInBrowser turns a feed on, gives it a new URL and turns it
// off from the dashboard in headless chromium, with screenshots of the
// page on a laptop and on a phone.
func TestPodcastFeedInBrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	data, acct, proj := fixture(t)
	const email, password = "ed@acme.test", "a long enough password"
	createUser(t, data, acct.ID, email, password)
	s := startServer(t, data, freeAddr(t), "--engine-standin", "20ms")
	shots := screenshotDir(t)
	ctx := newBrowser(t, chromium)
	var feedURL, rotatedURL, loc, flash string
	var hasURL bool
	browse(t, ctx, "sign in",
		chromedp.Navigate(fmt.Sprintf("%s/projects/%d", s.base, proj.ID)),
		signInSteps(email, password),
		chromedp.WaitVisible(`a[href$="/feed"]`),
	)
	browse(t, ctx, "turn the feed on",
		chromedp.Click(`a[href$="/feed"]`),
		chromedp.WaitVisible("#feed-form"),
		shoot(t, shots, "feed-new"),
		chromedp.SendKeys("#f-description", "The day's stories, read aloud."),
		chromedp.SendKeys("#f-author", "Acme News"),
		chromedp.SetValue("#f-category", "News > Daily News"),
		chromedp.Submit("#feed-form"),
		chromedp.WaitVisible("#feed-url"),
		chromedp.Value("#feed-url", &feedURL),
		chromedp.Location(&loc),
		shoot(t, shots, "feed-on"),
	)
	if !strings.HasSuffix(loc, fmt.Sprintf("/projects/%d/feed", proj.ID)) {
		t.Errorf("after saving at %s", loc)
	}
	if res, raw := fetch(t, feedURL); res.StatusCode != 200 || !strings.Contains(string(raw), `<itunes:category text="Daily News">`) {
		t.Fatalf("feed %s: %d\n%s", feedURL, res.StatusCode, raw)
	}
	browse(t, ctx, "new URL",
		chromedp.Click(`#feed-rotate-form button`),
		// The old page's field stays until the new page replaces it, and
		// a script evaluated across that navigation fails: ask again until
		// the field holds a new URL.
		chromedp.ActionFunc(func(ctx context.Context) error {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				var v string
				err := chromedp.Evaluate(`(document.getElementById("feed-url") || {}).value || ""`, &v).Do(ctx)
				if err == nil && v != "" && v != feedURL {
					rotatedURL = v
					return nil
				}
			}
			return errors.New("the feed URL did not change")
		}),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		shoot(t, shots, "feed-phone"),
		chromedp.EmulateViewport(1280, 900),
	)
	if rotatedURL == feedURL {
		t.Fatal("the feed URL did not change")
	}
	if res, _ := fetch(t, feedURL); res.StatusCode != 404 {
		t.Errorf("old feed URL: %d", res.StatusCode)
	}
	browse(t, ctx, "turn off",
		chromedp.Click(`#feed-off-form button`),
		chromedp.WaitVisible("#feed-off"),
		chromedp.Text(".flash", &flash, chromedp.NodeVisible),
		chromedp.Evaluate(`!!document.querySelector('#feed-url')`, &hasURL),
	)
	if hasURL || !strings.Contains(flash, "off") {
		t.Errorf("after turning off: URL shown %v, flash %q", hasURL, flash)
	}
	if res, _ := fetch(t, rotatedURL); res.StatusCode != 404 {
		t.Errorf("feed turned off: %d", res.StatusCode)
	}
}

// putIntro sets a project's intro to the WAV file at path through the API.
func putIntro(t *testing.T, s *node, projectID int64, key, path string) {
	t.Helper()
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), "PUT", fmt.Sprintf("%s/api/v3/projects/%d/intro", s.base, projectID), bytes.NewReader(wav))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "audio/wav")
	req.Header.Set("X-Api-Key", key)
	res, err := checkedHTTP(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT intro: %d %s", res.StatusCode, body)
	}
}

// introCorrelation returns how closely the start of an MP3, past the
// encoder's delay, matches the 32 kHz WAV file at path: 1 when it is the
// same sound.
func introCorrelation(t *testing.T, mp3Data []byte, path string) float64 {
	t.Helper()
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clip := wav[44:] // the header writeWAV writes
	dec, err := mp3.NewDecoder(bytes.NewReader(mp3Data))
	if err != nil {
		t.Fatal(err)
	}
	pcm, err := io.ReadAll(dec)
	if err != nil {
		t.Fatal(err)
	}
	const delay = 1105 // internal/mp3.Delay
	var ab, aa, bb float64
	for i := 0; 2*i+1 < len(clip) && 4*(delay+i)+1 < len(pcm); i++ {
		x := float64(int16(bin.LittleEndian.Uint16(clip[2*i:])))
		y := float64(int16(bin.LittleEndian.Uint16(pcm[4*(delay+i):]))) // left channel of go-mp3's stereo
		ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
