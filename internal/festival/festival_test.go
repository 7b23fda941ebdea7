package festival_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

const voice = festival.DefaultVoice

// mustEngine returns an Engine, closed when the test ends. If festival or its HTS voice is not
// installed it skips the test, or fails it under NARRATOR_TEST_FULL=1.
func mustEngine(tb testing.TB, opts festival.Options) *festival.Engine {
	tb.Helper()
	proctest.NeedProgram(tb, "festival", "apt-get install festival festvox-us-slt-hts")
	if _, err := os.Stat("/usr/share/festival/voices/us/cmu_us_slt_arctic_hts"); err != nil {
		proctest.Missing(tb, "festival HTS voice", "apt-get install festvox-us-slt-hts")
	}
	return enginetest.Must(tb, festival.New, opts)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	newEngine := func(t *testing.T, opts enginetest.Options) enginetest.Engine {
		return mustEngine(t, festival.Options{Options: opts.Proc(), Command: faultyFestival(t, opts), TempDir: opts.TempDir()})
	}
	enginetest.Run(t, newEngine, enginetest.Config{
		Engine:     narrator.EngineFestival,
		SampleRate: 32000,
		Voices:     []enginetest.Voice{{Name: voice}},
		ErrClosed:  festival.ErrClosed,
	})
}

// faultyFestival returns the command line of a festival whose utt.synth misbehaves as
// opts.Fault says, in its first process only for the faults that happen once; or nil, the
// real festival, for no fault. festival's process lives on between units, so the fault is
// loaded as Scheme rather than put in a wrapper script.
func faultyFestival(t *testing.T, opts enginetest.Options) []string {
	t.Helper()
	var scheme string
	switch opts.Fault {
	case enginetest.NoFault:
		return nil
	case enginetest.HangOnce, enginetest.Hang:
		// festival waits for the shell of system, its child, which the kill must reach too.
		scheme = `(define (utt.synth u) (system "echo $$ > ` + opts.PIDFile + `; exec sleep 1000"))`
	case enginetest.CrashOnce, enginetest.Crash:
		scheme = `(define (utt.synth u) (format stderr "boom\n") (system "kill -9 $PPID"))`
	}
	dir := t.TempDir()
	scm := filepath.Join(dir, "fault.scm")
	if err := os.WriteFile(scm, []byte(scheme), 0o644); err != nil {
		t.Fatal(err)
	}
	if opts.Fault == enginetest.Hang || opts.Fault == enginetest.Crash {
		return []string{"festival", "--pipe", scm}
	}
	return []string{proctest.Script(t, "if mkdir "+filepath.Join(dir, "started")+" 2>/dev/null; then exec festival --pipe "+scm+"; fi\nexec festival --pipe")}
}

func TestStartHangs(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, festival.Options{Options: proc.Options{Procs: 1}, Command: []string{"sleep", "1000"}, StartTimeout: 300 * time.Millisecond})
	_, _, err := e.Synthesize(t.Context(), voice, "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "hung") {
		t.Fatalf("err = %v, want hung", err)
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

const benchSentence = enginetest.BenchSentence

// BenchmarkUnitWarm is the per-unit latency of the pool: a running process with its voice
// loaded, unsandboxed and sandboxed.
func BenchmarkUnitWarm(b *testing.B) {
	enginetest.BenchUnit(b, voice, func(b *testing.B, opts proc.Options) pipeline.Synthesizer {
		e := mustEngine(b, festival.Options{Options: opts})
		if err := e.Start(b.Context(), voice); err != nil {
			b.Fatal(err)
		}
		return e
	})
}

// BenchmarkUnitFreshProcess is the per-unit latency if every unit started its own festival
// process and loaded the voice, as running text2wave per sentence would.
func BenchmarkUnitFreshProcess(b *testing.B) {
	mustEngine(b, festival.Options{Options: proc.Options{Procs: 1}}) // skips if festival is missing
	for b.Loop() {
		e, err := festival.New(festival.Options{Options: proc.Options{Procs: 1}})
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
	mustEngine(b, festival.Options{Options: proc.Options{Procs: 1}})
	for b.Loop() {
		e, err := festival.New(festival.Options{Options: proc.Options{Procs: 1}})
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

// TestDataDir synthesises with the scratch directory inside a data directory whose name is
// not ASCII, as the server lays it out: the wave's path must reach festival as it is, not
// folded like the text. In a sandbox that hides the data directory, festival still writes
// its waves, in the scratch directory bound into the sandbox.
func TestDataDir(t *testing.T) {
	t.Parallel()
	for _, sandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(t *testing.T) {
			t.Parallel()
			data := filepath.Join(t.TempDir(), "Données")
			dir := filepath.Join(data, "tmp")
			if err := os.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			opts := festival.Options{Options: proc.Options{Procs: 1}, TempDir: dir}
			if sandboxed {
				opts.Sandbox = proctest.Sandbox(t, data)
			}
			e := mustEngine(t, opts)
			if err := e.Start(t.Context(), voice); err != nil {
				t.Fatal(err)
			}
			samples, rate, err := e.Synthesize(t.Context(), voice, "Hello from a data directory with an accent.", 1)
			if err != nil {
				t.Fatal(err)
			}
			if d := float64(len(samples)) / float64(rate); d < 1 {
				t.Errorf("speech lasts %.2f s, want over 1 s", d)
			}
		})
	}
}
