package espeak_test

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/espeak"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// mustEngine returns an Engine, closed when the test ends. If espeak-ng is not installed it
// skips the test, or fails it under NARRATOR_TEST_FULL=1.
func mustEngine(tb testing.TB, opts espeak.Options) *espeak.Engine {
	tb.Helper()
	proctest.NeedProgram(tb, "espeak-ng", "apt-get install espeak-ng")
	e, err := espeak.New(opts)
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
		o := espeak.Options{Options: proc.Options{Procs: opts.Procs, Metrics: opts.Metrics}, Command: enginetest.FaultyCommand(t, "espeak-ng", opts)}
		o.UnitTimeout, o.CharTimeout = opts.Timeouts()
		o.Sandbox = opts.Sandbox
		return mustEngine(t, o)
	}
	enginetest.Run(t, newEngine, enginetest.Config{
		Engine:     narrator.EngineEspeak,
		SampleRate: 22050,
		Voices: []enginetest.Voice{
			{Name: "en-us"},
			{Name: "en-us+f3"},
			{Name: "de+f3", Text: "Der Gemeinderat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen."},
			{Name: "fr-fr+m3", Text: "Le conseil municipal a approuvé mardi le budget de la nouvelle bibliothèque."},
		},
		ErrClosed: espeak.ErrClosed,
	})
}

const benchSentence = "The central library reopened on Monday after eighteen months of renovation work."

// BenchmarkUnit is the per-unit latency: one espeak-ng process, start to wave, unsandboxed
// and sandboxed.
func BenchmarkUnit(b *testing.B) {
	for _, sandboxed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(b *testing.B) {
			opts := espeak.Options{Options: proc.Options{Procs: 1}}
			if sandboxed {
				opts.Sandbox = proctest.Sandbox(b)
			}
			e := mustEngine(b, opts)
			for b.Loop() {
				if _, _, err := e.Synthesize(b.Context(), "en-us", benchSentence, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStartup is the part of a unit's latency that a long-lived process would save:
// running espeak-ng on empty text. It runs espeak-ng directly, not through internal/proc, as
// the baseline it is.
func BenchmarkStartup(b *testing.B) {
	mustEngine(b, espeak.Options{Options: proc.Options{Procs: 1}})
	for b.Loop() {
		if out, err := exec.Command("espeak-ng", "-v", "en-us", "-q", "").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}
