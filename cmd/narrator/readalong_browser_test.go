//go:build e2e

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/narrator/narrator/internal/proctest"
)

// readAlongPage is a publisher's article holding the embed with
// data-readalong: the article's paragraphs, a caption and a pull quote the
// audio does not read there (the pull quote repeats a later sentence), and
// room to scroll the player out of view.
const readAlongPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Council approves new library</title>
<style>body{font:17px/1.5 Georgia,serif;max-width:720px;margin:24px auto;padding:0 16px;color:#222}</style></head>
<body><main><article>
<h1>Council approves new library</h1>
<div id="embed"><script src="%[1]s/embed.js" data-project="%[2]d" data-external-id="lib-1" data-readalong async></script></div>
<figure><figcaption id="caption">Main Street, where the library will stand.</figcaption></figure>
<p id="p1">The city council voted on Tuesday to build a new public library on Main Street.</p>
<p id="p2">It will open in the spring.</p>
<blockquote id="pull">Work starts next month.</blockquote>
<p id="p3">Ten thousand books will be on the shelves on the first day, with a children's corner, a café and quiet rooms for reading and study.</p>
<p id="p4">Volunteers are welcome.</p>
<p id="p5">The mayor said the library would be a place for everyone in the city, young and old, and that its doors would stay open late on weekdays.</p>
<p id="p6">Work starts next month.</p>
<div style="height:2400px"></div>
</article></main></body></html>`

// playlistPage holds the playlist embed.
const playlistPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Latest</title></head>
<body><main><h1>Latest</h1><script src="%[1]s/embed.js" data-project="%[2]d" data-playlist="" async></script></main></body></html>`

// axeVersion is the axe-core npm package scripts/test.sh installs.
const axeVersion = "4.10.3"

// axeSource returns axe-core's script.
func axeSource(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("NARRATOR_AXE")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "narrator", "axe-core")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		proctest.Missing(t, "the axe-core npm package in "+dir, "npm install --prefix "+dir+" axe-core@"+axeVersion)
	}
	return string(raw)
}

// axeClean runs axe-core's WCAG 2.1 A and AA rules on the document of ctx
// (not into its iframes, which are checked on their own) and fails t on
// each violation.
func axeClean(t *testing.T, ctx context.Context, axe, state string) {
	t.Helper()
	var violations []string
	browse(t, ctx, "axe "+state, chromedp.Evaluate(axe+`;0`, nil),
		chromedp.Evaluate(`axe.run(document, {iframes: false, runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
			.then(r => r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.nodes.map(n => n.target.join(' ')).join(', ')))`, &violations, awaitPromise))
	for _, v := range violations {
		t.Errorf("axe, %s: %s", state, v)
	}
}

// sameOrigin fails t unless every resource the document of ctx loaded
// came from one of origins: no third party.
func sameOrigin(t *testing.T, ctx context.Context, what string, origins ...string) {
	t.Helper()
	var urls []string
	browse(t, ctx, "resources of "+what, chromedp.Evaluate(`performance.getEntriesByType('resource').map(e => e.name)`, &urls))
	if len(urls) == 0 {
		t.Errorf("%s loaded nothing", what)
	}
	for _, u := range urls {
		if !slices.ContainsFunc(origins, func(o string) bool { return strings.HasPrefix(u, o+"/") }) {
			t.Errorf("%s loaded %s, not from %s", what, u, origins)
		}
	}
}

