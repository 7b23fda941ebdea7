// Package enginetest is the conformance suite of speech engines: the behaviour every engine
// must have to serve the pipeline as a pipeline.Synthesizer. Every engine (festival, flite,
// espeak) runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		enginetest.Run(t, newEngine, enginetest.Config{Engine: narrator.EngineFlite, …})
//	}
//
// where newEngine makes an engine that runs the real program, or one that misbehaves as the
// suite asks (Fault). Each engine package keeps only the tests of what is its own. A new
// engine behaviour starts as a test here.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// Engine is the contract the suite checks.
type Engine interface {
	// Synthesize speaks plain text in an engine voice and returns mono PCM and its sample
	// rate. rate is a speaking-rate factor: 1 is normal, 2 twice as fast, 0 means 1, and
	// outside [0.25, 4] it is an error. Any text is spoken without a hang, and never read as
	// markup or options; a unit whose process hangs or dies is retried once on a fresh
	// process. It returns ctx.Err() if ctx ends first, and the engine's closed error after
	// Close (to units running then too).
	pipeline.Synthesizer
	// Ping reports whether the engine can run units; after Close it returns the engine's
	// closed error.
	Ping(ctx context.Context) error
	// Close stops every process of the engine. It may be called more than once.
	Close() error
}

// Fault is a way an engine's program misbehaves, for the suite's failure tests.
type Fault int

// The faults. A hung unit's process leaves a child that must be killed with it, which writes
// its process ID to Options.PIDFile ("echo $$ > PIDFile"); a crashed unit's process writes
// "boom" to stderr and dies of SIGKILL.
const (
	NoFault   Fault = iota // the real program
	HangOnce               // the first unit hangs; later units, on fresh processes, work
	Hang                   // every unit hangs
	CrashOnce              // the first unit's process crashes; later ones work
	Crash                  // every unit's process crashes
)

// Options are what a test asks of the engine that a NewEngineFunc makes.
type Options struct {
	// Procs is how many processes the engine may run at once. Zero means its default.
	Procs int
	// Fault is how the engine's program misbehaves.
	Fault Fault
	// PIDFile is where a hung unit's child writes its process ID; set with HangOnce and Hang.
	PIDFile string
	// UnitTimeout, if not zero, is the time limit of one unit, whatever its text: see
	// Timeouts.
	UnitTimeout time.Duration
	// Metrics, if not nil, is the engine's proc.Recorder.
	Metrics proc.Recorder
	// Sandbox, if not nil, is the sandbox the engine runs its processes in.
	Sandbox *proc.Sandbox
	// DataDir, if not empty, is a directory the Sandbox hides, maybe a relative path, in which the engine's
	// scratch directory is to be, as the server lays them out.
	DataDir string
}

// Counts is a proc.Recorder that counts what it is told, for the failure tests.
type Counts struct {
	busy, restarted, timedOut atomic.Int32
}

// Busy implements proc.Recorder.
func (c *Counts) Busy(delta int) { c.busy.Add(int32(delta)) }

// Restarted implements proc.Recorder.
func (c *Counts) Restarted() { c.restarted.Add(1) }

// TimedOut implements proc.Recorder.
func (c *Counts) TimedOut() { c.timedOut.Add(1) }

// check fails t unless c counted restarted restarts and timedOut timeouts, and no process
// is left busy.
func (c *Counts) check(t *testing.T, restarted, timedOut int32) {
	t.Helper()
	if got := c.restarted.Load(); got != restarted {
		t.Errorf("recorded %d restarted processes, want %d", got, restarted)
	}
	if got := c.timedOut.Load(); got != timedOut {
		t.Errorf("recorded %d timed-out processes, want %d", got, timedOut)
	}
	if got := c.busy.Load(); got != 0 {
		t.Errorf("%d processes recorded busy after the unit, want 0", got)
	}
}

// Timeouts returns the parts of a unit's time limit for the engine's options (see proc.Limit):
// zero for both, the engine's defaults, if UnitTimeout is zero; else UnitTimeout and a
// negligible allowance per character.
func (o Options) Timeouts() (unit, perChar time.Duration) {
	if o.UnitTimeout == 0 {
		return 0, 0
	}
	return o.UnitTimeout, time.Millisecond
}

