//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// embedArticle is spoken as a few sentences of clearly different lengths,
// so that the read-along has something to follow.
const embedArticle = `<p>The city council voted on Tuesday to build a new public library on Main Street.</p>
<p>It will open in the spring.</p>
<p>Ten thousand books will be on the shelves on the first day, with a children's corner, a café and quiet rooms for reading and study.</p>
<p>Volunteers are welcome.</p>
<p>The mayor said the library would be a place for everyone in the city, young and old, and that its doors would stay open late on weekdays.</p>
<p>Work starts next month.</p>`

// transcriptJSON is the wire shape of an audio's transcript.
type transcriptJSON struct {
	Duration  float64 `json:"duration"`
	Sentences []struct {
		Start float64 `json:"start"`
		End   float64 `json:"end"`
		Text  string  `json:"text"`
	} `json:"sentences"`
}

// articleServer serves a publisher's article page from another origin
// than narrator's: localhost, where narrator is on 127.0.0.1. It holds two
// players: one found by external ID, one by the page's canonical URL.
func articleServer(t *testing.T, base string, projectID int64, canonical string) string {
	t.Helper()
	page := fmt.Sprintf(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="%[3]s"><title>Council approves new library</title>
<style>body{font:17px/1.5 Georgia,serif;max-width:720px;margin:24px auto;padding:0 16px;color:#222}</style></head>
<body><h1>Council approves new library</h1><p><em>By Jane Doe</em></p>
<div id="by-id"><script src="%[1]s/embed.js" data-project="%[2]d" data-external-id="lib-1" async></script></div>
<p>The city council voted on Tuesday to build a new public library on Main Street.</p>
<p>Further down the page, the same audio found by the page's address:</p>
<div id="by-url"><script src="%[1]s/embed.js" data-project="%[2]d" async></script></div>
</body></html>`, base, projectID, canonical)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/article"
}

// frameContext waits for the embed iframe whose URL contains part and
// returns a context attached to it: the iframe is another site's, so it
// runs as a target of its own.
func frameContext(t *testing.T, ctx context.Context, part string) context.Context {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		targets, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range targets {
			if ti.Type == "iframe" && strings.Contains(ti.URL, part) {
				fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(ti.TargetID))
				t.Cleanup(cancel)
				// Attach now, on the context itself: the first Run's
				// context owns the attachment, and browse's are cancelled.
				if err := chromedp.Run(fctx); err != nil {
					t.Fatalf("attach to the embed iframe: %v", err)
				}
				return fctx
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no embed iframe with %q in its URL", part)
	return nil
}

// clickIn clicks the middle of the element that selector finds in the
// embed iframe that frameSelector finds, with the mouse of the top page,
// as a reader would: the iframe is another site's, so chromedp cannot
// click in it directly. top is the top page's context, frame the iframe's.
func clickIn(t *testing.T, top, frame context.Context, frameSelector, selector string) {
	t.Helper()
	var box, el struct{ X, Y, W, H float64 }
	rect := `(e => { const r = e.getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })`
	q := `document.querySelector(` + jsString(selector) + `)`
	browse(t, frame, "find "+selector, chromedp.Evaluate(q+`.scrollIntoView({block: 'nearest'}); `+rect+`(`+q+`)`, &el))
	// Scrolling the transcript may have scrolled the page too.
	browse(t, top, "click "+selector,
		chromedp.Evaluate(rect+`(document.querySelector(`+jsString(frameSelector)+`))`, &box),
		chromedp.ActionFunc(func(ctx context.Context) error {
			return chromedp.MouseClickXY(box.X+el.X+el.W/2, box.Y+el.Y+el.H/2).Do(ctx)
		}),
	)
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestEmbedInBrowser drives the embedded player in headless chromium on a
// publisher's page from another origin, against a real `narrator serve`
// with the real engines.
func TestEmbedInBrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	const canonical = "https://news.example/2026/library"
	s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Council approves new library", "body": embedArticle,
		"external_id": "lib-1", "article_url": canonical,
	})
	a := s.waitProcessed(t, proj.ID, "lib-1", acct.APIKey, 90*time.Second)
	tr := transcriptOf(t, a)
	if len(tr.Sentences) < 5 {
		t.Fatalf("transcript has %d sentences, want the article's", len(tr.Sentences))
	}
	shots := screenshotDir(t)
	ctx := newBrowser(t, chromium)
	article := articleServer(t, s.base, proj.ID, canonical)

	browse(t, ctx, "article page", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(article),
		waitJS(`document.querySelectorAll('iframe.narrator-player').length === 2`, 20*time.Second))
	frame := frameContext(t, ctx, "external_id=lib-1")
	byURL := frameContext(t, ctx, "url=")
	const root = `document.querySelector('.np')`
	const audio = `document.querySelector('#player')`
	ready := waitJS(root+` && `+root+`.dataset.ready === 'true' && document.querySelectorAll('.np-s').length > 0`, 20*time.Second)
	browse(t, byURL, "player found by canonical URL", ready)
	var n int
	var src, label string
	browse(t, frame, "player ready",
		ready,
		chromedp.Evaluate(`document.querySelectorAll('.np-s').length`, &n),
		chromedp.Evaluate(audio+`.currentSrc`, &src),
		chromedp.AttributeValue(`.np-play`, "aria-label", &label, nil),
	)
	if n != len(tr.Sentences) || label != "Play" {
		t.Errorf("player shows %d sentences and a %q button; want %d and Play", n, label, len(tr.Sentences))
	}
	t.Logf("player source: %s", src)
	// The iframe fits its player: the loader sized it from the player's report.
	var frameHeight float64
	browse(t, ctx, "frame height",
		waitJS(`document.querySelector('#by-id iframe').getBoundingClientRect().height !== 140`, 10*time.Second),
		chromedp.Evaluate(`document.querySelector('#by-id iframe').getBoundingClientRect().height`, &frameHeight),
	)
	if frameHeight < 150 || frameHeight > 600 {
		t.Errorf("iframe is %.0f px tall", frameHeight)
	}

	// Play: currentTime advances and the read-along follows the voice.
	var at float64
	var playing bool
	clickIn(t, ctx, frame, "#by-id iframe", `.np-play`)
	browse(t, frame, "playing",
		waitJS(audio+`.currentTime > 0.5 && !`+audio+`.paused`, 20*time.Second),
		chromedp.AttributeValue(`.np-play`, "aria-label", &label, nil),
		waitJS(root+`.dataset.sentence === '1'`, 30*time.Second),
		chromedp.Evaluate(audio+`.currentTime`, &at),
		chromedp.Evaluate(`!`+audio+`.paused`, &playing),
	)
	if label != "Pause" {
		t.Errorf("while playing the button says %q, want Pause", label)
	}
	if s1 := tr.Sentences[1]; at < s1.Start-0.1 || at > s1.End || !playing {
		t.Errorf("sentence 1 (%.2f–%.2f s) lit at %.2f s, playing %v", s1.Start, s1.End, at, playing)
	}
	browse(t, frame, "still following",
		waitJS(root+`.dataset.sentence === '2'`, 30*time.Second),
		chromedp.Evaluate(audio+`.currentTime`, &at),
	)
	if s2 := tr.Sentences[2]; at < s2.Start-0.1 || at > s2.End {
		t.Errorf("sentence 2 (%.2f–%.2f s) lit at %.2f s", s2.Start, s2.End, at)
	}
	var lit []string
	browse(t, frame, "one sentence lit",
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.np-s.np-active')).map(e => e.dataset.i + ':' + e.getAttribute('aria-current'))`, &lit))
	if len(lit) != 1 || lit[0] != "2:true" {
		t.Errorf("lit sentences %v, want only 2, marked aria-current", lit)
	}
	browse(t, ctx, "laptop screenshot", shoot(t, shots, "embed-laptop"))

	// Clicking a sentence seeks there, and so does Enter on it.
	last := len(tr.Sentences) - 1
	clickIn(t, ctx, frame, "#by-id iframe", fmt.Sprintf(`.np-s[data-i="%d"]`, last-1))
	browse(t, frame, "seeked to the sentence",
		waitJS(fmt.Sprintf(`%s.dataset.sentence === '%d'`, root, last-1), 10*time.Second),
		chromedp.Evaluate(audio+`.currentTime`, &at),
	)
	if want := tr.Sentences[last-1].Start; at < want || at > want+1 {
		t.Errorf("after a click on sentence %d (from %.2f s) currentTime is %.2f s", last-1, want, at)
	}
	// The keyboard: the arrow keys move between sentences, Enter plays
	// from the one in focus.
	var focused string
	browse(t, ctx, "keys on a sentence",
		chromedp.KeyEvent(kb.ArrowLeft),
		chromedp.KeyEvent(kb.ArrowLeft),
	)
	browse(t, frame, "focus moved", chromedp.Evaluate(`document.activeElement.dataset.i`, &focused))
	browse(t, ctx, "Enter", chromedp.KeyEvent(kb.Enter))
	browse(t, frame, "Enter seeks",
		waitJS(fmt.Sprintf(`%s.dataset.sentence === '%d'`, root, last-3), 10*time.Second),
		chromedp.Evaluate(audio+`.currentTime`, &at),
	)
	if want := tr.Sentences[last-3].Start; focused != fmt.Sprint(last-3) || at < want || at > want+1 {
		t.Errorf("after two left arrows the focus is on sentence %s, want %d; Enter went to %.2f s, want from %.2f s", focused, last-3, at, want)
	}

	// The speed control sets the playback rate; skipping moves by 15 s.
	var rate float64
	browse(t, frame, "speed",
		chromedp.SetValue(`.np-speed`, "1.5"),
		chromedp.Evaluate(`document.querySelector('.np-speed').dispatchEvent(new Event('change')); 0`, nil),
		chromedp.Evaluate(audio+`.playbackRate`, &rate),
	)
	if rate != 1.5 {
		t.Errorf("playbackRate %.2f after choosing 1.5×", rate)
	}
	var before, after float64
	browse(t, frame, "pause",
		chromedp.Evaluate(audio+`.pause(); `+audio+`.currentTime = 1; 0`, nil),
		waitJS(`!`+audio+`.seeking && `+audio+`.paused`, 10*time.Second),
		chromedp.Evaluate(audio+`.currentTime`, &before),
	)
	clickIn(t, ctx, frame, "#by-id iframe", `.np-fwd`)
	browse(t, frame, "skipped",
		waitJS(audio+`.currentTime > 2 && !`+audio+`.seeking`, 10*time.Second),
		chromedp.Evaluate(audio+`.currentTime`, &after),
	)
	if d := after - before; d < 14.5 || d > 15.5 {
		t.Errorf("forward 15 s moved from %.2f to %.2f s", before, after)
	}
	// Playing to the end reports completion.
	browse(t, frame, "to the end",
		chromedp.Evaluate(`document.querySelector('.np-speed').value = '2'; document.querySelector('.np-speed').dispatchEvent(new Event('change')); `+audio+`.currentTime = `+audio+`.duration - 1.5; `+audio+`.play(); 0`, nil),
		waitJS(audio+`.ended`, 20*time.Second),
	)

	// A phone-sized page.
	browse(t, ctx, "phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(article+"?phone"),
		waitJS(`document.querySelectorAll('iframe.narrator-player').length === 2`, 20*time.Second),
	)
	phone := frameContext(t, ctx, "external_id=lib-1")
	browse(t, phone, "phone player", ready)
	browse(t, ctx, "phone screenshot",
		waitJS(`document.querySelector('#by-id iframe').getBoundingClientRect().height !== 140`, 10*time.Second),
		shoot(t, shots, "embed-phone"),
	)
	// Measured while the page is still phone-sized.
	var wraps bool
	browse(t, phone, "phone layout", chromedp.Evaluate(`(() => {
		const seek = document.querySelector('.np-seek').getBoundingClientRect();
		const play = document.querySelector('.np-play').getBoundingClientRect();
		return seek.top >= play.bottom - 1 && seek.width > 200;
	})()`, &wraps))
	if !wraps {
		t.Error("on a phone the seek bar does not get a wide row of its own")
	}
	browse(t, ctx, "laptop again", chromedp.EmulateViewport(1280, 800))

	// An audio still being made: the embed says so, checks by itself, and
	// notices when the audio is gone.
	var long strings.Builder
	for i := range 80 {
		fmt.Fprintf(&long, "Paragraph %d tells how the %d rooms of the old library will hold %d books by %d.\n\n", i+1, i+2, 1000+i*37, 2030+i)
	}
	s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Later", "body": long.String(), "external_id": "later"})
	var message string
	browse(t, ctx, "being prepared",
		chromedp.Navigate(fmt.Sprintf("%s/embed/%d?external_id=later", s.base, proj.ID)),
		chromedp.WaitVisible(`#np-message[data-state="pending"]`),
		chromedp.Text("#np-message", &message),
		shoot(t, shots, "embed-pending"),
	)
	if !strings.Contains(message, "being prepared") {
		t.Errorf("pending embed says %q", message)
	}
	if status, raw := s.call(t, "DELETE", fmt.Sprintf("/api/v3/projects/%d/audio/later", proj.ID), map[string]any{"api_key": acct.APIKey}); status != 200 {
		t.Fatalf("delete: %d %s", status, raw)
	}
	browse(t, ctx, "gone",
		chromedp.WaitVisible(`#np-message:not([data-state])`),
		chromedp.Text("#np-message", &message),
	)
	if !strings.Contains(message, "not available") {
		t.Errorf("embed of a deleted audio says %q", message)
	}

	// The listening events arrived: the dashboard shows them. Four page
	// views (two players, twice), one of them played to the end.
	const email, password = "editor@acme.test", "correct horse battery"
	createUser(t, data, acct.ID, email, password)
	browse(t, ctx, "sign in",
		chromedp.Navigate(s.base+"/signin"),
		signInSteps(email, password),
		chromedp.WaitNotPresent("#signin-form"),
	)
	want := map[string]string{"load": "4", "play": "1", "progress_25": "1", "progress_50": "1", "progress_75": "1", "complete": "1"}
	counts := `Object.fromEntries(Array.from(document.querySelectorAll('#listen-counts dd')).map(e => [e.dataset.count, e.textContent]))`
	var got map[string]string
	projectPage := fmt.Sprintf("%s/projects/%d", s.base, proj.ID)
	for deadline := time.Now().Add(15 * time.Second); ; {
		browse(t, ctx, "project figures",
			chromedp.Navigate(projectPage),
			chromedp.WaitVisible("#listen-counts"),
			chromedp.Evaluate(counts, &got),
		)
		if fmt.Sprint(got) == fmt.Sprint(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("project page counts %v, want %v", got, want)
	}
	var todayPlays string
	browse(t, ctx, "plays chart",
		chromedp.AttributeValue(`#plays-chart rect.chart-bar:last-of-type`, "data-plays", &todayPlays, nil),
		shoot(t, shots, "project-listening"),
	)
	if todayPlays != "1" {
		t.Errorf("today's bar shows %s plays, want 1", todayPlays)
	}
	// The audio page has the same player, with the read-along, the
	// snippets and the audio's counts.
	var snippet string
	browse(t, ctx, "audio page",
		chromedp.Navigate(fmt.Sprintf("%s/audios/%d", projectPage, a.ID)),
		waitJS(root+` && `+root+`.dataset.ready === 'true' && document.querySelectorAll('.np-s').length > 0`, 20*time.Second),
		chromedp.Evaluate(counts, &got),
		chromedp.Value("#snippet-script", &snippet),
		shoot(t, shots, "audio-player"),
	)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audio page counts %v, want %v", got, want)
	}
	if want := fmt.Sprintf(`<script src="%s/embed.js" data-project="%d" data-external-id="lib-1" async></script>`, s.base, proj.ID); snippet != want {
		t.Errorf("script snippet %q, want %q", snippet, want)
	}
}

// transcriptOf returns the transcript the pipeline wrote beside an
// audio's MP3, from its media URL.
func transcriptOf(t *testing.T, a audioOut) transcriptJSON {
	t.Helper()
	mp3URL := a.url(t, "mp3")
	jsonURL := mp3URL[:strings.LastIndex(mp3URL, "/")+1] + "transcript.json"
	res, body := fetch(t, jsonURL)
	if res.StatusCode != 200 {
		t.Fatalf("transcript %s: %d", jsonURL, res.StatusCode)
	}
	var tr transcriptJSON
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Fatalf("transcript: %v", err)
	}
	return tr
}