// publisherPages serves the pages from another origin than narrator's.
func publisherPages(t *testing.T, pages map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

// TestReadAlongInBrowser drives the player's reach into the publisher's
// page in headless chromium: the read-along in the article itself, the
// click on a paragraph, the mini-player, the Media Session, the keys, the
// remembered position, and the playlist.
func TestReadAlongInBrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	axe := axeSource(t)
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	create := func(ref, title, body string) {
		t.Helper()
		s.create(t, proj.ID, map[string]any{
			"api_key": acct.APIKey, "title": title, "body": body, "author": "Jane Doe", "external_id": ref})
	}
	create("lib-1", "Council approves new library", embedArticle)
	create("lib-2", "Library hours", "<p>The library opens at nine.</p><p>It closes at eight.</p>")
	create("lib-draft", "Secret plans", "<p>Nobody may hear this yet.</p>")
	a := s.waitProcessed(t, proj.ID, "lib-1", acct.APIKey, 90*time.Second)
	s.waitProcessed(t, proj.ID, "lib-2", acct.APIKey, 90*time.Second)
	draft := s.waitProcessed(t, proj.ID, "lib-draft", acct.APIKey, 90*time.Second)
	if status, raw := s.call(t, "PUT", fmt.Sprintf("/api/v3/projects/%d/audio/%d/publication", proj.ID, draft.ID),
		map[string]any{"api_key": acct.APIKey, "state": "draft"}); status != 200 {
		t.Fatalf("draft: %d %s", status, raw)
	}
	tr := transcriptOf(t, a)
	site := publisherPages(t, map[string]string{
		"/article":  fmt.Sprintf(readAlongPage, s.base, proj.ID),
		"/playlist": fmt.Sprintf(playlistPage, s.base, proj.ID),
	})
	// Which paragraph of the page each sentence of the audio is in.
	paragraph := map[int]string{}
	for i, sen := range tr.Sentences {
		for j, p := range []string{"The city council voted", "It will open", "Ten thousand books", "Volunteers are", "The mayor said", "Work starts"} {
			if strings.HasPrefix(sen.Text, p) {
				paragraph[i] = fmt.Sprintf("p%d", j+1)
			}
		}
	}
	if len(paragraph) != 6 {
		t.Fatalf("the transcript's sentences %+v do not hold the article's six paragraphs", tr.Sentences)
	}
	ctx := newBrowser(t, chromium)
	browse(t, ctx, "article", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(site+"/article"),
		waitJS(`document.querySelectorAll('.narrator-s').length > 0`, 30*time.Second))
	frame := frameContext(t, ctx, "external_id=lib-1")
	const audio = `document.querySelector('#player')`

	t.Run("aligned", func(t *testing.T) {
		var marked map[string]string
		browse(t, ctx, "marks", chromedp.Evaluate(`(() => {
			const m = {};
			for (const s of document.querySelectorAll('.narrator-s')) m[s.dataset.narratorS] = (s.closest('p, blockquote, figcaption, h1') || {}).id || s.parentNode.tagName;
			return m;
		})()`, &marked))
		for i, want := range paragraph {
			if got := marked[fmt.Sprint(i)]; got != want {
				t.Errorf("sentence %d %q is marked in %q, want %q", i, tr.Sentences[i].Text, got, want)
			}
		}
		for i, in := range marked {
			if strings.HasPrefix(in, "p") || in == "H1" && tr.Sentences[atoi(t, i)].Text == "Council approves new library" {
				continue // a paragraph, or the title, read too
			}
			t.Errorf("sentence %s is marked in %s, which the audio does not read", i, in)
		}
	})

	t.Run("axe, idle", func(t *testing.T) {
		axeClean(t, frame, axe, "idle player")
		axeClean(t, ctx, axe, "page with the read-along")
	})

	t.Run("click plays from the paragraph", func(t *testing.T) {
		browse(t, ctx, "click", chromedp.Click(`#p3`, chromedp.ByQuery))
		var at float64
		i := indexOf(paragraph, "p3")
		browse(t, frame, "playing from p3",
			waitJS(`!`+audio+`.paused && !`+audio+`.seeking && `+audio+`.currentTime > 0`, 20*time.Second),
			chromedp.Evaluate(audio+`.currentTime`, &at))
		if s := tr.Sentences[i]; at < s.Start || at > s.End {
			t.Errorf("a click on p3 (sentence %d, %.2f–%.2f s) plays from %.2f s", i, s.Start, s.End, at)
		}
	})

	t.Run("highlight follows the audio", func(t *testing.T) {
		from := indexOf(paragraph, "p3")
		browse(t, ctx, "next sentence lit", waitJS(fmt.Sprintf(`%s === %d`, litSentence, from+1), 30*time.Second))
		// As each next sentence lights up, the sentence lit in the page is
		// the one the audio is in, give or take the one it is leaving.
		for k := from + 1; k <= from+3 && k < len(tr.Sentences); k++ {
			n := wantLitWithAudio(t, ctx, frame, audio, tr, k)
			var lightIn string
			browse(t, ctx, "lit element", chromedp.Evaluate(`Array.from(document.querySelectorAll('.narrator-on')).map(e => e.closest('p').id + ':' + e.dataset.narratorS).join()`, &lightIn))
			if want := paragraph[n] + ":" + fmt.Sprint(n); !strings.HasPrefix(lightIn, want) {
				t.Errorf("lit spans %q, want those of sentence %d in %s", lightIn, n, paragraph[n])
			}
		}
		axeClean(t, frame, axe, "playing")
		axeClean(t, ctx, axe, "page reading along")
		sameOrigin(t, ctx, "the article page", s.base, site) // its own origin: the favicon
		sameOrigin(t, frame, "the player", s.base)
		var word bool
		browse(t, ctx, "word", chromedp.Evaluate(`!!(window.CSS && CSS.highlights && CSS.highlights.has('narrator-word'))`, &word))
		if !word {
			t.Error("no word is highlighted while the voice reads a sentence it timed word by word")
		}
	})

	t.Run("media session", func(t *testing.T) {
		var meta struct{ Title, Artist string }
		browse(t, frame, "metadata", chromedp.Evaluate(`({Title: navigator.mediaSession.metadata.title, Artist: navigator.mediaSession.metadata.artist})`, &meta))
		if meta.Title != "Council approves new library" || meta.Artist != "Jane Doe" {
			t.Errorf("media session shows %+v", meta)
		}
		var page struct{ Title, Artist string }
		browse(t, ctx, "page metadata", waitJS(`!!navigator.mediaSession.metadata`, 10*time.Second),
			chromedp.Evaluate(`({Title: navigator.mediaSession.metadata.title, Artist: navigator.mediaSession.metadata.artist})`, &page))
		if page != meta {
			t.Errorf("the page's media session shows %+v, the player's %+v", page, meta)
		}
	})

	t.Run("mini-player", func(t *testing.T) {
		var box struct{ Top, Bottom, Height, Width float64 }
		browse(t, ctx, "scroll past",
			chromedp.Evaluate(`window.scrollTo(0, document.body.scrollHeight); 0`, nil),
			waitJS(`document.querySelector('iframe.narrator-player').classList.contains('narrator-mini')`, 10*time.Second),
			chromedp.Evaluate(`(() => { const r = document.querySelector('iframe.narrator-player').getBoundingClientRect(); return {Top: r.top, Bottom: r.bottom - innerHeight, Height: r.height, Width: r.width}; })()`, &box))
		if box.Top < 0 || box.Bottom > 0 || box.Height < 40 || box.Width < 700 {
			t.Errorf("the mini-player is at %+v, not in the window", box)
		}
		browse(t, frame, "mini layout", waitJS(`document.querySelector('.np').classList.contains('np-mini') && getComputedStyle(document.querySelector('.np-close')).display !== 'none'`, 10*time.Second))
		axeClean(t, frame, axe, "mini-player")
		// The mini-player's frame fits the mini-player before the click.
		var h float64
		browse(t, frame, "mini height", chromedp.Evaluate(`Math.ceil(document.documentElement.getBoundingClientRect().height)`, &h))
		browse(t, ctx, "frame fits", waitJS(fmt.Sprintf(`document.querySelector('iframe.narrator-player').getBoundingClientRect().height === %v`, h), 10*time.Second))
		clickUntil(t, ctx, frame, "iframe.narrator-player", ".np-close", ctx, `!document.querySelector('iframe.narrator-player').classList.contains('narrator-mini')`)
		browse(t, ctx, "dismissed", waitJS(`!document.querySelector('iframe.narrator-player').classList.contains('narrator-mini')`, 10*time.Second),
			chromedp.Evaluate(`window.scrollTo(0, 0); window.scrollTo(0, document.body.scrollHeight); 0`, nil))
		var mini bool
		// Two frames later the scroll has been observed.
		browse(t, ctx, "stays dismissed", chromedp.Evaluate(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() =>
			r(document.querySelector('iframe.narrator-player').classList.contains('narrator-mini')))))`, &mini, awaitPromise))
		if mini {
			t.Error("a dismissed mini-player came back")
		}
	})

	t.Run("keys and remembered position", func(t *testing.T) {
		browse(t, ctx, "top", chromedp.Evaluate(`window.scrollTo(0, 0); 0`, nil))
		browse(t, frame, "start", chromedp.Evaluate(audio+`.currentTime = 1; `+audio+`.play(); 0`, nil), waitJS(`!`+audio+`.paused`, 10*time.Second))
		clickUntil(t, ctx, frame, "iframe.narrator-player", ".np-heading", frame, `document.hasFocus()`)
		browse(t, ctx, "k pauses", chromedp.KeyEvent("k"))
		browse(t, frame, "paused", waitJS(audio+`.paused`, 10*time.Second),
			chromedp.Evaluate(audio+`.currentTime = 8; 0`, nil), waitJS(`!`+audio+`.seeking`, 10*time.Second))
		browse(t, ctx, "right arrow", chromedp.KeyEvent(kb.ArrowRight))
		var at float64
		browse(t, frame, "skipped", waitJS(audio+`.currentTime > 12 && !`+audio+`.seeking`, 10*time.Second),
			chromedp.Evaluate(audio+`.currentTime`, &at),
			chromedp.Evaluate(audio+`.play().then(() => `+audio+`.pause()) && 0`, nil),
			waitJS(audio+`.paused`, 10*time.Second))
		if at < 12.9 || at > 13.1 {
			t.Errorf("after → at 8 s the audio is at %.2f s, want 13", at)
		}
		browse(t, ctx, "again", chromedp.Navigate(site+"/article?again"), waitJS(`document.querySelectorAll('.narrator-s').length > 0`, 30*time.Second))
		again := frameContext(t, ctx, "external_id=lib-1") // the new page's
		browse(t, again, "resumed", waitJS(audio+`.readyState >= 1 && `+audio+`.currentTime > 12`, 10*time.Second),
			chromedp.Evaluate(audio+`.currentTime`, &at))
		if at < 12 || at > 14 {
			t.Errorf("after a reload the audio starts at %.2f s, want where it was left, 13 s", at)
		}
	})

	t.Run("playlist", func(t *testing.T) {
		ctx := newBrowser(t, chromium) // a browser of its own
		browse(t, ctx, "playlist page", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(site+"/playlist"),
			waitJS(`!!document.querySelector('iframe.narrator-player')`, 20*time.Second))
		list := frameContext(t, ctx, "/playlist?")
		var titles []string
		browse(t, list, "list", waitJS(`!!document.querySelector('.np[data-ready]')`, 20*time.Second),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('.np-item')).map(e => e.dataset.title)`, &titles))
		if want := []string{"Library hours", "Council approves new library"}; fmt.Sprint(titles) != fmt.Sprint(want) {
			t.Fatalf("playlist %q, want %q (the published audios, newest first)", titles, want)
		}
		axeClean(t, list, axe, "playlist")
		browse(t, list, "to the end of the first",
			chromedp.Evaluate(audio+`.addEventListener('loadedmetadata', () => { `+audio+`.currentTime = `+audio+`.duration - 0.5; }, {once: true}); `+audio+`.readyState >= 1 && (`+audio+`.currentTime = `+audio+`.duration - 0.5); 0`, nil))
		clickUntil(t, ctx, list, "iframe.narrator-player", ".np-play", list, `!`+audio+`.paused`)
		var title string
		browse(t, list, "advances", waitJS(`document.querySelector('.np').dataset.track === '1' && !`+audio+`.paused`, 30*time.Second),
			chromedp.Evaluate(`navigator.mediaSession.metadata.title`, &title))
		if title != "Council approves new library" {
			t.Errorf("the second audio plays as %q on the lock screen", title)
		}
		clickIn(t, ctx, list, "iframe.narrator-player", ".np-next")
		browse(t, list, "next at the last stays", waitJS(`document.querySelector('.np').dataset.track === '1'`, 5*time.Second))
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// clickUntil clicks in the embed iframe (clickIn) until cond holds in the
// context in: the frame that just moved may get the click only once the
// browser's hit testing caught up with it.
func clickUntil(t *testing.T, top, frame context.Context, frameSelector, selector string, in context.Context, cond string) {
	t.Helper()
	for try := 0; ; try++ {
		clickIn(t, top, frame, frameSelector, selector)
		c, cancel := context.WithTimeout(in, 2*time.Second)
		err := chromedp.Run(c, waitJS(cond, 2*time.Second))
		cancel()
		if err == nil {
			return
		}
		if try == 4 {
			t.Fatalf("a click on %s: %s does not hold: %v", selector, cond, err)
		}
	}
}