// NewEngineFunc returns an engine for one test, closed when the test ends. If the engine's
// program is not installed it calls proctest.Missing, which skips the test, or fails it under
// NARRATOR_TEST_FULL=1.
type NewEngineFunc func(t *testing.T, opts Options) Engine

// Voice is an engine voice the suite speaks in.
type Voice struct {
	// Name is the engine's name of the voice, as Synthesize takes it.
	Name string
	// SampleRate is the rate Synthesize returns in the voice. Zero means Config.SampleRate.
	SampleRate int
	// Text is a sentence of about a dozen words in the voice's language. Empty means an
	// English one.
	Text string
}

// Config describes the engine under test.
type Config struct {
	// Engine is the engine's name in the voice catalog (narrator.EngineFestival, …). The suite
	// speaks in every catalog voice of the engine.
	Engine string
	// SampleRate is the rate Synthesize returns, unless a Voice says otherwise.
	SampleRate int
	// Voices are voices to speak a sentence in, at least one. Voices[0], which must speak
	// English, is the voice of every other test.
	Voices []Voice
	// ErrClosed is the error Synthesize returns after Close.
	ErrClosed error
	// Catalog is the catalog whose voices of Engine the suite speaks in; nil means the
	// built-in voices. An engine of installed voices gives the catalog of those it installs.
	Catalog *narrator.Catalog
}

// catalogVoices returns the catalog voices of the engine under test.
func (s *suite) catalogVoices() []narrator.Voice {
	cat := s.cfg.Catalog
	if cat == nil {
		cat = narrator.BuiltinCatalog()
	}
	var out []narrator.Voice
	for _, v := range cat.Voices() {
		if v.Engine == s.cfg.Engine {
			out = append(out, v)
		}
	}
	return out
}

// sentence is the English sentence the suite speaks; it lasts about 3.5 s at normal rate.
const sentence = "The council approved the budget for the new library on Tuesday."

// nasty is text that has broken, or could break, an engine: option-like leading dashes,
// quotes and backslashes that end a string literal, a protocol's marker, markup, shell
// metacharacters, and non-ASCII text. It must be spoken as words, within 2 to 25 s.
const nasty = `-t -v "quotes" \ back\slash; it's naïve — café, “quoted” ‘too’ 日本 )) (car 1) ` +
	`NARRATOR_DONE 1 <speak>not markup</speak> $(rm -rf /) ;|& "`

// Run runs the suite against engines made by newEngine.
func Run(t *testing.T, newEngine NewEngineFunc, cfg Config) {
	if len(cfg.Voices) == 0 {
		t.Fatal("enginetest: Config.Voices is empty")
	}
	s := &suite{newEngine: newEngine, cfg: cfg, voice: cfg.Voices[0].Name}
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"Speech", s.testSpeech},
		{"Sandboxed", s.testSandboxed},
		{"Voices", s.testVoices},
		{"CatalogVoices", s.testCatalogVoices},
		{"Rate", s.testRate},
		{"Words", s.testWords},
		{"BlankText", s.testBlankText},
		{"OddText", s.testOddText},
		{"BadVoices", s.testBadVoices},
		{"Concurrent", s.testConcurrent},
		{"Cancel", s.testCancel},
		{"CancelHung", s.testCancelHung},
		{"HungReplaced", s.testHungReplaced},
		{"HungEverywhere", s.testHungEverywhere},
		{"CrashReplaced", s.testCrashReplaced},
		{"CrashEverywhere", s.testCrashEverywhere},
		{"Close", s.testClose},
		{"CloseStopsUnits", s.testCloseStopsUnits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t)
		})
	}
}

// suite holds what the tests share.
type suite struct {
	newEngine NewEngineFunc
	cfg       Config
	voice     string // Voices[0]
}

// rateOf returns the sample rate Synthesize returns in voice.
func (s *suite) rateOf(voice string) int {
	for _, v := range s.cfg.Voices {
		if v.Name == voice && v.SampleRate != 0 {
			return v.SampleRate
		}
	}
	return s.cfg.SampleRate
}

