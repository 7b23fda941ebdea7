//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hajimehoshi/go-mp3"

	"github.com/narrator/narrator/client"
)

const article = `<h2>Council approves new library</h2>
<p>The city council voted on Tuesday to build a new public library on Main Street. The building will cost about $3.5 million and open in 2028.</p>
<p>Dr. Maria Lopez, who chairs the library board, said 65% of residents asked for longer opening hours. "People want a quiet place to read," she said.</p>
<script>alert("never read this")</script>
<ul><li>Ten thousand books at opening.</li><li>A children's corner.</li></ul>`

// fetch GETs a URL and returns the response and its body.
func fetch(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	return send(t, checkedHTTP(t), "GET", url, nil, header...)
}

// decodePCM decodes an MP3 into 16-bit little-endian stereo samples and
// returns them with the sample rate.
func decodePCM(t *testing.T, raw []byte) (pcm []byte, rate int) {
	t.Helper()
	dec, err := mp3.NewDecoder(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("decode mp3: %v", err)
	}
	pcm, err = io.ReadAll(dec)
	if err != nil {
		t.Fatalf("decode mp3: %v", err)
	}
	return pcm, dec.SampleRate()
}

// decodeMP3 decodes an MP3 and returns its duration and RMS level (0–1).
func decodeMP3(t *testing.T, raw []byte) (time.Duration, float64) {
	t.Helper()
	pcm, rate := decodePCM(t, raw)
	var sum float64
	n := len(pcm) / 2
	for i := 0; i+1 < len(pcm); i += 2 {
		v := float64(int16(uint16(pcm[i])|uint16(pcm[i+1])<<8)) / 32768
		sum += v * v
	}
	frames := len(pcm) / 4 // go-mp3 gives 16-bit stereo
	return time.Duration(float64(frames) / float64(rate) * float64(time.Second)), math.Sqrt(sum / float64(max(n, 1)))
}

