package narrator_test

import (
	"testing"
	"time"

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
		{"tok/chapters.json", "application/json+chapters"},
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

func TestMediaFolder(t *testing.T) {
	t.Parallel()
	f, err := narrator.NewMediaFolder()
	if err != nil {
		t.Fatal(err)
	}
	g, err := narrator.NewMediaFolder()
	if err != nil {
		t.Fatal(err)
	}
	if f == g {
		t.Errorf("two new media folders are both %q", f)
	}
	tests := []struct {
		name string
		want bool
	}{
		{f, true},
		{"0123456789abcdef0123456789abcdef", true},
		{"0123456789ABCDEF0123456789ABCDEF", false},
		{"0123456789abcdef0123456789abcde", false},
		{"0123456789abcdef0123456789abcdef0", false},
		{"voices", false},
		{"previews", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := narrator.IsMediaFolder(tt.name); got != tt.want {
			t.Errorf("IsMediaFolder(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMediaOrphanCutoff(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got, want := narrator.MediaOrphanCutoff(now, false), now.Add(-narrator.OrphanMediaAge); !got.Equal(want) {
		t.Errorf("MediaOrphanCutoff(now, false) = %v, want %v", got, want)
	}
	if got := narrator.MediaOrphanCutoff(now, true); !got.IsZero() {
		t.Errorf("MediaOrphanCutoff(now, true) = %v, want the zero time (any)", got)
	}
}