// mustSpeak speaks text in voice at rate and checks that it is audible speech at the voice's
// sample rate lasting minSec to maxSec. It returns the samples.
func (s *suite) mustSpeak(t *testing.T, e Engine, voice, text string, rate float64, minSec, maxSec float64) []int16 {
	t.Helper()
	samples, sampleRate, err := e.Synthesize(t.Context(), voice, text, rate)
	if err != nil {
		t.Fatalf("Synthesize(%s, %q, %g): %v", voice, text, rate, err)
	}
	if want := s.rateOf(voice); sampleRate != want {
		t.Fatalf("Synthesize(%s, %q, %g): sample rate = %d, want %d", voice, text, rate, sampleRate, want)
	}
	if sec := seconds(samples, sampleRate); sec < minSec || sec > maxSec {
		t.Errorf("Synthesize(%s, %q, %g): duration = %.2fs, want %.1f..%.1fs", voice, text, rate, sec, minSec, maxSec)
	}
	if r := rms(samples); r < 300 {
		t.Errorf("Synthesize(%s, %q, %g): RMS = %.0f, want speech (> 300)", voice, text, rate, r)
	}
	return samples
}

func seconds(samples []int16, rate int) float64 { return float64(len(samples)) / float64(max(rate, 1)) }

func rms(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(max(len(s), 1)))
}

// hangFile returns a new path for a hung unit's child to write its process ID to.
func hangFile(t *testing.T) string { return filepath.Join(t.TempDir(), "hung.pid") }

func (s *suite) testSpeech(t *testing.T) {
	e := s.newEngine(t, Options{})
	s.mustSpeak(t, e, s.voice, sentence, 1, 2, 6)
}

// testSandboxed speaks, in every catalog voice of the engine and with odd text, in a
// sandbox that hides the data directory the engine's scratch directory lies in. The data
// directory is named by a relative path, as serve's default ./narrator-data is.
func (s *suite) testSandboxed(t *testing.T) {
	data := filepath.Join(t.TempDir(), "Données")
	if err := os.MkdirAll(filepath.Join(data, "tmp"), 0o750); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, data)
	if err != nil {
		t.Fatal(err)
	}
	e := s.newEngine(t, Options{Sandbox: proctest.Sandbox(t, data), DataDir: rel})
	s.mustSpeak(t, e, s.voice, sentence, 1, 2, 6)
	s.mustSpeak(t, e, s.voice, nasty, 1, 2, 25)
	for _, v := range s.catalogVoices() {
		s.mustSpeak(t, e, v.EngineVoice, "1 2 3 4 5 6 7 8 9 10", 1, 1, 15)
	}
	if ws, ok := e.(pipeline.WordSynthesizer); ok {
		_, _, words, err := ws.SynthesizeWords(t.Context(), s.voice, sentence, 1)
		if err != nil {
			t.Fatalf("SynthesizeWords: %v", err)
		}
		if want := len(strings.Fields(sentence)); len(words) != want {
			t.Errorf("SynthesizeWords: %d words %+v, want %d", len(words), words, want)
		}
	}
}

func (s *suite) testVoices(t *testing.T) {
	e := s.newEngine(t, Options{})
	for _, v := range s.cfg.Voices {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			text := v.Text
			if text == "" {
				text = sentence
			}
			s.mustSpeak(t, e, v.Name, text, 1, 2, 9)
		})
	}
}

// testCatalogVoices speaks in every catalog voice of the engine. Digits, because every
// language reads them.
func (s *suite) testCatalogVoices(t *testing.T) {
	e := s.newEngine(t, Options{})
	n := 0
	for _, v := range s.catalogVoices() {
		n++
		t.Run(v.Language+"/"+v.Name, func(t *testing.T) {
			t.Parallel()
			s.mustSpeak(t, e, v.EngineVoice, "1, 2, 3.", 1, 0.3, 5)
		})
	}
	if n == 0 {
		t.Errorf("the catalog has no voice of engine %q", s.cfg.Engine)
	}
}

