package flite_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// mustEngine returns an Engine, closed when the test ends. If flite is not installed it skips
// the test, or fails it under NARRATOR_TEST_FULL=1.
func mustEngine(tb testing.TB, opts flite.Options) *flite.Engine {
	tb.Helper()
	proctest.NeedProgram(tb, "flite", "apt-get install flite")
	e, err := flite.New(opts)
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

func TestConformance(t *testing.T) {
	t.Parallel()
	newEngine := func(t *testing.T, opts enginetest.Options) enginetest.Engine {
		o := flite.Options{Options: proc.Options{Procs: opts.Procs, Metrics: opts.Metrics}, Command: enginetest.FaultyCommand(t, "flite", opts)}
		o.UnitTimeout, o.CharTimeout = opts.Timeouts()
		o.Sandbox = opts.Sandbox
		if opts.DataDir != "" {
			o.TempDir = filepath.Join(opts.DataDir, "tmp")
		}
		return mustEngine(t, o)
	}
	enginetest.Run(t, newEngine, enginetest.Config{
		Engine:     narrator.EngineFlite,
		SampleRate: 16000,
		Voices: []enginetest.Voice{
			{Name: "slt"}, {Name: "rms"}, {Name: "awb"}, {Name: "kal16"}, {Name: "kal", SampleRate: 8000},
		},
		ErrClosed: flite.ErrClosed,
	})
}

func TestClean(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"two\nlines\t", "two lines "},
		{"café naïve", "cafe naive"},
		{"“q” ‘s’", `"q" 's'`},
		{"a—b", "a, b"},
		{"日本", "  "},
	}
	for _, tt := range tests {
		if got := flite.Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

const benchSentence = "The central library reopened on Monday after eighteen months of renovation work."

// BenchmarkUnit is the per-unit latency: one flite process, start to wave, unsandboxed and
// sandboxed.
func BenchmarkUnit(b *testing.B) {
	for _, sandboxed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(b *testing.B) {
			opts := flite.Options{Options: proc.Options{Procs: 1}}
			if sandboxed {
				opts.Sandbox = proctest.Sandbox(b)
			}
			e := mustEngine(b, opts)
			for b.Loop() {
				if _, _, err := e.Synthesize(b.Context(), "slt", benchSentence, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStartup is the part of a unit's latency that a long-lived process would save:
// running flite on empty text. It runs flite directly, not through internal/proc, as the
// baseline it is.
func BenchmarkStartup(b *testing.B) {
	mustEngine(b, flite.Options{Options: proc.Options{Procs: 1}})
	for b.Loop() {
		if out, err := exec.Command("flite", "-voice", "slt", "-t", "", "-o", "none").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
