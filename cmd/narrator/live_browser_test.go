//go:build e2e

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestLivePlaybackInBrowser starts playing an audio on its dashboard page
// in headless chromium while it is unprocessed, from its live stream, and
// checks that it plays through to the end, once processed, without
// stalling. The speech engines are stand-ins that take a while per
// sentence, so that the rendering lasts several seconds and playback
// starts long before it ends.
//
// It and TestLiveEmbedInBrowser are not parallel: Chromium, slowed by a
// neighbour's synthesis, could start playing only after the stand-ins'
// paced rendering ended.
func TestLivePlaybackInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	data, acct, proj := fixture(t)
	const email, password = "editor@acme.test", "correct horse battery"
	createUser(t, data, acct.ID, email, password)
	s := startServer(t, data, freeAddr(t), "--engine-standin", "1500ms")
	ctx := newBrowser(t, chromium)
	browse(t, ctx, "sign in",
		chromedp.Navigate(s.base+"/signin"),
		signInSteps(email, password),
		chromedp.WaitNotPresent("#signin-form"),
	)

	// Twelve short sentences: with two at a time, 1.5 s each, the
	// rendering takes about 9 s, and the audio lasts about 30 s, so that
	// playback starts long before the rendering ends. At 800 ms a
	// sentence, a loaded machine once rendered it all in 3.4 s, before
	// Chromium had started playing.
	var sentences []string
	// Sentences of different lengths, as in an article: the stand-in's
	// tones then differ, and so do the chunks the encoder cuts.
	for i := range 12 {
		sentences = append(sentences, fmt.Sprintf("Live sentence number %d%s.", i+1, strings.Repeat(" and more", i%4)))
	}
	a := s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Live", "body": "<p>" + strings.Join(sentences, " ") + "</p>", "external_id": "live",
	})

	var canHLS, stateAtStart, src string
	browse(t, ctx, "audio page while unprocessed",
		chromedp.Navigate(fmt.Sprintf("%s/projects/%d/audios/%d", s.base, proj.ID, a.ID)),
		chromedp.WaitVisible("#pending"),
		chromedp.Evaluate(`document.createElement("audio").canPlayType("application/vnd.apple.mpegurl")`, &canHLS),
	)
	// Chromium answers "maybe" for HLS, and plays an ended playlist, but
	// refuses (MEDIA_ERR_SRC_NOT_SUPPORTED) one that is still live: the
	// page plays the growing MP3 instead, which any browser plays.
	t.Logf("chromium canPlayType(application/vnd.apple.mpegurl) = %q", canHLS)
	browse(t, ctx, "live stream starts",
		waitJS(`!!document.getElementById("live-player").getAttribute("src")`, 30*time.Second),
		chromedp.Evaluate(recordPlayback("live-player", "true"), nil),
		chromedp.Evaluate(`document.getElementById("live-player").play().then(() => true)`, nil, awaitPromise),
		chromedp.Text("#audio-state", &stateAtStart),
		chromedp.Evaluate(`document.getElementById("live-player").currentSrc`, &src),
	)
	if !strings.HasSuffix(src, "/live.mp3") {
		t.Errorf("the player plays %s, want the live stream as a growing MP3", src)
	}
	t.Logf("state badge when playback started: %q", stateAtStart)
	if p := s.progress(t, proj.ID, "live", acct.APIKey); p.State != "unprocessed" {
		t.Fatalf("playback started only once the audio was %s; want it unprocessed", p.State)
	}

	// It plays to the end, through the audio being processed.
	var log playbackLog
	var duration, current float64
	browse(t, ctx, "plays to the end",
		waitJS(`window.liveLog.ended`, 90*time.Second),
		chromedp.Evaluate(`window.liveLog`, &log),
		chromedp.Evaluate(`document.getElementById("live-player").duration`, &duration),
		chromedp.Evaluate(`document.getElementById("live-player").currentTime`, &current),
	)
	t.Logf("live playback: %v; duration %.2f s", log.Events, duration)
	playedThrough(t, s.waitProcessed(t, proj.ID, "live", acct.APIKey, 10*time.Second), log, current)
}