// playlist parses a media playlist into segment URIs and durations.
func playlist(t *testing.T, raw []byte) (uris []string, durations []float64, target float64) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(raw))
	var pending float64 = -1
	ended := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#EXT-X-TARGETDURATION:"):
			target, _ = strconv.ParseFloat(strings.TrimPrefix(line, "#EXT-X-TARGETDURATION:"), 64)
		case strings.HasPrefix(line, "#EXTINF:"):
			v := strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(line, "#EXTINF:"), ",", 2)[0], ",")
			d, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("bad EXTINF %q", line)
			}
			pending = d
		case line == "#EXT-X-ENDLIST":
			ended = true
		case line != "" && !strings.HasPrefix(line, "#"):
			if pending < 0 {
				t.Fatalf("segment %q without EXTINF", line)
			}
			uris = append(uris, line)
			durations = append(durations, pending)
			pending = -1
		}
	}
	if !strings.HasPrefix(string(raw), "#EXTM3U") || !ended || !bytes.Contains(raw, []byte("#EXT-X-PLAYLIST-TYPE:VOD")) {
		t.Errorf("not a VOD playlist:\n%s", raw)
	}
	return uris, durations, target
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	c := s.client(t, acct.APIKey)
	ctx := t.Context()
	start := time.Now()
	created, err := c.CreateAudio(ctx, proj.ID, client.NewAudio{
		Title: "Council approves new library", Author: "Jane Doe",
		Body: article, ExternalID: "lib-1", Metadata: map[string]string{"section": "local"},
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.State != client.StateUnprocessed || created.MediaURL(client.ContentTypeMP3) != "" {
		t.Fatalf("created %+v", created)
	}
	a := waitProcessed(t, c, proj.ID, "lib-1", 60*time.Second)
	t.Logf("processed in %s", time.Since(start).Round(time.Millisecond))
	if a.Metadata["section"] != "local" || a.ExternalID != "lib-1" {
		t.Errorf("processed %+v", a)
	}

	mp3URL := a.MediaURL(client.ContentTypeMP3)
	if !strings.Contains(mp3URL, ".mp3") || !strings.HasPrefix(mp3URL, s.base+"/media/") {
		t.Errorf("mp3 url %s", mp3URL)
	}
	res, body := fetch(t, mp3URL)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "audio/mpeg" || res.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(res.Header.Get("Cache-Control"), "max-age") {
		t.Errorf("mp3 response %d %v", res.StatusCode, res.Header)
	}
	d, rms := decodeMP3(t, body)
	words := len(strings.Fields("Council approves new library. By Jane Doe. The city council voted on Tuesday to build a new public library on Main Street. The building will cost about three point five million dollars and open in twenty twenty-eight. Doctor Maria Lopez, who chairs the library board, said sixty-five percent of residents asked for longer opening hours. People want a quiet place to read, she said. Ten thousand books at opening. A children's corner."))
	if min, max := time.Duration(words)*time.Second/5, time.Duration(words)*time.Second*2/3; d < min || d > max {
		t.Errorf("mp3 lasts %s for %d words; want %s to %s", d, words, min, max)
	}
	if rms < 0.02 {
		t.Errorf("mp3 is (nearly) silent: rms %.4f", rms)
	}
	res, part := fetch(t, mp3URL, "Range", "bytes=0-99")
	if res.StatusCode != 206 || len(part) != 100 || !bytes.Equal(part, body[:100]) {
		t.Errorf("range request: %d, %d bytes", res.StatusCode, len(part))
	}

	m3u8URL := a.MediaURL(client.ContentTypeM3U8)
	res, list := fetch(t, m3u8URL)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/vnd.apple.mpegurl" {
		t.Errorf("playlist response %d %v", res.StatusCode, res.Header)
	}
	uris, durations, target := playlist(t, list)
	var total float64
	for i, u := range uris {
		// The first segment is cut at 2 s, for the live stream.
		first, last := i == 0, i == len(uris)-1
		if durations[i] > target+0.5 || (first && (durations[i] < 2 || durations[i] > 2.05)) || (!first && !last && (durations[i] < 5.5 || durations[i] > 10)) {
			t.Errorf("segment %d lasts %.3f s (target %.0f)", i, durations[i], target)
		}
		total += durations[i]
		res, seg := fetch(t, m3u8URL[:strings.LastIndex(m3u8URL, "/")+1]+u)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "video/mp2t" || len(seg)%188 != 0 || seg[0] != 0x47 {
			t.Errorf("segment %s: %d %s, %d bytes", u, res.StatusCode, res.Header.Get("Content-Type"), len(seg))
		}
	}
	if diff := math.Abs(total - d.Seconds()); diff > 0.05 {
		t.Errorf("segments add up to %.3f s, the mp3 lasts %.3f s", total, d.Seconds())
	}

	// The transcript: the sentences as written, timed within the MP3, and
	// its files served beside it.
	tr, err := c.Transcript(ctx, proj.ID, "lib-1")
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	var texts []string
	for _, sent := range tr.Sentences {
		texts = append(texts, sent.Text)
		if sent.Start < 0 || sent.End <= sent.Start || sent.End > d.Seconds() {
			t.Errorf("sentence %q spans %.3f-%.3f in %s", sent.Text, sent.Start, sent.End, d)
		}
	}
	wantTexts := []string{"Council approves new library", "By Jane Doe",
		"The city council voted on Tuesday to build a new public library on Main Street.",
		"The building will cost about $3.5 million and open in 2028.",
		"Dr. Maria Lopez, who chairs the library board, said 65% of residents asked for longer opening hours.",
		`"People want a quiet place to read," she said.`,
		"Ten thousand books at opening.", "A children's corner."}
	if strings.Join(texts, "\n") != strings.Join(wantTexts, "\n") {
		t.Errorf("transcript sentences %q, want %q", texts, wantTexts)
	}
	if tr.AudioID != a.ID || math.Abs(tr.Duration-d.Seconds()) > 0.001 || !strings.HasPrefix(tr.VTTURL, mp3URL[:strings.LastIndex(mp3URL, "/")+1]) {
		t.Errorf("transcript of audio %d lasting %.3f s at %s: %+v", a.ID, d.Seconds(), mp3URL, tr)
	}
	res, vtt := fetch(t, tr.VTTURL)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/vtt") || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.HasPrefix(string(vtt), "WEBVTT\n") || strings.Count(string(vtt), " --> ") != len(wantTexts) {
		t.Errorf("captions: %d %v\n%s", res.StatusCode, res.Header, vtt)
	}
	res, doc := fetch(t, tr.JSONURL)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(string(doc), `{"duration":`) {
		t.Errorf("transcript file: %d %v\n%s", res.StatusCode, res.Header, doc)
	}

	// The OpenAPI document is served, without a key.
	res, oa := fetch(t, s.base+"/api/v3/openapi.json")
	if res.StatusCode != 200 || !bytes.HasPrefix(oa, []byte("{")) || !bytes.Contains(oa, []byte(`"openapi": "3.1.0"`)) {
		t.Errorf("openapi.json: %d %.100s", res.StatusCode, oa)
	}

	// Delete removes the media.
	deleted, err := c.DeleteAudio(ctx, proj.ID, "lib-1")
	if err != nil || !deleted.Deleted {
		t.Fatalf("delete: %+v, %v", deleted, err)
	}
	for _, u := range []string{mp3URL, m3u8URL, m3u8URL[:strings.LastIndex(m3u8URL, "/")+1] + uris[0], tr.VTTURL, tr.JSONURL} {
		if res, _ := fetch(t, u); res.StatusCode != 404 {
			t.Errorf("%s still served right after the delete: %d", u, res.StatusCode)
		}
	}
	if _, err := c.GetAudio(ctx, proj.ID, "lib-1"); !client.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
}

