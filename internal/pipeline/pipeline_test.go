package pipeline_test

import (
	"context"
	"errors"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
	"github.com/narrator/narrator/internal/transcript"
	"github.com/narrator/narrator/internal/voicecat"
)

// toneEngine is a fake engine: a tone whose length follows the text, so
// that tests run fast and can count what was synthesised.
type toneEngine struct {
	mu     sync.Mutex
	texts  []string
	voices map[string]string // text → engine voice
	fail   string            // text that fails
	// click starts every unit with a faint click, 150 ms before the tone,
	// as flite's voices do: loud enough to survive silence trimming, far
	// quieter than speech.
	click bool
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
	if e.click {
		lead := make([]int16, sr*150/1000)
		// 5 ms of 1 kHz, which lame keeps however faint: -45 dBFS peak
		// and -56 dBFS RMS over 10 ms after normalising (-5 dB).
		for i := range sr / 200 {
			lead[i] = int16(180 * math.Sin(2*math.Pi*1000*float64(i)/sr))
		}
		out = append(lead, out...)
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
		c = b.openCache(t)
	}
	b.pipe = newPipe(t, pipeline.Config{Engines: everyEngine(b.engine), Media: b.media, Cache: c, Workers: 2})
	title, body, _ := narrator.DefaultVoices("en_US")
	b.proj = &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	return b
}