// TestLiveEmbedInBrowser opens the embeddable player of an audio while it
// is unprocessed: the waiting page offers the live stream once the first
// words are out, and it plays to the end without a stall, through the
// audio being processed.
func TestLiveEmbedInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	data, acct, proj := fixture(t)
	// 1.5 s a sentence: the audio stays unprocessed for about 8 s, time
	// enough for a loaded machine to open the page and start playing.
	s := startServer(t, data, freeAddr(t), "--engine-standin", "1500ms")
	ctx := newBrowser(t, chromium)
	var sentences []string
	for i := range 10 {
		sentences = append(sentences, fmt.Sprintf("Embedded sentence number %d%s.", i+1, strings.Repeat(" and more", i%4)))
	}
	s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Live embed", "body": "<p>" + strings.Join(sentences, " ") + "</p>", "external_id": "embed-live",
	})
	var src string
	browse(t, ctx, "waiting embed offers the live stream",
		chromedp.Navigate(fmt.Sprintf("%s/embed/%d?external_id=embed-live", s.base, proj.ID)),
		chromedp.WaitVisible(`#np-message[data-state="pending"]`),
		waitJS(`!!document.getElementById("np-live")`, 30*time.Second),
		chromedp.Evaluate(recordPlayback("np-live", "p.play().then(() => true)"), nil, awaitPromise),
		chromedp.Evaluate(`document.getElementById("np-live").currentSrc`, &src),
	)
	if !strings.HasSuffix(src, "/live.mp3") {
		t.Errorf("the waiting embed plays %s, want the growing MP3", src)
	}
	if p := s.progress(t, proj.ID, "embed-live", acct.APIKey); p.State != "unprocessed" {
		t.Fatalf("playback started only once the audio was %s; want it unprocessed", p.State)
	}
	var log playbackLog
	var current float64
	browse(t, ctx, "plays to the end",
		waitJS(`window.liveLog.ended`, 55*time.Second),
		chromedp.Evaluate(`window.liveLog`, &log),
		chromedp.Evaluate(`document.getElementById("np-live").currentTime`, &current),
	)
	t.Logf("live playback in the embed: %v", log.Events)
	playedThrough(t, s.waitProcessed(t, proj.ID, "embed-live", acct.APIKey, 10*time.Second), log, current)
}

// recordPlayback returns a script that records, in window.liveLog, how the
// player with the given ID plays: its events, and its stalls (a "waiting"
// event after playback has begun, before it ends, with nothing buffered
// ahead; a loaded machine makes Chromium fire "waiting" now and then with
// seconds of audio buffered: its decoder fell behind, not the stream).
// The script returns the value of the expression then, with p the player.
func recordPlayback(id, then string) string {
	return fmt.Sprintf(`(() => {
		const p = document.getElementById(%q);
		window.liveLog = {stalls: 0, playing: false, ended: false, events: []};
		p.addEventListener("playing", () => { window.liveLog.playing = true; window.liveLog.events.push("playing@" + p.currentTime.toFixed(2)); });
		p.addEventListener("waiting", () => {
			if (!window.liveLog.playing || window.liveLog.ended) return;
			const b = p.buffered, ahead = b.length ? b.end(b.length - 1) - p.currentTime : 0;
			if (ahead < 0.25) window.liveLog.stalls++;
			window.liveLog.events.push("waiting@" + p.currentTime.toFixed(2) + " with " + ahead.toFixed(2) + " s buffered");
		});
		p.addEventListener("ended", () => { window.liveLog.ended = true; window.liveLog.events.push("ended@" + p.currentTime.toFixed(2)); });
		p.addEventListener("error", () => { window.liveLog.events.push("error " + (p.error && p.error.code)); });
		return %s;
	})()`, id, then)
}

// playbackLog is window.liveLog, as recordPlayback fills it.
type playbackLog struct {
	Stalls int      `json:"stalls"`
	Events []string `json:"events"`
}

// playedThrough checks that a live playback, which ended at current
// seconds, did not stall and reached the end of the processed audio's VOD
// playlist.
func playedThrough(t *testing.T, processed audioOut, log playbackLog, current float64) {
	t.Helper()
	_, vod := fetch(t, processed.url(t, "m3u8"))
	_, durations, _ := playlist(t, vod)
	var total float64
	for _, d := range durations {
		total += d
	}
	if log.Stalls != 0 {
		t.Errorf("playback stalled %d times: %v", log.Stalls, log.Events)
	}
	if current < total-0.5 {
		t.Errorf("playback ended at %.2f s of %.2f s", current, total)
	}
}