// waitProcessed waits, through the client, until an audio is processed.
func waitProcessed(t *testing.T, c *client.Client, projectID int64, ref string, within time.Duration) *client.Audio {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	a, err := c.WaitProcessed(ctx, projectID, ref, client.WaitOptions{Initial: 100 * time.Millisecond, Max: time.Second})
	if err != nil {
		t.Fatalf("audio %s not processed within %s: %v (last seen %+v)", ref, within, err, a)
	}
	return a
}

// waitSynthesizing polls an audio's progress until its synthesis is under
// way: at least one unit written, not all. It returns that progress; it
// fails t if the audio is processed first.
func waitSynthesizing(t *testing.T, c *client.Client, projectID int64, ref string) *client.Progress {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := c.Progress(t.Context(), projectID, ref)
		if err != nil {
			t.Fatalf("progress of %s: %v", ref, err)
		}
		switch {
		case p.State != client.StateUnprocessed:
			t.Fatalf("audio %s is %s before its synthesis was seen under way: %+v", ref, p.State, p)
		case p.UnitsDone >= 1 && p.UnitsDone < p.UnitsTotal:
			return p
		case time.Now().After(deadline):
			t.Fatalf("synthesis of %s not under way within 60 s: %+v", ref, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestUpdateResynthesizes(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	c := s.client(t, acct.APIKey)
	if _, err := c.CreateAudio(t.Context(), proj.ID, client.NewAudio{Body: "First version.", ExternalID: "u"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	first := waitProcessed(t, c, proj.ID, "u", 60*time.Second)
	updated, err := c.UpdateAudio(t.Context(), proj.ID, "u", client.AudioUpdate{Body: client.String("Second version, which is longer than the first one.")})
	if err != nil || updated.State != client.StateUnprocessed {
		t.Fatalf("update: %+v, %v", updated, err)
	}
	second := waitProcessed(t, c, proj.ID, "u", 60*time.Second)
	oldURL := first.MediaURL(client.ContentTypeMP3)
	if second.MediaURL(client.ContentTypeMP3) == oldURL {
		t.Error("resynthesis kept the old URL")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if res, _ := fetch(t, oldURL); res.StatusCode == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("old media still served after resynthesis")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestKillAndRestart kills the server with SIGKILL while it works, and
// checks that every acknowledged create is completed after a restart.
func TestKillAndRestart(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	addr := freeAddr(t)
	s := startServer(t, data, addr)
	c := s.client(t, acct.APIKey)
	var refs []string
	for i := range 4 {
		ref := fmt.Sprintf("k%d", i)
		if _, err := c.CreateAudio(t.Context(), proj.ID, client.NewAudio{Title: "Story " + ref, Body: sentences(ref, 8*(4-i)), ExternalID: ref}); err != nil {
			t.Fatalf("create: %v", err)
		}
		refs = append(refs, ref)
	}
	// Kill it while the first, longest article is being read.
	p := waitSynthesizing(t, c, proj.ID, "k0")
	s.stop(t, syscall.SIGKILL)
	t.Logf("killed with %d of %d units of k0 done", p.UnitsDone, p.UnitsTotal)

	s = startServer(t, data, addr)
	c = s.client(t, acct.APIKey)
	for _, ref := range refs {
		waitProcessed(t, c, proj.ID, ref, 90*time.Second)
	}
	if !strings.Contains(s.logs.String(), "resumed jobs interrupted by the last stop") {
		t.Errorf("no interrupted job was resumed; log:\n%s", s.logs.String())
	}
}

// TestKilledRenderingLeavesNothing kills the server with SIGKILL while it
// renders a signed project's audio, and checks that after a restart the
// rendering's folder, which no audio owns any more, is not served to
// anyone and is gone from the disk.
func TestKilledRenderingLeavesNothing(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	addr := freeAddr(t)
	s := startServer(t, data, addr)
	c := s.client(t, acct.APIKey)
	ctx := t.Context()
	if _, err := c.RotateEmbedSecret(ctx, proj.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetAccess(ctx, proj.ID, client.AccessUpdate{Mode: client.String("signed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateAudio(ctx, proj.ID, client.NewAudio{Title: "Members only", Body: sentences("paid", 40), ExternalID: "paid"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	var live *url.URL
	deadline := time.Now().Add(60 * time.Second)
	for live == nil {
		p, err := c.Progress(ctx, proj.ID, "paid")
		switch {
		case err != nil:
			t.Fatalf("progress: %v", err)
		case p.State != client.StateUnprocessed:
			t.Fatalf("audio is %s before its live stream was seen", p.State)
		case p.LiveURL != "":
			if live, err = url.Parse(p.LiveURL); err != nil {
				t.Fatal(err)
			}
		case time.Now().After(deadline):
			t.Fatalf("no live stream within 60 s: %+v", p)
		default:
			time.Sleep(50 * time.Millisecond)
		}
	}
	s.stop(t, syscall.SIGKILL)
	folder := strings.Split(strings.TrimPrefix(live.Path, "/media/"), "/")[0]
	dir := filepath.Join(data, "media", folder)
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Fatalf("the killed rendering left %d files in %s (%v); want some", len(entries), dir, err)
	}

	s = startServer(t, data, addr)
	res, _ := fetch(t, s.base+live.Path)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET %s without a token after the restart: %d, want 404", live.Path, res.StatusCode)
	}
	if entries, err := os.ReadDir(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the restart %s holds %d files (%v); want it gone", dir, len(entries), err)
	}
}

// TestGracefulShutdown stops the server with SIGTERM while a job is being
// worked, checks that the job was interrupted (the audio is still
// unprocessed after the stop), and that its work is finished after the
// next start.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	addr := freeAddr(t)
	s := startServer(t, data, addr)
	c := s.client(t, acct.APIKey)
	// Different sentences, so that none comes from the cache: reading them
	// takes far longer than the 5 s that running jobs get at shutdown.
	if _, err := c.CreateAudio(t.Context(), proj.ID, client.NewAudio{Body: sentences("g", 80), ExternalID: "g"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	p := waitSynthesizing(t, c, proj.ID, "g")
	s.stop(t, syscall.SIGTERM)
	t.Logf("stopped with %d of %d units done", p.UnitsDone, p.UnitsTotal)

	s = startServer(t, data, addr)
	c = s.client(t, acct.APIKey)
	if a, err := c.GetAudio(t.Context(), proj.ID, "g"); err != nil || a.State != client.StateUnprocessed {
		t.Fatalf("right after the restart the audio is %+v, %v; want it unprocessed, its job interrupted by the stop", a, err)
	}
	waitProcessed(t, c, proj.ID, "g", 120*time.Second)
}

// TestOtherLanguages processes articles in projects of other languages with
// their default voices.
func TestOtherLanguages(t *testing.T) {
	t.Parallel()
	data, acct, _ := fixture(t)
	s := startServer(t, data, freeAddr(t))
	c := s.client(t, acct.APIKey)
	articles := map[string]string{
		"de_DE": "<h1>Neue Bibliothek</h1><p>Der Stadtrat hat am 3. Oktober 2026 eine neue Bibliothek beschlossen. Sie kostet 3,5 Millionen Euro und hat 10.000 Bücher.</p>",
		"fr_FR": "<h1>Nouvelle bibliothèque</h1><p>Le conseil municipal a voté le 3 octobre 2026 pour une nouvelle bibliothèque. Elle coûtera 3,5 millions d'euros.</p>",
	}
	for lang, body := range articles {
		proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", lang, "--language", lang))
		if _, err := c.CreateAudio(t.Context(), proj.ID, client.NewAudio{Body: body, ExternalID: lang}); err != nil {
			t.Fatalf("%s create: %v", lang, err)
		}
		a := waitProcessed(t, c, proj.ID, lang, 60*time.Second)
		_, mp3 := fetch(t, a.MediaURL(client.ContentTypeMP3))
		d, rms := decodeMP3(t, mp3)
		if d < 4*time.Second || rms < 0.02 {
			t.Errorf("%s: %s of audio at rms %.3f", lang, d, rms)
		}
	}
}

// sentences returns n different sentences, so that none comes from the
// sentence cache.
func sentences(ref string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Story %s goes on with part %d, which keeps the engine busy for a while. ", ref, i+1)
	}
	return b.String()
}
