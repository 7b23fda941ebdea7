package pipeline_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/pipeline"
)

// liveMedia is a media store that records, in order, the keys put and
// each version of the live playlist.
type liveMedia struct {
	*localfs.Store
	mu    sync.Mutex
	keys  []string
	lives [][]byte
	live  chan struct{} // closed when the first live playlist is put
}

func (m *liveMedia) Put(ctx context.Context, key string, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := m.Store.Put(ctx, key, bytes.NewReader(data)); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys = append(m.keys, key)
	if narrator.MediaIsLive(key) {
		if len(m.lives) == 0 {
			close(m.live)
		}
		m.lives = append(m.lives, data)
	}
	return nil
}

// gatedEngine is the tone engine, except that it speaks a text holding
// "gatekeeper" only once the gate opens (a word the normaliser keeps as
// it is: it spells capitals out).
type gatedEngine struct {
	*toneEngine
	gate <-chan struct{}
}

func (e gatedEngine) Synthesize(ctx context.Context, voice, text string, rate float64) ([]int16, int, error) {
	if strings.Contains(text, "gatekeeper") {
		select {
		case <-e.gate:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	return e.toneEngine.Synthesize(ctx, voice, text, rate)
}

// TestRenderLive checks the live stream: its first segment is short and is
// published, with the live playlist, while the rest of the article is
// still unspoken; the playlist grows a segment at a time and ends listing
// what the VOD playlist lists; progress counts every unit and names the
// live playlist once it plays.
func TestRenderLive(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fs, err := localfs.New(filepath.Join(root, "media"))
	if err != nil {
		t.Fatal(err)
	}
	media := &liveMedia{Store: fs, live: make(chan struct{})}
	// The third unit waits until the live playlist is out: the first
	// segment must come from the title and first sentence alone.
	engine := gatedEngine{toneEngine: &toneEngine{}, gate: media.live}
	pipe := newPipe(t, pipeline.Config{Engines: everyEngine(engine), Media: media, Workers: 2})
	title, voice, _ := narrator.DefaultVoices("en_US")
	proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: voice.Name}

	var paras []string
	paras = append(paras, "<p>The opening sentence of this article runs on for a good few seconds of speech.</p>")
	paras = append(paras, "<p>Then comes the gatekeeper sentence, which waits.</p>")
	for range 12 {
		paras = append(paras, "<p>Another sentence of the article follows, long enough to fill a segment.</p>")
	}
	var (
		mu      sync.Mutex
		reports []narrator.RenderProgress
	)
	// Without an early first segment the gate never opens: a deadline
	// turns that hang into a failure.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r, err := pipe.RenderLive(ctx, &narrator.Audio{Title: "Live", Body: strings.Join(paras, "\n")}, proj, func(p narrator.RenderProgress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("RenderLive: %v (the live playlist never came before the third unit)", err)
	}
	folder := strings.Split(r.Keys[narrator.ContentTypeMP3], "/")[0]
	liveKey := folder + "/" + narrator.LivePlaylistName

	// The first live playlist follows the first segment and lists it alone,
	// about 2 s long.
	i := indexOf(media.keys, liveKey)
	if i < 1 || media.keys[i-1] != folder+"/seg-00000.ts" {
		t.Fatalf("live playlist put at %d, after %v; want right after the first segment", i, media.keys[:max(i, 0)])
	}
	first := string(media.lives[0])
	if !strings.Contains(first, "#EXT-X-PLAYLIST-TYPE:EVENT\n") || strings.Contains(first, "ENDLIST") ||
		strings.Count(first, "#EXTINF:") != 1 || !strings.Contains(first, "#EXTINF:2.0") {
		t.Errorf("first live playlist:\n%s\nwant an EVENT playlist of one segment of 2.0… s", first)
	}
	// The first segment decodes on its own.
	seg, _, err := media.Open(t.Context(), folder+"/seg-00000.ts")
	if err != nil {
		t.Fatal(err)
	}
	seg.Close()

	// It grows a segment at a time and ends as the VOD playlist.
	segments := 0
	for _, k := range media.keys {
		if strings.HasSuffix(k, ".ts") {
			segments++
		}
	}
	if len(media.lives) != segments+1 {
		t.Errorf("%d live playlists for %d segments, want one per segment and a last one", len(media.lives), segments)
	}
	for j := 1; j < len(media.lives); j++ {
		if !bytes.HasPrefix(media.lives[j], media.lives[j-1]) {
			t.Errorf("live playlist %d does not extend the one before", j)
		}
	}
	last := media.lives[len(media.lives)-1]
	vod := mustReadKey(t, media.Store, r.Keys[narrator.ContentTypeM3U8])
	if !bytes.HasSuffix(last, []byte("#EXT-X-ENDLIST\n")) || lastLines(last, 2*segments+1) != lastLines(vod, 2*segments+1) {
		t.Errorf("last live playlist:\n%s\nVOD playlist:\n%s", last, vod)
	}
	if got := mustReadKey(t, media.Store, liveKey); !bytes.Equal(got, last) {
		t.Errorf("stored live playlist is not the last one put")
	}

	// Progress: one report a unit, plus the one that names the playlist.
	mu.Lock()
	defer mu.Unlock()
	units := 1 + len(paras) // the title and a sentence a paragraph
	var done, named int
	for _, p := range reports {
		if p.UnitsTotal != units || p.UnitsDone < done {
			t.Errorf("report %+v after %d units done, want %d in all and never fewer", p, done, units)
		}
		done = p.UnitsDone
		if p.LiveKey != "" {
			named++
			if p.LiveKey != liveKey {
				t.Errorf("report names %q, want %q", p.LiveKey, liveKey)
			}
			if named == 1 && p.UnitsDone >= units {
				t.Errorf("live playlist reported only after every unit was written")
			}
		}
	}
	if done != units || named == 0 || len(reports) != units+1 {
		t.Errorf("%d reports, last at %d units done, %d with the playlist; want %d, %d, some", len(reports), done, named, units+1, units)
	}
}

func indexOf(keys []string, key string) int {
	for i, k := range keys {
		if k == key {
			return i
		}
	}
	return -1
}

// lastLines returns the last n lines of a playlist.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func mustReadKey(t *testing.T, media *localfs.Store, key string) []byte {
	t.Helper()
	f, _, err := media.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
