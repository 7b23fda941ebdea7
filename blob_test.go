package narrator_test

import (
	"testing"

	"github.com/narrator/narrator"
)

func TestMediaContentType(t *testing.T) {
	t.Parallel()
	tests := []struct{ key, want string }{
		{"tok/audio.mp3", "audio/mpeg"},
		{"tok/AUDIO.MP3", "audio/mpeg"},
		{"tok/hls/index.m3u8", "application/vnd.apple.mpegurl"},
		{"tok/hls/seg00000.ts", "video/mp2t"},
		{"tok/audio.aac", "audio/aac"},
		{"tok/audio.m4a", "audio/mp4"},
		{"tok/transcript.vtt", "text/vtt; charset=utf-8"},
		{"tok/transcript.JSON", "application/json"},
		{"tok/page.html", "application/octet-stream"},
		{"tok/noext", "application/octet-stream"},
		{"tok.mp3/noext", "application/octet-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			if got := narrator.MediaContentType(tt.key); got != tt.want {
				t.Errorf("MediaContentType(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

func TestTranscriptKeys(t *testing.T) {
	for _, c := range []struct{ mp3, json, vtt string }{
		{"abc/audio.mp3", "abc/transcript.json", "abc/transcript.vtt"},
		{"a/b/audio.mp3", "a/b/transcript.json", "a/b/transcript.vtt"},
		{"", "", ""},
	} {
		j, v := narrator.TranscriptKeys(c.mp3)
		if j != c.json || v != c.vtt {
			t.Errorf("TranscriptKeys(%q) = %q, %q; want %q, %q", c.mp3, j, v, c.json, c.vtt)
		}
	}
}