// testRate checks that the speaking rate changes the duration in proportion, that zero means
// normal, and that rates out of range are errors.
func (s *suite) testRate(t *testing.T) {
	e := s.newEngine(t, Options{})
	normal := seconds(s.mustSpeak(t, e, s.voice, sentence, 1, 2, 6), s.rateOf(s.voice))
	tests := []struct {
		rate     float64
		minRatio float64 // of the duration at rate 1
		maxRatio float64
		minSec   float64
		maxSec   float64
	}{
		{2, 0.35, 0.7, 1, 3},
		{0.5, 1.5, 2.6, 4, 12},
		{0, 0.99, 1.01, 2, 6},
	}
	for _, tt := range tests {
		sec := seconds(s.mustSpeak(t, e, s.voice, sentence, tt.rate, tt.minSec, tt.maxSec), s.rateOf(s.voice))
		if r := sec / normal; r < tt.minRatio || r > tt.maxRatio {
			t.Errorf("rate %g: %.2fs against %.2fs at rate 1 (×%.2f), want ×%.2f..%.2f", tt.rate, sec, normal, r, tt.minRatio, tt.maxRatio)
		}
	}
	for _, rate := range []float64{-1, 0.1, 5} {
		if _, _, err := e.Synthesize(t.Context(), s.voice, "Hi.", rate); err == nil {
			t.Errorf("rate %g: no error", rate)
		}
	}
}

// testBlankText checks that text with nothing to say gives (almost) silence, not an error.
func (s *suite) testBlankText(t *testing.T) {
	e := s.newEngine(t, Options{})
	for _, text := range []string{"", "  ", "\n\t", "."} {
		samples, rate, err := e.Synthesize(t.Context(), s.voice, text, 1)
		if err != nil {
			t.Errorf("Synthesize(%q): %v", text, err)
			continue
		}
		if want := s.rateOf(s.voice); rate != want {
			t.Errorf("Synthesize(%q): sample rate = %d, want %d", text, rate, want)
		}
		if sec, r := seconds(samples, rate), rms(samples); sec > 0.25 || r > 100 {
			t.Errorf("Synthesize(%q): %.2fs at RMS %.0f, want at most 0.25s of near silence", text, sec, r)
		}
	}
}

// testOddText checks that odd text is spoken, as words, without a hang.
func (s *suite) testOddText(t *testing.T) {
	e := s.newEngine(t, Options{})
	s.mustSpeak(t, e, s.voice, nasty, 1, 2, 25)
	// Text in scripts an English voice cannot read may come out as silence, but in time.
	for _, text := range []string{"日本語", "Ελληνικά", "\x00\x1b[31m\u202e\ufeff", "a\xffb"} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		samples, rate, err := e.Synthesize(ctx, s.voice, text, 1)
		cancel()
		if err != nil {
			t.Errorf("Synthesize(%q): %v", text, err)
			continue
		}
		if want := s.rateOf(s.voice); rate != want || seconds(samples, rate) > 10 {
			t.Errorf("Synthesize(%q): %d samples at %d Hz, want at most 10s at %d Hz", text, len(samples), rate, want)
		}
	}
}

// testWords checks, for an engine that reports word boundaries (a pipeline.WordSynthesizer),
// that it reports every word of the text in order, with spans that follow the speech at the
// speaking rate; and that odd text gives sane spans, if any. Other engines skip it.
func (s *suite) testWords(t *testing.T) {
	e := s.newEngine(t, Options{})
	ws, ok := e.(pipeline.WordSynthesizer)
	if !ok {
		t.Skip("the engine reports no word boundaries")
	}
	want := strings.Fields(strings.TrimSuffix(sentence, "."))
	var spoken [2]float64
	for i, rate := range []float64{1, 2} {
		samples, sampleRate, words, err := ws.SynthesizeWords(t.Context(), s.voice, sentence, rate)
		if err != nil {
			t.Fatalf("SynthesizeWords(%g): %v", rate, err)
		}
		length := seconds(samples, sampleRate)
		if len(words) != len(want) {
			t.Fatalf("SynthesizeWords(%g): words %+v, want %q", rate, words, want)
		}
		checkWordSpans(t, words, length)
		for j, w := range words {
			if !strings.EqualFold(w.Text, want[j]) {
				t.Errorf("SynthesizeWords(%g): word %d is %q, want %q", rate, j, w.Text, want[j])
			}
		}
		// The spans match the sound: the first word starts about where sound does, the
		// last ends about where it does.
		first, last := soundBounds(samples, sampleRate)
		if d := words[0].Start - first; d < -0.08 || d > 0.08 {
			t.Errorf("SynthesizeWords(%g): first word at %.3f s, sound at %.3f s", rate, words[0].Start, first)
		}
		if d := last - words[len(words)-1].End; d < -0.08 || d > 0.15 {
			t.Errorf("SynthesizeWords(%g): last word ends at %.3f s, sound at %.3f s", rate, words[len(words)-1].End, last)
		}
		spoken[i] = words[len(words)-1].End - words[0].Start
	}
	if r := spoken[1] / spoken[0]; r < 0.35 || r > 0.7 {
		t.Errorf("twice the rate: words span %.3f s, at normal rate %.3f s", spoken[1], spoken[0])
	}
	// Odd text may leave an engine unsure which words it read: it may then
	// report none, but never spans that make no sense.
	samples, sampleRate, words, err := ws.SynthesizeWords(t.Context(), s.voice, nasty, 1)
	if err != nil {
		t.Fatalf("SynthesizeWords(%q): %v", nasty, err)
	}
	checkWordSpans(t, words, seconds(samples, sampleRate))
}

