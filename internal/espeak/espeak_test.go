package espeak_test

import (
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/espeak"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// mustEngine returns an Engine, closed when the test ends. If espeak-ng is not installed it
// skips the test, or fails it under NARRATOR_TEST_FULL=1.
func mustEngine(tb testing.TB, opts espeak.Options) *espeak.Engine {
	tb.Helper()
	proctest.NeedProgram(tb, "espeak-ng", "apt-get install espeak-ng")
	return enginetest.Must(tb, espeak.New, opts)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	newEngine := func(t *testing.T, opts enginetest.Options) enginetest.Engine {
		return mustEngine(t, espeak.Options{Options: opts.Proc(), Command: enginetest.FaultyCommand(t, "espeak-ng", opts)})
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

// BenchmarkUnit is the per-unit latency: one espeak-ng process, start to wave, unsandboxed
// and sandboxed.
func BenchmarkUnit(b *testing.B) {
	enginetest.BenchUnit(b, "en-us", func(b *testing.B, opts proc.Options) pipeline.Synthesizer {
		return mustEngine(b, espeak.Options{Options: opts})
	})
}

// BenchmarkStartup is the part of a unit's latency that a long-lived process would save
// (enginetest.BenchStartup).
func BenchmarkStartup(b *testing.B) {
	enginetest.BenchStartup(b, "apt-get install espeak-ng", "espeak-ng", "-v", "en-us", "-q", "")
}
