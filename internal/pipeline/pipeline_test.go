package pipeline_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pipeline"
)

// toneEngine is a fake engine: a tone whose length follows the text, so
// that tests run fast and can count what was synthesised.
type toneEngine struct {
	mu     sync.Mutex
	texts  []string
	voices map[string]string // text → engine voice
	fail   string            // text that fails
}

func (e *toneEngine) Synthesize(ctx context.Context, voice, text string, rate float64) ([]int16, int, error) {
	e.mu.Lock()
	e.texts = append(e.texts, text)
	if e.voices == nil {
		e.voices = map[string]string{}
	}
	e.voices[text] = voice
	e.mu.Unlock()
	if e.fail != "" && strings.Contains(text, e.fail) {
		return nil, 0, errors.New("engine failure")
	}
	const sr = 16000
	n := sr * len(text) / 15 // about 15 characters a second
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(8000 * math.Sin(2*math.Pi*220*float64(i)/sr))
	}
	return out, sr, nil
}

func (e *toneEngine) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.texts...)
}

type testBundle struct {
	engine *toneEngine
	media  *localfs.Store
	pipe   *pipeline.Pipeline
	proj   *narrator.Project
	root   string
}

func setup(t *testing.T, cache bool) *testBundle {
	t.Helper()
	b := &testBundle{engine: &toneEngine{}, root: t.TempDir()}
	var err error
	if b.media, err = localfs.New(filepath.Join(b.root, "media")); err != nil {
		t.Fatal(err)
	}
	var c *pipeline.UnitCache
	if cache {
		if c, err = pipeline.OpenUnitCache(filepath.Join(b.root, "cache"), 1<<30); err != nil {
			t.Fatal(err)
		}
	}
	engines := map[string]pipeline.Synthesizer{}
	for _, v := range narrator.Voices() {
		engines[v.Engine] = b.engine
	}
	b.pipe = pipeline.New(pipeline.Config{Engines: engines, Media: b.media, Cache: c, ScratchDir: t.TempDir(), Workers: 2})
	title, body, _ := narrator.DefaultVoices("en_US")
	b.proj = &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	return b
}

const body = `<p>The first paragraph has two sentences. This is the second one.</p>
<p>A second paragraph follows here.</p>`

func TestRender(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	r, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "A title", Body: body}, b.proj)
	if err != nil {
		t.Fatal(err)
	}
	keys, d := r.Keys, r.Duration
	calls := b.engine.calls()
	if len(calls) != 4 {
		t.Fatalf("engine calls %q, want title and three sentences", calls)
	}
	f, _, err := b.media.Open(t.Context(), keys[narrator.ContentTypeMP3])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := mp3.Duration(f)
	if err != nil {
		t.Fatal(err)
	}
	if got != d {
		t.Errorf("reported duration %s, mp3 lasts %s", d, got)
	}
	// Speech plus pauses: the tone lasts len/15 seconds a unit.
	var chars int
	for _, c := range calls {
		chars += len(c)
	}
	speech := time.Duration(chars) * time.Second / 15
	if d < speech || d > speech+3*time.Second {
		t.Errorf("duration %s for %s of speech", d, speech)
	}
	pl, _, err := b.media.Open(t.Context(), keys[narrator.ContentTypeM3U8])
	if err != nil {
		t.Fatal(err)
	}
	pl.Close()
	if !strings.HasSuffix(keys[narrator.ContentTypeM3U8], "/audio.m3u8") || strings.Split(keys[narrator.ContentTypeM3U8], "/")[0] != strings.Split(keys[narrator.ContentTypeMP3], "/")[0] {
		t.Errorf("keys %v", keys)
	}
}

// TestRenderSizes checks that a rendering reports the sizes of its files as
// they are on disk: a podcast feed announces them as enclosure lengths.
func TestRenderSizes(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	r, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "Sizes", Body: body}, b.proj)
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range narrator.MediaTypes() {
		fi, err := os.Stat(filepath.Join(b.media.Root(), filepath.FromSlash(r.Keys[ct])))
		if err != nil {
			t.Fatal(err)
		}
		if r.Bytes[ct] != fi.Size() || fi.Size() == 0 {
			t.Errorf("%s: reported %d bytes, file has %d", ct, r.Bytes[ct], fi.Size())
		}
	}
}

func TestRenderFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.engine.fail = "second one"
	if _, err := b.pipe.Render(t.Context(), &narrator.Audio{Body: body}, b.proj); err == nil {
		t.Fatal("no error")
	}
	entries, err := os.ReadDir(filepath.Join(b.root, "media"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("media left behind: %v", entries)
	}
}

func TestRenderNothingToRead(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	_, err := b.pipe.Render(t.Context(), &narrator.Audio{Body: "<script>x()</script>"}, b.proj)
	if narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("error %v, want EINVALID", err)
	}
}

func TestCacheResynthesizesOnlyChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	if _, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "A title", Body: body}, b.proj); err != nil {
		t.Fatal(err)
	}
	first := len(b.engine.calls())
	changed := strings.Replace(body, "second one", "changed one", 1)
	if _, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "A title", Body: changed}, b.proj); err != nil {
		t.Fatal(err)
	}
	calls := b.engine.calls()[first:]
	if len(calls) != 1 || !strings.Contains(calls[0], "changed one") {
		t.Errorf("second rendering synthesised %q, want only the changed sentence", calls)
	}
}

func TestRulesApply(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.pipe = pipeline.New(pipeline.Config{
		Engines: map[string]pipeline.Synthesizer{narrator.EngineFestival: b.engine, narrator.EngineFlite: b.engine, narrator.EngineEspeak: b.engine},
		Media:   b.media,
		Rules:   ruleList{{Phrase: "nginx", Say: "engine x"}},
	})
	if _, err := b.pipe.Render(t.Context(), &narrator.Audio{Body: "We run nginx."}, b.proj); err != nil {
		t.Fatal(err)
	}
	if calls := b.engine.calls(); len(calls) != 1 || !strings.Contains(calls[0], "engine x") {
		t.Errorf("engine got %q", calls)
	}
}

type ruleList []narrator.Pronunciation

func (r ruleList) ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error) {
	out := make([]*narrator.Pronunciation, len(r))
	for i := range r {
		out[i] = &r[i]
	}
	return out, nil
}

func TestParagraphVoices(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	body := `<p>Read by the body voice.</p><p data-voice="Richard">Read by Richard.</p><p data-speechkit-voice="Nobody">Unknown voices fall back.</p>`
	if _, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "Voices", Body: body}, b.proj); err != nil {
		t.Fatal(err)
	}
	richard, _ := narrator.LookupVoice("en_US", "Richard")
	_, bodyVoice, _ := narrator.DefaultVoices("en_US")
	want := map[string]string{
		"Read by the body voice.":   bodyVoice.EngineVoice,
		"Read by Richard.":          richard.EngineVoice,
		"Unknown voices fall back.": bodyVoice.EngineVoice,
	}
	b.engine.mu.Lock()
	defer b.engine.mu.Unlock()
	for text, voice := range want {
		if got := b.engine.voices[text]; got != voice {
			t.Errorf("%q read by %q, want %q", text, got, voice)
		}
	}
}
