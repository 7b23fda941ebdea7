package hls_test

import (
	"reflect"
	"testing"

	"github.com/narrator/narrator/internal/hls"
)

func TestSegmentKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		key      string
		playlist string
		want     []string
		fails    bool
	}{
		{"ours", "tok/playlist.m3u8", string(hls.Playlist([]hls.Segment{
			{Name: hls.SegmentName(0), Samples: 44100, SampleRate: 44100},
			{Name: hls.SegmentName(1), Samples: 22050, SampleRate: 44100},
		})), []string{"tok/seg-00000.ts", "tok/seg-00001.ts"}, false},
		{"blank lines, comments, spaces and CRLF", "a/b/p.m3u8", "#EXTM3U\r\n\r\n# a comment\r\n  one.ts  \r\n#EXTINF:1.0,\r\nsub/two.ts\r\n",
			[]string{"a/b/one.ts", "a/b/sub/two.ts"}, false},
		{"at the root", "p.m3u8", "#EXTM3U\none.ts\n", []string{"one.ts"}, false},
		{"no segments", "tok/p.m3u8", "#EXTM3U\n#EXT-X-ENDLIST\n", nil, false},
		{"absolute URL", "tok/p.m3u8", "https://cdn.example.com/one.ts\n", nil, true},
		{"absolute path", "tok/p.m3u8", "/etc/passwd\n", nil, true},
		{"out of the folder", "tok/p.m3u8", "../other/one.ts\n", nil, true},
		{"out of the root", "p.m3u8", "../one.ts\n", nil, true},
		{"query", "tok/p.m3u8", "one.ts?x=1\n", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := hls.SegmentKeys(c.key, []byte(c.playlist))
			if (err != nil) != c.fails {
				t.Fatalf("SegmentKeys: %v, %v; want an error: %v", got, err, c.fails)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("SegmentKeys = %q, want %q", got, c.want)
			}
		})
	}
}