// checkWordSpans checks that words are in order, apart, non-empty and within length seconds.
func checkWordSpans(t *testing.T, words []narrator.TranscriptWord, length float64) {
	t.Helper()
	prev := 0.0
	for _, w := range words {
		if strings.TrimSpace(w.Text) == "" || w.Start < prev || w.End < w.Start || w.End > length {
			t.Errorf("word %q spans %.3f-%.3f after %.3f, in %.3f s", w.Text, w.Start, w.End, prev, length)
		}
		prev = w.End
	}
}

// soundBounds returns where sound starts and ends in samples, in seconds: the first and last
// sample louder than -40 dBFS.
func soundBounds(samples []int16, rate int) (first, last float64) {
	const threshold = 328 // -40 dBFS
	i, j := 0, len(samples)-1
	for i < len(samples) && samples[i] < threshold && samples[i] > -threshold {
		i++
	}
	for j > i && samples[j] < threshold && samples[j] > -threshold {
		j--
	}
	return seconds(samples[:i], rate), seconds(samples[:j+1], rate)
}

// testBadVoices checks that voices the engine does not have, or that could be read as
// something else than a voice, are errors, and that the engine works afterwards.
func (s *suite) testBadVoices(t *testing.T) {
	e := s.newEngine(t, Options{})
	for _, v := range []string{
		"", "no_such_voice", "xx-nosuch", "-h", "+f3", "de;rm", "../../etc/passwd", "/etc/passwd",
		"http://example.com/x.flitevox", `x") (system "touch /tmp/pwned`,
	} {
		if _, _, err := e.Synthesize(t.Context(), v, "Hi.", 1); err == nil {
			t.Errorf("voice %q: no error", v)
		}
	}
	s.mustSpeak(t, e, s.voice, "Hello there.", 1, 0.5, 3)
}

// testConcurrent speaks from more goroutines than the engine has processes, each text twice:
// the two must come out alike, so units are not mixed up between callers.
func (s *suite) testConcurrent(t *testing.T) {
	e := s.newEngine(t, Options{Procs: 2})
	const texts = 8
	got := make([][2][]int16, texts)
	var wg sync.WaitGroup
	for i := range texts {
		for k := range 2 {
			wg.Go(func() {
				text := fmt.Sprintf("This is sentence number %d of the test.", i+1)
				samples, rate, err := e.Synthesize(t.Context(), s.voice, text, 1)
				if err != nil {
					t.Error(err)
					return
				}
				if want := s.rateOf(s.voice); rate != want {
					t.Errorf("%q: sample rate = %d, want %d", text, rate, want)
				}
				if sec := seconds(samples, rate); sec < 1 || sec > 5 || rms(samples) < 300 {
					t.Errorf("%q: %.2fs at RMS %.0f, want 1..5s of speech", text, sec, rms(samples))
				}
				got[i][k] = samples
			})
		}
	}
	wg.Wait()
	for i, pair := range got {
		if len(pair[0]) != len(pair[1]) {
			t.Errorf("sentence %d: %d samples once, %d the other time", i+1, len(pair[0]), len(pair[1]))
		}
	}
}