// indexOf returns the first sentence whose paragraph is p, however the
// paragraphs are named.
func indexOf[P comparable](paragraph map[int]P, p P) int {
	first := -1
	for i, q := range paragraph {
		if q == p && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// litSentence is the JavaScript expression of the sentence the read-along
// lights in the page, as a number.
const litSentence = `+document.documentElement.dataset.narratorSentence`

// wantLitWithAudio waits until the page lights sentence k or a later one,
// then checks that the sentence it lights is the one the player's audio
// (the expression audio in player) is in, give or take the one it is
// leaving, and returns it.
func wantLitWithAudio(t *testing.T, page, player context.Context, audio string, tr transcriptJSON, k int) int {
	t.Helper()
	var before, after float64
	var n int
	browse(t, page, "lit", waitJS(fmt.Sprintf(`%s >= %d`, litSentence, k), 30*time.Second))
	browse(t, player, "time before", chromedp.Evaluate(audio+`.currentTime`, &before))
	browse(t, page, "lit", chromedp.Evaluate(litSentence, &n))
	browse(t, player, "time after", chromedp.Evaluate(audio+`.currentTime`, &after))
	if first, last := sentenceAt(tr, before), sentenceAt(tr, after); n < first-1 || n > last {
		t.Errorf("between %.2f and %.2f s (sentences %d–%d) the page lights sentence %d", before, after, first, last, n)
	}
	return n
}

// sentenceAt returns the last sentence started at t.
func sentenceAt(tr transcriptJSON, t float64) int {
	n := -1
	for i, s := range tr.Sentences {
		if s.Start <= t {
			n = i
		}
	}
	return n
}