// openCache opens the bundle's unit cache, of 1 GiB.
func (b *testBundle) openCache(t *testing.T) *pipeline.UnitCache {
	t.Helper()
	c, err := pipeline.OpenUnitCache(filepath.Join(b.root, "cache"), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// everyEngine returns the engines of a pipeline in which eng speaks for the engine of every
// built-in voice.
func everyEngine(eng pipeline.Synthesizer) map[string]pipeline.Synthesizer {
	engines := map[string]pipeline.Synthesizer{}
	for _, v := range narrator.Voices() {
		engines[v.Engine] = eng
	}
	return engines
}

// newPipe returns the pipeline of cfg, with a scratch directory of the test's, closed when the
// test ends.
func newPipe(t *testing.T, cfg pipeline.Config) *pipeline.Pipeline {
	t.Helper()
	cfg.ScratchDir = t.TempDir()
	p := pipeline.New(cfg)
	t.Cleanup(func() { p.Close() })
	return p
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
	t.Cleanup(func() { b.pipe.Close() })
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

// TestRemovedVoiceNotSpoken checks that a rendering speaks with the voices installed when it
// starts: once a voice is removed (on any node: here in the database behind the pipeline's
// catalog source, which would otherwise keep its last read for an hour), the next rendering
// speaks with the language's default, and never with the removed voice, whose files are gone.
func TestRemovedVoiceNotSpoken(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	tone := &narrator.InstalledVoice{
		Voice:    narrator.Voice{Name: "Tone", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-tone", Quality: "medium"},
		Priority: -1,
		Files: []narrator.VoiceFile{
			{Role: narrator.VoiceFileModel, Name: "tone.onnx", Size: 1, SHA256: strings.Repeat("a", 64)},
			{Role: narrator.VoiceFileConfig, Name: "tone.onnx.json", Size: 1, SHA256: strings.Repeat("b", 64)},
		},
	}
	if err := st.InstallVoice(ctx, tone); err != nil {
		t.Fatal(err)
	}
	engine := &toneEngine{}
	engines := everyEngine(engine)
	engines[narrator.EnginePiper] = engine
	media, err := localfs.New(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	pipe := newPipe(t, pipeline.Config{Engines: engines, Media: media, Voices: voicecat.New(st, time.Hour, nil), Workers: 2})
	proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: "Tone", BodyVoice: "Tone"}

	if _, err := pipe.Render(ctx, &narrator.Audio{Body: "<p>Spoken before the removal.</p>"}, proj); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RemoveVoice(ctx, "piper-tone"); err != nil {
		t.Fatal(err)
	}
	if _, err := pipe.Render(ctx, &narrator.Audio{Body: "<p>Spoken after the removal.</p>"}, proj); err != nil {
		t.Fatal(err)
	}
	_, body, _ := narrator.DefaultVoices("en_US")
	engine.mu.Lock()
	defer engine.mu.Unlock()
	for text, want := range map[string]string{"Spoken before the removal.": "piper-tone", "Spoken after the removal.": body.EngineVoice} {
		if got := engine.voices[text]; got != want {
			t.Errorf("%q spoken by %q, want %q", text, got, want)
		}
	}
}

// wordEngine is toneEngine that reports one word per space-separated
// token, spread evenly over the tone, after a leading silence that the
// pipeline trims.
type wordEngine struct{ toneEngine }

const wordLead = 0.25 // seconds of silence before the tone

func (e *wordEngine) SynthesizeWords(ctx context.Context, voice, text string, rate float64) ([]int16, int, []narrator.TranscriptWord, error) {
	tone, sr, err := e.Synthesize(ctx, voice, text, rate)
	if err != nil {
		return nil, 0, nil, err
	}
	samples := append(make([]int16, int(wordLead*float64(sr))), tone...)
	fields := strings.Fields(text)
	step := float64(len(tone)) / float64(sr) / float64(len(fields))
	var words []narrator.TranscriptWord
	for i, f := range fields {
		start := wordLead + float64(i)*step
		words = append(words, narrator.TranscriptWord{Start: start, End: start + step, Text: f})
	}
	return samples, sr, words, nil
}

// readTranscript reads back the transcript stored beside an MP3, checking
// that its WebVTT form agrees.
func readTranscript(t *testing.T, media *localfs.Store, mp3Key string) *narrator.Transcript {
	t.Helper()
	jsonKey, vttKey := narrator.TranscriptKeys(mp3Key)
	f, _, err := media.Open(t.Context(), jsonKey)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := transcript.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	cues := parseVTT(t, string(mustReadKey(t, media, vttKey)))
	if len(cues) != len(tr.Sentences) {
		t.Fatalf("%d cues for %d sentences", len(cues), len(tr.Sentences))
	}
	for i, c := range cues {
		s := tr.Sentences[i]
		if math.Abs(c.start-s.Start) > 0.001 || math.Abs(c.end-s.End) > 0.001 {
			t.Errorf("cue %d spans %.3f-%.3f, sentence %.3f-%.3f", i, c.start, c.end, s.Start, s.End)
		}
	}
	return tr
}

type cue struct {
	start, end float64
	text       string
}

var reCueTiming = regexp.MustCompile(`^(\d{2,}):(\d{2}):(\d{2})\.(\d{3}) --> (\d{2,}):(\d{2}):(\d{2})\.(\d{3})$`)

// parseVTT reads WebVTT captions strictly enough for the writer's output:
// a header, then cues of an identifier, a timing line and text.
func parseVTT(t *testing.T, vtt string) []cue {
	t.Helper()
	blocks := strings.Split(strings.TrimRight(vtt, "\n"), "\n\n")
	if blocks[0] != "WEBVTT" {
		t.Fatalf("WebVTT header %q", blocks[0])
	}
	var cues []cue
	for _, b := range blocks[1:] {
		lines := strings.Split(b, "\n")
		if len(lines) < 3 {
			t.Fatalf("cue %q", b)
		}
		m := reCueTiming.FindStringSubmatch(lines[1])
		if m == nil {
			t.Fatalf("cue timing %q", lines[1])
		}
		sec := func(h, mi, s, ms string) float64 {
			n := func(x string) float64 { v, _ := strconv.Atoi(x); return float64(v) }
			return n(h)*3600 + n(mi)*60 + n(s) + n(ms)/1000
		}
		text := html.UnescapeString(strings.Join(lines[2:], "\n"))
		cues = append(cues, cue{sec(m[1], m[2], m[3], m[4]), sec(m[5], m[6], m[7], m[8]), text})
	}
	return cues
}

// decodeMP3 decodes an MP3 with go-mp3, as a browser would (no gapless
// trimming), and returns one channel.
func decodeMP3(t *testing.T, media *localfs.Store, key string) []int16 {
	t.Helper()
	return pcmtest.DecodeMP3(t, mustReadKey(t, media, key), pipeline.SampleRate)
}

// onsets returns where sound starts after each silence of at least gap in
// decoded audio, in seconds: the first sample that reaches dbfs in the
// first 5 ms window whose RMS reaches dbfs after gap of windows below it.
func onsets(samples []int16, gap time.Duration, dbfs float64) []float64 {
	const win = pipeline.SampleRate / 200
	threshold := 32768 * math.Pow(10, dbfs/20)
	quietWindows := int(gap.Seconds() * 200)
	var out []float64
	quiet := quietWindows // the start counts as after silence
	for i := 0; i+win <= len(samples); i += win {
		var sum float64
		for _, v := range samples[i : i+win] {
			sum += float64(v) * float64(v)
		}
		if math.Sqrt(sum/win) < threshold {
			quiet++
			continue
		}
		if quiet >= quietWindows {
			// Refine to the first sample that reaches the threshold.
			at := i
			for j := max(0, i-win); j < i+win; j++ {
				if math.Abs(float64(samples[j])) >= threshold {
					at = j
					break
				}
			}
			out = append(out, float64(at)/pipeline.SampleRate)
		}
		quiet = 0
	}
	return out
}

// checkSync checks that every sentence's start is within tolerance of an
// onset in the decoded MP3, each its own and in order.
func checkSync(t *testing.T, tr *narrator.Transcript, found []float64, tolerance float64) {
	t.Helper()
	next := 0
	for i, s := range tr.Sentences {
		best, bestAt := math.Inf(1), -1
		for j := next; j < len(found); j++ {
			if d := math.Abs(found[j] - s.Start); d < best {
				best, bestAt = d, j
			}
		}
		if bestAt < 0 || best > tolerance {
			t.Errorf("sentence %d %q starts at %.3f s; nearest onset %.0f ms away (onsets %.3f)", i, s.Text, s.Start, best*1000, found)
			continue
		}
		t.Logf("sentence %d starts at %.3f s, onset at %.3f s (%+.0f ms)", i, s.Start, found[bestAt], (s.Start-found[bestAt])*1000)
		next = bestAt + 1
	}
}

func TestRenderTranscript(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	long := strings.Repeat("The committee met again on Tuesday and talked for hours about the budget, ", 5) + "then it went home."
	body := "<p>It costs $5 &amp; more. Dr. Smith agreed.</p><p>" + long + "</p>"
	for round := range 2 { // the second rendering comes from the cache
		r, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "A <i>title</i>", Author: "Jo", Body: body}, b.proj)
		if err != nil {
			t.Fatal(err)
		}
		tr := readTranscript(t, b.media, r.Keys[narrator.ContentTypeMP3])
		var got []string
		for _, s := range tr.Sentences {
			got = append(got, s.Text)
		}
		want := []string{"A title", "By Jo", "It costs $5 & more.", "Dr. Smith agreed.", long}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round %d: sentences (-want +got):\n%s", round, diff)
		}
		if math.Abs(tr.Duration-r.Duration.Seconds()) > 0.001 {
			t.Errorf("transcript lasts %.3f s, audio %s", tr.Duration, r.Duration)
		}
		prev := 0.0
		for i, s := range tr.Sentences {
			if s.Start < prev || s.End <= s.Start || s.End > tr.Duration || s.Words != nil {
				t.Errorf("sentence %d spans %.3f-%.3f after %.3f", i, s.Start, s.End, prev)
			}
			prev = s.End
		}
		checkSync(t, tr, onsets(decodeMP3(t, b.media, r.Keys[narrator.ContentTypeMP3]), 100*time.Millisecond, -40), 0.010)
	}
	if n := len(b.engine.calls()); n > 8 {
		t.Errorf("%d engine calls: the second rendering did not come from the cache", n)
	}
}

func TestRenderTranscriptWords(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	eng := &wordEngine{}
	b.pipe = newPipe(t, pipeline.Config{Engines: everyEngine(eng), Media: b.media, Cache: b.openCache(t)})
	var first *narrator.Transcript
	for round := range 2 { // the second rendering comes from the cache
		r, err := b.pipe.Render(t.Context(), &narrator.Audio{Body: "One two three. Four five."}, b.proj)
		if err != nil {
			t.Fatal(err)
		}
		tr := readTranscript(t, b.media, r.Keys[narrator.ContentTypeMP3])
		if len(tr.Sentences) != 2 {
			t.Fatalf("sentences %+v", tr.Sentences)
		}
		for i, want := range [][]string{{"One", "two", "three"}, {"Four", "five"}} {
			s := tr.Sentences[i]
			if len(s.Words) != len(want) {
				t.Fatalf("sentence %d words %+v, want %q", i, s.Words, want)
			}
			for j, w := range s.Words {
				if w.Text != want[j] {
					t.Errorf("word %d.%d %q, want %q", i, j, w.Text, want[j])
				}
			}
			// The leading silence was trimmed, with the words: the first
			// word starts where the sentence does (the tone starts at
			// once), give or take the 20 ms trimming margin.
			if d := s.Words[0].Start - s.Start; math.Abs(d) > 0.025 {
				t.Errorf("sentence %d starts at %.3f, its first word at %.3f", i, s.Start, s.Words[0].Start)
			}
			if last := s.Words[len(s.Words)-1]; last.End > s.End+0.025 || last.End < s.End-0.05 {
				t.Errorf("sentence %d ends at %.3f, its last word at %.3f", i, s.End, last.End)
			}
		}
		if round == 0 {
			first = tr
		} else if diff := cmp.Diff(first, tr); diff != "" {
			t.Errorf("cached rendering's transcript differs (-first +second):\n%s", diff)
		}
	}
	if n := len(eng.calls()); n != 2 {
		t.Errorf("%d engine calls, want 2", n)
	}
}

func TestTranscriptCutsFaintLeadIn(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.engine.click = true
	r, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "A title", Body: body}, b.proj)
	if err != nil {
		t.Fatal(err)
	}
	tr := readTranscript(t, b.media, r.Keys[narrator.ContentTypeMP3])
	// A detector that hears the click would put each sentence 150 ms early:
	// no sound may come before the cues.
	found := onsets(decodeMP3(t, b.media, r.Keys[narrator.ContentTypeMP3]), 100*time.Millisecond, -60)
	if len(found) != len(tr.Sentences) {
		t.Errorf("sound starts at %.3f s, the %d sentences at %+v", found, len(tr.Sentences), tr.Sentences)
	}
	checkSync(t, tr, found, 0.010)
}

