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
