//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hajimehoshi/go-mp3"
)

const article = `<h2>Council approves new library</h2>
<p>The city council voted on Tuesday to build a new public library on Main Street. The building will cost about $3.5 million and open in 2028.</p>
<p>Dr. Maria Lopez, who chairs the library board, said 65% of residents asked for longer opening hours. "People want a quiet place to read," she said.</p>
<script>alert("never read this")</script>
<ul><li>Ten thousand books at opening.</li><li>A children's corner.</li></ul>`

// fetch GETs a URL and returns the response and its body.
func fetch(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// decodeMP3 decodes an MP3 and returns its duration and RMS level (0–1).
func decodeMP3(t *testing.T, raw []byte) (time.Duration, float64) {
	t.Helper()
	dec, err := mp3.NewDecoder(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("decode mp3: %v", err)
	}
	pcm, err := io.ReadAll(dec)
	if err != nil {
		t.Fatalf("decode mp3: %v", err)
	}
	var sum float64
	n := len(pcm) / 2
	for i := 0; i+1 < len(pcm); i += 2 {
		v := float64(int16(uint16(pcm[i])|uint16(pcm[i+1])<<8)) / 32768
		sum += v * v
	}
	frames := len(pcm) / 4 // go-mp3 gives 16-bit stereo
	return time.Duration(float64(frames) / float64(dec.SampleRate()) * float64(time.Second)), math.Sqrt(sum / float64(max(n, 1)))
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

// transcriptOut is the answer of the transcript extension.
type transcriptOut struct {
	AudioID   int64   `json:"audio_id"`
	Duration  float64 `json:"duration"`
	VTTURL    string  `json:"vtt_url"`
	JSONURL   string  `json:"json_url"`
	Sentences []struct {
		Start float64 `json:"start"`
		End   float64 `json:"end"`
		Text  string  `json:"text"`
	} `json:"sentences"`
}

func TestEndToEnd(t *testing.T) {
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	start := time.Now()
	status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID), map[string]any{
		"api_key": acct.APIKey, "title": "Council approves new library", "author": "Jane Doe",
		"body": article, "external_id": "lib-1", "metadata": map[string]string{"section": "local"},
	})
	if status != 200 {
		t.Fatalf("create: %d %s", status, raw)
	}
	created := mustJSON[audioOut](t, string(raw))
	if created.State != "unprocessed" {
		t.Fatalf("created %+v", created)
	}
	a := s.waitProcessed(t, proj.ID, "lib-1", acct.APIKey, 60*time.Second)
	t.Logf("processed in %s", time.Since(start).Round(time.Millisecond))

	mp3URL := a.url(t, "mp3")
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

	m3u8URL := a.url(t, "m3u8")
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
	status, raw = s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/audio/lib-1/transcript?api_key=%s", proj.ID, acct.APIKey), nil)
	if status != 200 {
		t.Fatalf("transcript: %d %s", status, raw)
	}
	tr := mustJSON[transcriptOut](t, string(raw))
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

	// Delete removes the media.
	status, raw = s.call(t, "DELETE", fmt.Sprintf("/api/v3/projects/%d/audio/lib-1", proj.ID), map[string]any{"api_key": acct.APIKey})
	if status != 200 || !mustJSON[audioOut](t, string(raw)).Deleted {
		t.Fatalf("delete: %d %s", status, raw)
	}
	for _, u := range []string{mp3URL, m3u8URL, m3u8URL[:strings.LastIndex(m3u8URL, "/")+1] + uris[0], tr.VTTURL, tr.JSONURL} {
		if res, _ := fetch(t, u); res.StatusCode != 404 {
			t.Errorf("%s still served right after the delete: %d", u, res.StatusCode)
		}
	}
}

