package hls_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/hls"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/proctest"
)

// TestLiveSegmenter feeds an MP3 to a live Segmenter a frame at a time and
// checks that the first segment is short and stored as soon as its last
// frame arrives, that every live playlist extends the one before it, and
// that the ended live playlist lists what the VOD playlist lists and plays
// in ffmpeg.
func TestLiveSegmenter(t *testing.T) {
	t.Parallel()
	const (
		target = 6 * time.Second
		first  = 2 * time.Second
	)
	data := mustEncode(t, signal(20*time.Second))
	var frames []mp3.Frame
	if _, err := mp3.Frames(bytes.NewReader(data), func(f mp3.Frame) error {
		f.Data = append([]byte(nil), f.Data...)
		frames = append(frames, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	var (
		st       store
		lives    [][]byte
		fedAt    []int // frames written when each segment was stored
		fed      int
		liveHead = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:7\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-MEDIA-SEQUENCE:0\n"
	)
	seg := hls.NewSegmenter(target, st.put)
	seg.Live(first, func(segments []hls.Segment) error {
		if len(segments) != len(lives)+1 {
			t.Errorf("stored called with %d segments after %d calls", len(segments), len(lives))
		}
		lives = append(lives, hls.EventPlaylist(segments, target, false))
		fedAt = append(fedAt, fed)
		return nil
	})
	for _, f := range frames {
		fed++
		if _, err := seg.Write(f.Data); err != nil {
			t.Fatal(err)
		}
	}
	vod, err := seg.Close()
	if err != nil {
		t.Fatal(err)
	}
	segments := seg.Segments()
	if len(lives) != len(segments) || len(segments) < 3 {
		t.Fatalf("%d live playlists for %d segments, want one per segment and 3 or more", len(lives), len(segments))
	}

	// The first segment is the first frames that reach 2 s, stored the
	// moment the last of them is written.
	frameSamples := int64(frames[0].Samples)
	wantFrames := int((int64(first.Seconds()*rate) + frameSamples - 1) / frameSamples)
	if got := segments[0].Samples; got != int64(wantFrames)*frameSamples {
		t.Errorf("first segment has %d samples (%v), want %d frames (%d samples)", got, segments[0].Duration(), wantFrames, int64(wantFrames)*frameSamples)
	}
	if fedAt[0] != wantFrames {
		t.Errorf("first segment stored after %d frames were written, want %d", fedAt[0], wantFrames)
	}
	// Every segment is stored the moment its last frame is written.
	var upTo int64
	for i, seg := range segments {
		upTo += seg.Samples
		if want := int(upTo / frameSamples); fedAt[i] != want {
			t.Errorf("segment %d stored after %d frames were written, want %d", i, fedAt[i], want)
		}
	}
	for i, s := range segments[1 : len(segments)-1] {
		if d := s.Duration(); d < target || d > target+30*time.Millisecond {
			t.Errorf("segment %d lasts %v, want the target %v plus at most a frame", i+1, d, target)
		}
	}

	// Each live playlist is EVENT, without an end, and extends the last.
	for i, pl := range lives {
		if !strings.HasPrefix(string(pl), liveHead) {
			t.Errorf("live playlist %d head:\n%s\nwant:\n%s", i, pl, liveHead)
		}
		if bytes.Contains(pl, []byte("ENDLIST")) {
			t.Errorf("live playlist %d ends:\n%s", i, pl)
		}
		if n := bytes.Count(pl, []byte("#EXTINF:")); n != i+1 {
			t.Errorf("live playlist %d lists %d segments, want %d", i, n, i+1)
		}
		if i > 0 && !bytes.HasPrefix(pl, lives[i-1]) {
			t.Errorf("live playlist %d does not extend the one before:\n%s\nthen:\n%s", i, lives[i-1], pl)
		}
	}
	ended := hls.EventPlaylist(segments, target, true)
	if want := string(lives[len(lives)-1]) + "#EXT-X-ENDLIST\n"; string(ended) != want {
		t.Errorf("ended live playlist:\n%s\nwant:\n%s", ended, want)
	}
	// Apart from its type, it is the VOD playlist.
	norm := func(b []byte) string {
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, "#EXT-X-PLAYLIST-TYPE:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if norm(ended) != norm(vod) {
		t.Errorf("ended live playlist:\n%s\nVOD playlist:\n%s", ended, vod)
	}
	// Every EXTINF, rounded, is within the target duration announced at
	// the start.
	entries, _ := parsePlaylist(t, vod)
	for _, e := range entries {
		if r := e.duration.Round(time.Second); r > time.Duration(hls.LiveTargetDuration(target))*time.Second {
			t.Errorf("%s lasts %v, over the live target duration", e.uri, e.duration)
		}
	}

	// The ended live playlist plays.
	proctest.NeedProgram(t, "ffmpeg", "apt-get install ffmpeg")
	dir := t.TempDir()
	for name, b := range st.files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "live.m3u8")
	if err := os.WriteFile(path, ended, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "ffmpeg", "-nostdin", "-v", "warning", "-i", path, "-f", "null", "-").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("ffmpeg playing the ended live playlist: %v\n%s", err, out)
	}
}

// TestLiveShort checks a live stream shorter than its first segment, and
// ones that end with a short piece: it stays a segment of its own, as the
// segment before it was published already.
func TestLiveShort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		audio time.Duration
		want  []time.Duration // about
	}{
		{"shorter than the first segment", time.Second, []time.Duration{time.Second}},
		{"short rest", 3 * time.Second, []time.Duration{2 * time.Second, time.Second}},
		{"short rest kept", 8*time.Second + 500*time.Millisecond, []time.Duration{2 * time.Second, 6 * time.Second, 500 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := mustEncode(t, signal(tt.audio))
			var st store
			seg := hls.NewSegmenter(6*time.Second, st.put)
			calls := 0
			seg.Live(2*time.Second, func([]hls.Segment) error { calls++; return nil })
			if _, err := seg.Write(data); err != nil {
				t.Fatal(err)
			}
			if _, err := seg.Close(); err != nil {
				t.Fatal(err)
			}
			got := seg.Segments()
			if len(got) != len(tt.want) || calls != len(got) {
				t.Fatalf("%d segments, %d calls, want %d: %v", len(got), calls, len(tt.want), got)
			}
			for i, w := range tt.want {
				if d := got[i].Duration(); (d - w).Abs() > 100*time.Millisecond {
					t.Errorf("segment %d lasts %v, want about %v", i, d, w)
				}
			}
		})
	}
}

// TestSegmentMP3 checks that the MP3 frames taken back out of the
// segments are, end to end, the MP3 that was segmented, byte for byte.
func TestSegmentMP3(t *testing.T) {
	t.Parallel()
	data := mustEncode(t, signal(15*time.Second))
	_, st := mustPackage(t, data, 2*time.Second)
	var got []byte
	for _, name := range st.names {
		b, err := hls.SegmentMP3(st.files[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got = append(got, b...)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("segments give back %d bytes, want the %d bytes of the MP3", len(got), len(data))
	}
	for name, bad := range map[string][]byte{
		"not packets":  []byte("hello"),
		"no sync byte": make([]byte, 188),
	} {
		if _, err := hls.SegmentMP3(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
