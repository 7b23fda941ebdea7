//go:build e2e

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asticode/go-astits"
)

// progressOut is the answer of the progress extension.
type progressOut struct {
	AudioID       int64    `json:"audio_id"`
	State         string   `json:"state"`
	Queued        bool     `json:"queued"`
	QueuePosition *int     `json:"queue_position"`
	UnitsDone     *int     `json:"units_done"`
	UnitsTotal    *int     `json:"units_total"`
	Share         *float64 `json:"share"`
	ETASeconds    *int     `json:"eta_seconds"`
	LiveURL       string   `json:"live_url"`
}

// progress reads the progress extension of an audio.
func (s *node) progress(t *testing.T, projectID int64, ref, key string) progressOut {
	t.Helper()
	status, raw := s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s/progress?api_key=%s", projectID, ref, key), nil)
	if status != 200 {
		t.Fatalf("progress of %s: %d %s", ref, status, raw)
	}
	return mustJSON[progressOut](t, string(raw))
}

// waitLive polls the progress extension until the audio's live stream
// plays, and returns the last answer.
func (s *node) waitLive(t *testing.T, projectID int64, ref, key string) progressOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		p := s.progress(t, projectID, ref, key)
		switch {
		case p.LiveURL != "":
			return p
		case p.State != "unprocessed":
			t.Fatalf("audio %s is %s and never had a live stream: %+v", ref, p.State, p)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no live stream for audio %s within a minute: %+v", ref, p)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// livePlaylist parses a live playlist: its segment URIs and durations,
// and whether it has ended.
func livePlaylist(t *testing.T, raw []byte) (uris []string, durations []float64, ended bool) {
	t.Helper()
	if !bytes.HasPrefix(raw, []byte("#EXTM3U\n")) || !bytes.Contains(raw, []byte("\n#EXT-X-PLAYLIST-TYPE:EVENT\n")) ||
		!bytes.Contains(raw, []byte("\n#EXT-X-TARGETDURATION:7\n")) {
		t.Fatalf("not a live EVENT playlist:\n%s", raw)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "#EXTINF:"):
			var d float64
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "#EXTINF:"), "%f,", &d); err != nil {
				t.Fatalf("bad EXTINF %q", line)
			}
			durations = append(durations, d)
		case line == "#EXT-X-ENDLIST":
			ended = true
		case line != "" && !strings.HasPrefix(line, "#"):
			uris = append(uris, line)
		}
	}
	if len(uris) != len(durations) {
		t.Fatalf("%d URIs for %d EXTINF:\n%s", len(uris), len(durations), raw)
	}
	return uris, durations, ended
}

// segmentMP3 demuxes an MPEG-TS segment and returns the MP3 frames it
// carries.
func segmentMP3(t *testing.T, seg []byte) []byte {
	t.Helper()
	dmx := astits.NewDemuxer(t.Context(), bytes.NewReader(seg))
	var out []byte
	for {
		d, err := dmx.NextData()
		if errors.Is(err, astits.ErrNoMorePackets) {
			break
		}
		if err != nil {
			t.Fatalf("demux segment: %v", err)
		}
		if d.PES != nil {
			out = append(out, d.PES.Data...)
		}
	}
	if len(out) == 0 {
		t.Fatal("segment carries no audio")
	}
	return out
}

// TestLiveStream posts a 1,000-word article and plays it from its live
// stream while it is made: the first segment, about 2 s of the title's
// speech, is fetched and decoded before the audio is processed, and the
// live playlist grows until it ends as the VOD playlist. It logs the time
// from the acknowledged POST to the decoded first segment (the goal is a
// second on an idle machine), but does not assert it.
func TestLiveStream(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	body, err := os.ReadFile(filepath.Join("..", "..", "bench", "testdata", "article1000.html"))
	if err != nil {
		t.Fatal(err)
	}
	created := s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "A thousand words, heard at once", "body": string(body), "external_id": "live-1",
	})
	acked := time.Now()
	// v3 is unchanged: url stays [] until processed.
	for _, m := range created.Media {
		if string(m.URL) != "[]" {
			t.Errorf("created audio's %s url is %s, want []", m.ContentType, m.URL)
		}
	}

	p := s.waitLive(t, proj.ID, "live-1", acct.APIKey)
	res, list := fetch(t, p.LiveURL)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/vnd.apple.mpegurl" {
		t.Fatalf("live playlist: %d %v", res.StatusCode, res.Header)
	}
	uris, durations, ended := livePlaylist(t, list)
	if len(uris) == 0 || uris[0] != "seg-00000.ts" || durations[0] < 2 || durations[0] > 2.05 {
		t.Fatalf("live playlist starts with %v lasting %v, want seg-00000.ts of 2.0… s:\n%s", uris, durations, list)
	}
	base := p.LiveURL[:strings.LastIndex(p.LiveURL, "/")+1]
	res, seg := fetch(t, base+uris[0])
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "video/mp2t" {
		t.Fatalf("first segment: %d %v", res.StatusCode, res.Header)
	}
	d, rms := decodeMP3(t, segmentMP3(t, seg))
	firstAudio := time.Since(acked)
	if d < 2*time.Second || d > 2100*time.Millisecond || rms < 0.02 {
		t.Errorf("first segment decodes to %v at RMS %.4f, want about 2 s of speech", d, rms)
	}
	t.Logf("POST acknowledged → first segment fetched and decoded: %d ms", firstAudio.Milliseconds())

	// While unprocessed, the playlist is live and uncached, and the
	// progress figures are there.
	if !ended {
		if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=3600" {
			t.Errorf("segment Cache-Control %q, want public, max-age=3600", cc)
		}
		res, _ := fetch(t, p.LiveURL)
		if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("live playlist Cache-Control %q, want no-cache", cc)
		}
		if p.UnitsDone == nil || p.UnitsTotal == nil || *p.UnitsTotal < 40 || p.Share == nil {
			t.Errorf("progress under way: %+v", p)
		}
	}

	a := s.waitProcessed(t, proj.ID, "live-1", acct.APIKey, 3*time.Minute)
	t.Logf("POST acknowledged → processed: %d ms", time.Since(acked).Milliseconds())
	_, list = fetch(t, p.LiveURL)
	liveURIs, liveDurations, ended := livePlaylist(t, list)
	if !ended {
		t.Errorf("live playlist of a processed audio has no #EXT-X-ENDLIST:\n%s", list)
	}
	_, vod := fetch(t, a.url(t, "m3u8"))
	vodURIs, vodDurations, _ := playlist(t, vod)
	if fmt.Sprint(liveURIs, liveDurations) != fmt.Sprint(vodURIs, vodDurations) {
		t.Errorf("ended live playlist:\n%s\nVOD playlist:\n%s", list, vod)
	}
	if !strings.HasPrefix(a.url(t, "m3u8"), base) {
		t.Errorf("VOD playlist %s is not beside the live one %s", a.url(t, "m3u8"), p.LiveURL)
	}
	if got := s.progress(t, proj.ID, "live-1", acct.APIKey); got.State != "processed" || got.Share == nil || *got.Share != 1 {
		t.Errorf("progress when processed: %+v", got)
	}
}