func TestUpdateResynthesizes(t *testing.T) {
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	path := fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID)
	if status, raw := s.call(t, "POST", path, map[string]any{"api_key": acct.APIKey, "body": "First version.", "external_id": "u"}); status != 200 {
		t.Fatalf("create: %d %s", status, raw)
	}
	first := s.waitProcessed(t, proj.ID, "u", acct.APIKey, 60*time.Second)
	status, raw := s.call(t, "PUT", path+"/u", map[string]any{"api_key": acct.APIKey, "body": "Second version, which is longer than the first one."})
	if status != 200 || mustJSON[audioOut](t, string(raw)).State != "unprocessed" {
		t.Fatalf("update: %d %s", status, raw)
	}
	second := s.waitProcessed(t, proj.ID, "u", acct.APIKey, 60*time.Second)
	if second.url(t, "mp3") == first.url(t, "mp3") {
		t.Error("re-synthesis kept the old URL")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if res, _ := fetch(t, first.url(t, "mp3")); res.StatusCode == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("old media still served after re-synthesis")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestKillAndRestart kills the server with SIGKILL while it works, and
// checks that every acknowledged create is completed after a restart.
func TestKillAndRestart(t *testing.T) {
	data, acct, proj := fixture(t)
	addr := freeAddr(t)
	s := startServer(t, data, addr)
	var refs []string
	for i := range 4 {
		ref := fmt.Sprintf("k%d", i)
		status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID), map[string]any{
			"api_key": acct.APIKey, "title": "Story " + ref, "body": sentences(ref, 8*(4-i)), "external_id": ref,
		})
		if status != 200 {
			t.Fatalf("create: %d %s", status, raw)
		}
		refs = append(refs, ref)
	}
	time.Sleep(time.Second) // the first article takes a few seconds: it is being read now
	s.stop(t, syscall.SIGKILL)

	s = startServer(t, data, addr)
	for _, ref := range refs {
		s.waitProcessed(t, proj.ID, ref, acct.APIKey, 90*time.Second)
	}
	if !strings.Contains(s.logs.String(), "resumed jobs interrupted by the last stop") {
		t.Errorf("no interrupted job was resumed; log:\n%s", s.logs.String())
	}
}

// TestGracefulShutdown stops the server with SIGTERM mid-job and checks
// that the interrupted work is finished after the next start.
func TestGracefulShutdown(t *testing.T) {
	data, acct, proj := fixture(t)
	addr := freeAddr(t)
	s := startServer(t, data, addr)
	status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID), map[string]any{
		"api_key": acct.APIKey, "body": strings.Repeat("A long article needs a long time to read aloud. ", 40), "external_id": "g",
	})
	if status != 200 {
		t.Fatalf("create: %d %s", status, raw)
	}
	time.Sleep(500 * time.Millisecond)
	s.stop(t, syscall.SIGTERM)
	s = startServer(t, data, addr)
	s.waitProcessed(t, proj.ID, "g", acct.APIKey, 90*time.Second)
}

// TestOtherLanguages processes articles in projects of other languages with
// their default voices.
func TestOtherLanguages(t *testing.T) {
	data, acct, _ := fixture(t)
	s := startServer(t, data, freeAddr(t))
	articles := map[string]string{
		"de_DE": "<h1>Neue Bibliothek</h1><p>Der Stadtrat hat am 3. Oktober 2026 eine neue Bibliothek beschlossen. Sie kostet 3,5 Millionen Euro und hat 10.000 Bücher.</p>",
		"fr_FR": "<h1>Nouvelle bibliothèque</h1><p>Le conseil municipal a voté le 3 octobre 2026 pour une nouvelle bibliothèque. Elle coûtera 3,5 millions d'euros.</p>",
	}
	for lang, body := range articles {
		proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", lang, "--language", lang))
		status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID), map[string]any{"api_key": acct.APIKey, "body": body, "external_id": lang})
		if status != 200 {
			t.Fatalf("%s create: %d %s", lang, status, raw)
		}
		a := s.waitProcessed(t, proj.ID, lang, acct.APIKey, 60*time.Second)
		_, mp3 := fetch(t, a.url(t, "mp3"))
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