// testCancel cancels a long unit on the real engine: Synthesize returns soon, and the engine
// works afterwards.
func (s *suite) testCancel(t *testing.T) {
	e := s.newEngine(t, Options{Procs: 1})
	ctx, cancel := context.WithCancel(t.Context())
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	defer timer.Stop()
	// Minutes of speech: seconds of work for the fastest engine.
	long := strings.Repeat("This sentence is long enough to keep the engine busy for a while. ", 100)
	start := time.Now()
	if _, _, err := e.Synthesize(ctx, s.voice, long, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %s, want soon after the cancel at 200ms", d)
	}
	s.mustSpeak(t, e, s.voice, "Back again.", 1, 0.4, 3)
}

// testCancelHung cancels a unit whose process hangs: Synthesize returns soon with ctx's error,
// with no retry, and the hung process's child is killed.
func (s *suite) testCancelHung(t *testing.T) {
	pidFile := hangFile(t)
	e := s.newEngine(t, Options{Procs: 1, Fault: Hang, PIDFile: pidFile, UnitTimeout: time.Minute})
	// 10 s is far below the unit's minute: Synthesize did not wait for it.
	proctest.CancelKills(t, pidFile, 10*time.Second, "child of a cancelled unit's hung process", func(ctx context.Context) error {
		_, _, err := e.Synthesize(ctx, s.voice, "Hi.", 1)
		return err
	})
}

// testHungReplaced checks that a unit whose process hangs is killed at its time limit, with
// its process group, and retried on a fresh process.
func (s *suite) testHungReplaced(t *testing.T) {
	pidFile := hangFile(t)
	// The limit leaves a loaded machine time to start the hung child and
	// let it write its PID before the kill, and the fresh process time to
	// start (festival loads its voice within the retry's limit); the bound
	// below only tells a kill at the limit from none at all (the child
	// sleeps 1000 s).
	counts := &Counts{}
	e := s.newEngine(t, Options{Procs: 1, Fault: HangOnce, PIDFile: pidFile, UnitTimeout: 5 * time.Second, Metrics: counts})
	start := time.Now()
	s.mustSpeak(t, e, s.voice, "Still here.", 1, 0.4, 3)
	counts.check(t, 1, 1)
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("took %s, want the hung unit killed after about 2s", d)
	}
	proctest.Exited(t, proctest.PID(t, pidFile), "child of a hung process: the process group was not killed")
}

func (s *suite) testHungEverywhere(t *testing.T) {
	e := s.newEngine(t, Options{Procs: 1, Fault: Hang, PIDFile: hangFile(t), UnitTimeout: 300 * time.Millisecond})
	_, _, err := e.Synthesize(t.Context(), s.voice, "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "hung") {
		t.Fatalf("err = %v, want hung", err)
	}
}

func (s *suite) testCrashReplaced(t *testing.T) {
	counts := &Counts{}
	e := s.newEngine(t, Options{Procs: 1, Fault: CrashOnce, Metrics: counts})
	s.mustSpeak(t, e, s.voice, "Still here.", 1, 0.4, 3)
	counts.check(t, 1, 0)
}

// testCrashEverywhere checks that the error of a unit that always crashes says so, with the
// process's stderr.
func (s *suite) testCrashEverywhere(t *testing.T) {
	e := s.newEngine(t, Options{Procs: 1, Fault: Crash})
	_, _, err := e.Synthesize(t.Context(), s.voice, "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the process killed, with its stderr", err)
	}
}

