package hls_test

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/hls"
)

// fuzzSegment returns a segment that a Segmenter makes of n MPEG-1 Layer
// III frames (header and zeros), and the frames.
func fuzzSegment(tb testing.TB, n int) (ts, frames []byte) {
	tb.Helper()
	fr := make([]byte, 417)
	copy(fr, []byte{0xFF, 0xFB, 0x90, 0x00})
	frames = bytes.Repeat(fr, n)
	var segs [][]byte
	s := hls.NewSegmenter(time.Hour, func(name string, data []byte) error {
		segs = append(segs, bytes.Clone(data))
		return nil
	})
	if _, err := s.Write(frames); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	if len(segs) != 1 {
		tb.Fatalf("%d segments", len(segs))
	}
	return segs[0], frames
}

// FuzzSegmentMP3 reads any bytes as a transport-stream segment. What it
// returns is payload taken from the input, so never longer; and a segment
// the Segmenter made gives back its frames.
func FuzzSegmentMP3(f *testing.F) {
	ts, frames := fuzzSegment(f, 5)
	if got, err := hls.SegmentMP3(ts); err != nil || !bytes.Equal(got, frames) {
		f.Fatalf("SegmentMP3 of a Segmenter's segment: %d bytes, %v; want the %d bytes of its frames", len(got), err, len(frames))
	}
	f.Add(ts)
	f.Add(ts[:188*3])
	f.Add(bytes.Repeat([]byte{0x47, 0x41, 0x00, 0x30, 0xB7}, 188/5*2))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, ts []byte) {
		got, err := hls.SegmentMP3(ts)
		if err != nil {
			return
		}
		if len(ts)%188 != 0 || len(got) > len(ts) {
			t.Fatalf("%d bytes from %d bytes of segment", len(got), len(ts))
		}
	})
}

// FuzzSegmentKeys reads any bytes as a playlist. Every key it returns lies
// inside the playlist's folder, whatever the URIs say.
func FuzzSegmentKeys(f *testing.F) {
	for _, s := range []string{
		"#EXTM3U\n#EXTINF:6.0,\nseg-0.ts\n#EXTINF:2.5,\nseg-1.ts\n#EXT-X-ENDLIST\n",
		"../x.ts\n", "/abs.ts\n", "http://h/x.ts\n", "a/../../b.ts\n", "a/./b.ts\r\n", "..\n", ".\n", "x?y\n",
	} {
		f.Add("audio/1/r2/playlist.m3u8", []byte(s))
		f.Add("playlist.m3u8", []byte(s))
	}
	f.Fuzz(func(t *testing.T, key string, playlist []byte) {
		keys, err := hls.SegmentKeys(key, playlist)
		if err != nil {
			return
		}
		dir := path.Dir(key)
		for _, k := range keys {
			rel := k
			if dir != "." {
				var ok bool
				if rel, ok = strings.CutPrefix(k, dir+"/"); !ok {
					t.Fatalf("key %q is outside %q", k, dir)
				}
			}
			if k != path.Clean(k) || rel == "" || strings.HasPrefix(rel, "/") || slices.Contains(strings.Split(rel, "/"), "..") {
				t.Fatalf("key %q from playlist at %q leaves its folder", k, key)
			}
		}
	})
}
