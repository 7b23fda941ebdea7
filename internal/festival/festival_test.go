package festival_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/festival"
)

const voice = festival.DefaultVoice

// mustEngine returns an Engine with the real festival, or skips the test if festival or its HTS
// voice is not installed.
func mustEngine(tb testing.TB, opts festival.Options) *festival.Engine {
	tb.Helper()
	if _, err := exec.LookPath("festival"); err != nil {
		tb.Skip("festival not installed (apt-get install festival festvox-us-slt-hts)")
	}
	if _, err := os.Stat("/usr/share/festival/voices/us/cmu_us_slt_arctic_hts"); err != nil {
		tb.Skip("festival HTS voice not installed (apt-get install festvox-us-slt-hts)")
	}
	e, err := festival.New(opts)
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

// mustSpeech checks that samples hold audible speech lasting between minSec and maxSec.
func mustSpeech(tb testing.TB, samples []int16, rate int, minSec, maxSec float64) {
	tb.Helper()
	if rate != 32000 {
		tb.Errorf("sample rate = %d, want 32000", rate)
	}
	if rate <= 0 {
		return
	}
	sec := float64(len(samples)) / float64(rate)
	if sec < minSec || sec > maxSec {
		tb.Errorf("duration = %.2fs, want %.1f..%.1fs", sec, minSec, maxSec)
	}
	if r := rms(samples); r < 300 {
		tb.Errorf("RMS = %.0f, want speech (> 300)", r)
	}
}

func rms(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(max(len(s), 1)))
}

// fakeFestival writes a script that runs the real festival, the first time with extra Scheme
// loaded (e.g. a utt.synth that hangs), and afterwards plain.
func fakeFestival(tb testing.TB, firstScheme string) []string {
	tb.Helper()
	dir := tb.TempDir()
	scm := filepath.Join(dir, "first.scm")
	if err := os.WriteFile(scm, []byte(firstScheme), 0o644); err != nil {
		tb.Fatal(err)
	}
	script := filepath.Join(dir, "festival.sh")
	body := "#!/bin/sh\nif mkdir " + filepath.Join(dir, "started") + " 2>/dev/null; then exec festival --pipe " + scm + "; fi\nexec festival --pipe\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		tb.Fatal(err)
	}
	return []string{script}
}

func TestSynthesize(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 1})
	tests := []struct {
		name           string
		text           string
		rate           float64
		minSec, maxSec float64
	}{
		{"sentence", "The council approved the budget for the new library on Tuesday.", 1, 2.5, 6},
		{"faster", "The council approved the budget for the new library on Tuesday.", 1.5, 1.5, 3.5},
		{"slower", "The council approved the budget for the new library on Tuesday.", 0.7, 3.5, 8},
		{"nasty", `He said "no (way)" \ back\slash; it's naïve — café, “quoted” ‘too’ 日本 )) (car 1) NARRATOR_DONE 1 <speak>x</speak> "`, 1, 2, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, rate, err := e.Synthesize(t.Context(), voice, tt.text, tt.rate)
			if err != nil {
				t.Fatal(err)
			}
			mustSpeech(t, samples, rate, tt.minSec, tt.maxSec)
		})
	}
}

func TestSynthesizeEmpty(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 1})
	samples, rate, err := e.Synthesize(t.Context(), voice, "  ", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rate != 32000 || len(samples) > rate/10 {
		t.Errorf("got %d samples at %d Hz, want almost none at 32000 Hz", len(samples), rate)
	}
}

func TestSynthesizeBadVoice(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 1})
	for _, v := range []string{"no_such_voice", `x") (system "touch /tmp/pwned`, ""} {
		if _, _, err := e.Synthesize(t.Context(), v, "Hello.", 1); err == nil {
			t.Errorf("voice %q: no error", v)
		}
	}
	// The engine still works afterwards.
	samples, rate, err := e.Synthesize(t.Context(), voice, "Hello there.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 0.5, 3)
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 2})
	texts := []string{
		"One small step for a man.",
		"The quick brown fox jumps over the lazy dog.",
		"It was the best of times, it was the worst of times.",
		"Call me Ishmael.",
		"All happy families are alike.",
		"The sky above the port was the color of television.",
	}
	var wg sync.WaitGroup
	got := make([][]int16, len(texts))
	for i, text := range texts {
		wg.Go(func() {
			samples, rate, err := e.Synthesize(t.Context(), voice, text, 1)
			if err != nil {
				t.Error(err)
				return
			}
			mustSpeech(t, samples, rate, 0.5, 6)
			got[i] = samples
		})
	}
	wg.Wait()
	// Same text, same audio: units do not get mixed up between goroutines.
	again, _, err := e.Synthesize(t.Context(), voice, texts[3], 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(got[3]) {
		t.Errorf("%q: %d samples, earlier %d", texts[3], len(again), len(got[3]))
	}
}