// TestRenderDurationCap: an SSML article of short words between the
// longest breaks, which would make over 5 hours of mostly silence, fails
// at once as invalid (so the job fails for good), stores nothing, and
// never reaches the engine.
func TestRenderDurationCap(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	body := "<speak>" + strings.Repeat(`a<break time="10s"/>`, 2_000) + "</speak>"
	_, err := b.pipe.Render(t.Context(), &narrator.Audio{Body: body}, b.proj)
	if narrator.ErrorCode(err) != narrator.EINVALID {
		t.Fatalf("error %v, want EINVALID", err)
	}
	if n := len(b.engine.calls()); n != 0 {
		t.Errorf("%d engine calls for an article over the cap", n)
	}
	entries, err := os.ReadDir(filepath.Join(b.root, "media"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("media left behind: %v", entries)
	}
}

// TestRenderDurationCapWhileSpeaking: speech that turns out longer than
// its estimate stops as soon as the audio passes the cap, as invalid, with
// nothing stored.
func TestRenderDurationCapWhileSpeaking(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	// The tone engine reads 15 characters a second: these 40 sentences
	// last about two and a half minutes, and speak.Estimate, which
	// assumes a faster reader, makes them about a minute and a half.
	body := strings.Repeat("This sentence takes a little while to read out loud. ", 40)
	capped := newPipe(t, pipeline.Config{Engines: everyEngine(b.engine), Media: b.media, Workers: 2, MaxDuration: 2 * time.Minute})
	_, err := capped.Render(t.Context(), &narrator.Audio{Body: body}, b.proj)
	if narrator.ErrorCode(err) != narrator.EINVALID {
		t.Fatalf("error %v, want EINVALID", err)
	}
	entries, err := os.ReadDir(filepath.Join(b.root, "media"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("media left behind: %v", entries)
	}
}