func (s *suite) testClose(t *testing.T) {
	e := s.newEngine(t, Options{Procs: 1})
	s.mustSpeak(t, e, s.voice, "Hello there.", 1, 0.5, 3)
	if err := e.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Ping(t.Context()); !errors.Is(err, s.cfg.ErrClosed) {
		t.Errorf("Ping after Close: err = %v, want %v", err, s.cfg.ErrClosed)
	}
	if _, _, err := e.Synthesize(t.Context(), s.voice, "Hi.", 1); !errors.Is(err, s.cfg.ErrClosed) {
		t.Errorf("after Close: err = %v, want %v", err, s.cfg.ErrClosed)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// testCloseStopsUnits closes the engine while a unit hangs: the unit's caller gets the closed
// error at once, and the process is killed with its group.
func (s *suite) testCloseStopsUnits(t *testing.T) {
	pidFile := hangFile(t)
	e := s.newEngine(t, Options{Procs: 1, Fault: Hang, PIDFile: pidFile, UnitTimeout: time.Minute})
	done := make(chan error, 1)
	go func() {
		_, _, err := e.Synthesize(t.Context(), s.voice, "Hi.", 1)
		done <- err
	}()
	pid := proctest.PID(t, pidFile)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, s.cfg.ErrClosed) {
			t.Errorf("err = %v, want %v", err, s.cfg.ErrClosed)
		}
	case <-time.After(10 * time.Second): // far below the unit's minute: it did not wait for it
		t.Fatal("Synthesize still running 10s after Close")
	}
	proctest.Exited(t, pid, "child of a unit's process running at Close")
}

// FaultyCommand returns the path of a shell script that stands in for program, misbehaving as
// opts.Fault says and otherwise running program with its arguments; or program itself when
// there is no fault. It serves engines that run one process per unit.
func FaultyCommand(t *testing.T, program string, opts Options) string {
	t.Helper()
	var fault string
	switch opts.Fault {
	case NoFault:
		return program
	case HangOnce, Hang:
		if opts.PIDFile == "" {
			t.Fatal("enginetest: a hang needs Options.PIDFile")
		}
		// The shell waits for its child, which the kill must reach too.
		fault = "sh -c 'echo $$ > " + opts.PIDFile + "; exec sleep 1000'"
	case CrashOnce, Crash:
		fault = "echo boom >&2; kill -9 $$"
	}
	if opts.Fault == HangOnce || opts.Fault == CrashOnce {
		fault = "if mkdir " + filepath.Join(t.TempDir(), "started") + " 2>/dev/null; then " + fault + "; fi"
	}
	return proctest.Script(t, fault+"\nexec "+program+` "$@"`)
}

// Proc returns the process options an engine takes for o: its Procs, Metrics, Sandbox and
// time limits (see Timeouts).
func (o Options) Proc() proc.Options {
	p := proc.Options{Procs: o.Procs, Metrics: o.Metrics, Sandbox: o.Sandbox}
	p.UnitTimeout, p.CharTimeout = o.Timeouts()
	return p
}

// TempDir returns where an engine that writes scratch files makes its scratch directory:
// "tmp" in DataDir, or empty (the engine's default) when there is no DataDir.
func (o Options) TempDir() string {
	if o.DataDir == "" {
		return ""
	}
	return filepath.Join(o.DataDir, "tmp")
}

// Must returns the engine newEngine makes of opts, closed when the test ends; a failure to
// make it or to close it fails the test. The caller checks first that the engine's program is
// installed (proctest.NeedProgram).
func Must[O any, E interface{ Close() error }](tb testing.TB, newEngine func(O) (E, error), opts O) E {
	tb.Helper()
	e, err := newEngine(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Error(err)
		}
	})
	return e
}

// BenchSentence is the sentence the engines' benchmarks speak.
const BenchSentence = "The central library reopened on Monday after eighteen months of renovation work."

// BenchUnit measures the per-unit latency of the engines newEngine makes, speaking
// BenchSentence in voice, unsandboxed and sandboxed: newEngine gets one process and, in the
// second run, a sandbox.
func BenchUnit(b *testing.B, voice string, newEngine func(b *testing.B, opts proc.Options) pipeline.Synthesizer) {
	for _, sandboxed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(b *testing.B) {
			opts := proc.Options{Procs: 1}
			if sandboxed {
				opts.Sandbox = proctest.Sandbox(b)
			}
			e := newEngine(b, opts)
			for b.Loop() {
				if _, _, err := e.Synthesize(b.Context(), voice, BenchSentence, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchStartup measures what a long-lived process would save of a unit's latency: running
// the engine's program, argv, on empty text, directly and not through internal/proc, as the
// baseline it is. If the program is not installed it calls proctest.Missing, with install.
func BenchStartup(b *testing.B, install string, argv ...string) {
	proctest.NeedProgram(b, argv[0], install)
	for b.Loop() {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