func TestHungProcessReplaced(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	cmd := fakeFestival(t, `(define (utt.synth u) (system "echo $$ > `+pidFile+`; exec sleep 1000"))`)
	e := mustEngine(t, festival.Options{Procs: 1, Command: cmd, UnitTimeout: time.Second, CharTimeout: time.Millisecond})
	start := time.Now()
	samples, rate, err := e.Synthesize(t.Context(), voice, "Still here.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 0.4, 3)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s, want the hung unit killed after about 1s", d)
	}
	// The kill reached the whole process group, festival's child included.
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !mustExit(t, pid, 2*time.Second) {
		t.Errorf("festival's child %d (sleep 1000) still runs", pid)
	}
}

func TestHungEverywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scm := filepath.Join(dir, "hang.scm")
	if err := os.WriteFile(scm, []byte(`(define (utt.synth u) (system "sleep 1000"))`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := mustEngine(t, festival.Options{Procs: 1, Command: []string{"festival", "--pipe", scm}, UnitTimeout: 500 * time.Millisecond})
	_, _, err := e.Synthesize(t.Context(), voice, "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "hung") {
		t.Fatalf("err = %v, want hung", err)
	}
}

func TestCrashedProcessReplaced(t *testing.T) {
	t.Parallel()
	cmd := fakeFestival(t, `(define (utt.synth u) (system "kill -9 $PPID"))`)
	e := mustEngine(t, festival.Options{Procs: 1, Command: cmd})
	samples, rate, err := e.Synthesize(t.Context(), voice, "Still here.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 0.4, 3)
}

func TestCrashEverywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scm := filepath.Join(dir, "crash.scm")
	if err := os.WriteFile(scm, []byte(`(define (utt.synth u) (format stderr "boom\n") (system "kill -9 $PPID"))`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := mustEngine(t, festival.Options{Procs: 1, Command: []string{"festival", "--pipe", scm}})
	_, _, err := e.Synthesize(t.Context(), voice, "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the process killed, with its stderr", err)
	}
}

func TestStartHangs(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 1, Command: []string{"sleep", "1000"}, StartTimeout: 300 * time.Millisecond})
	_, _, err := e.Synthesize(t.Context(), voice, "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "hung") {
		t.Fatalf("err = %v, want hung", err)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 1})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	long := strings.Repeat("This sentence is long enough to keep the engine busy for a while. ", 20)
	start := time.Now()
	_, _, err := e.Synthesize(ctx, voice, long, 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %s, want soon after cancel", d)
	}
	// The pool recovers.
	samples, rate, err := e.Synthesize(t.Context(), voice, "Back again.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 0.4, 3)
}

func TestClose(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 1})
	if _, _, err := e.Synthesize(t.Context(), voice, "Hi.", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Synthesize(t.Context(), voice, "Hi.", 1); !errors.Is(err, festival.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`a\b`, `"a\\b"`},
		{"two\nlines\t", `"two lines "`},
		{`(car 1)`, `"(car 1)"`},
		{"café naïve", `"cafe naive"`},
		{"“q” ‘s’", `"\"q\" 's'"`},
		{"a—b", `"a, b"`},
		{"日本", `"  "`},
	}
	for _, tt := range tests {
		if got := festival.Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// mustExit reports whether process pid is gone (or a zombie) within d.
func mustExit(tb testing.TB, pid int, d time.Duration) bool {
	tb.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return true
		}
	}
	return false
}

const benchSentence = "The central library reopened on Monday after eighteen months of renovation work."

// BenchmarkUnitWarm is the per-unit latency of the pool: a running process with its voice
// loaded.
func BenchmarkUnitWarm(b *testing.B) {
	e := mustEngine(b, festival.Options{Procs: 1})
	if err := e.Start(b.Context(), voice); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := e.Synthesize(b.Context(), voice, benchSentence, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnitFreshProcess is the per-unit latency if every unit started its own festival
// process and loaded the voice, as running text2wave per sentence would.
func BenchmarkUnitFreshProcess(b *testing.B) {
	mustEngine(b, festival.Options{Procs: 1}) // skips if festival is missing
	for b.Loop() {
		e, err := festival.New(festival.Options{Procs: 1})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := e.Synthesize(b.Context(), voice, benchSentence, 1); err != nil {
			b.Fatal(err)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartup is the cost of starting one festival process and loading the HTS voice.
func BenchmarkStartup(b *testing.B) {
	mustEngine(b, festival.Options{Procs: 1})
	for b.Loop() {
		e, err := festival.New(festival.Options{Procs: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Start(b.Context(), voice); err != nil {
			b.Fatal(err)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCatalogVoices speaks a word in every festival voice of the catalog.
func TestCatalogVoices(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Procs: 1})
	for _, v := range narrator.Voices() {
		if v.Engine != narrator.EngineFestival {
			continue
		}
		samples, rate, err := e.Synthesize(t.Context(), v.EngineVoice, "Testing.", 1)
		if err != nil {
			t.Fatalf("%s: %v", v.Label(), err)
		}
		mustSpeech(t, samples, rate, 0.3, 3)
	}
}

// BenchmarkUnitParallel is the wall time per unit with a warm pool of one process per CPU, all
// busy: the throughput a pipeline gets.
func BenchmarkUnitParallel(b *testing.B) {
	e := mustEngine(b, festival.Options{})
	if err := e.Start(b.Context(), voice); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(1)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := e.Synthesize(context.Background(), voice, benchSentence, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
