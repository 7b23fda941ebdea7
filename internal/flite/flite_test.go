package flite_test

import (
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// mustEngine returns an Engine, closed when the test ends. If flite is not installed it skips
// the test, or fails it under NARRATOR_TEST_FULL=1.
func mustEngine(tb testing.TB, opts flite.Options) *flite.Engine {
	tb.Helper()
	proctest.NeedProgram(tb, "flite", "apt-get install flite")
	return enginetest.Must(tb, flite.New, opts)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	newEngine := func(t *testing.T, opts enginetest.Options) enginetest.Engine {
		return mustEngine(t, flite.Options{Options: opts.Proc(), Command: enginetest.FaultyCommand(t, "flite", opts), TempDir: opts.TempDir()})
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

// BenchmarkUnit is the per-unit latency: one flite process, start to wave, unsandboxed and
// sandboxed.
func BenchmarkUnit(b *testing.B) {
	enginetest.BenchUnit(b, "slt", func(b *testing.B, opts proc.Options) pipeline.Synthesizer {
		return mustEngine(b, flite.Options{Options: opts})
	})
}

// BenchmarkStartup is the part of a unit's latency that a long-lived process would save
// (enginetest.BenchStartup).
func BenchmarkStartup(b *testing.B) {
	enginetest.BenchStartup(b, "apt-get install flite", "flite", "-voice", "slt", "-t", "", "-o", "none")
}
