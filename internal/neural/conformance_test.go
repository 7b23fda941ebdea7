package neural_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/proc"
)

// conformanceVoices are the voices the engine suite speaks in: a Piper voice, which speaks
// every test and times its words, and a Kokoro one. Their tiny models are paced, so that the speaking rate changes
// the length of the samples as a real voice's does, and each value lasts a few milliseconds,
// so that a sentence lasts seconds.
func conformanceVoices() []*narrator.InstalledVoice {
	return []*narrator.InstalledVoice{
		{Voice: narrator.Voice{Name: "Tiny", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-tiny", Quality: "medium"}},
		{Voice: narrator.Voice{Name: "Heart", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EngineKokoro, EngineVoice: "kokoro-af_heart"}, Speaker: "af_heart"},
	}
}

// newConformanceEngine makes an engine for the suite over a real media store, the real
// phonemiser and onnxruntime, with its faults made by the workers.
func newConformanceEngine(t *testing.T, opts enginetest.Options) enginetest.Engine {
	t.Helper()
	media, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if helperErr != nil {
		t.Fatal(helperErr)
	}
	phon, err := phonemize.New(phonemize.Options{Options: proc.Options{Procs: 2, Sandbox: opts.Sandbox}, Command: espeakHelper})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { phon.Close() })
	r := &rig{media: media, voices: &memVoices{}, phon: phon}
	voices := conformanceVoices()
	// The Piper voice's model is aligned, as voices install makes it: it gives word timings.
	piper, _, err := neural.MarkDurations(onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: 1}))
	if err != nil {
		t.Fatal(err)
	}
	voices[0].Files = []narrator.VoiceFile{r.put(t, narrator.VoiceFileModel, "tiny.onnx", piper), r.put(t, narrator.VoiceFileConfig, "tiny.onnx.json", piperConfig(t, nil))}
	kokoro := onnxtest.Kokoro(onnxtest.KokoroOptions{Repeat: 250, Paced: true})
	voices[1].Files = []narrator.VoiceFile{r.put(t, narrator.VoiceFileModel, "kokoro.onnx", kokoro), r.put(t, narrator.VoiceFileStyles, "voices.bin", kokoroStyles(t, "af_heart"))}
	for _, v := range voices {
		r.install(v)
	}
	cache := filepath.Join(t.TempDir(), "voices")
	if opts.DataDir != "" {
		cache = filepath.Join(opts.DataDir, "voices")
	}
	if err := os.MkdirAll(cache, 0o750); err != nil {
		t.Fatal(err)
	}
	var fault worker.Fault
	switch opts.Fault {
	case enginetest.HangOnce:
		fault = worker.Fault{HangAt: 1, PIDFile: opts.PIDFile, Once: true}
	case enginetest.Hang:
		fault = worker.Fault{HangAt: 1, PIDFile: opts.PIDFile}
	case enginetest.CrashOnce:
		fault = worker.Fault{CrashAt: 1, Once: true}
	case enginetest.Crash:
		fault = worker.Fault{CrashAt: 1}
	}
	unit, perChar := opts.Timeouts()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e, err := neural.New(neural.Options{
		Voices: r.voices, Files: media, CacheDir: cache, Phonemizer: phon,
		Command: []string{exe, workerArg}, Library: onnxtest.Library(t),
		Workers: max(opts.Procs, 1), Runs: 1, Sandbox: opts.Sandbox, Fault: fault,
		UnitTimeout: unit, CharTimeout: perChar, Metrics: opts.Metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestConformance(t *testing.T) {
	t.Parallel()
	enginetest.Run(t, newConformanceEngine, enginetest.Config{
		Engine:     narrator.EnginePiper,
		SampleRate: 22050,
		Voices:     []enginetest.Voice{{Name: "piper-tiny"}, {Name: "kokoro-af_heart", SampleRate: 24000}},
		ErrClosed:  neural.ErrClosed,
		Catalog:    narrator.NewCatalog(conformanceVoices()),
	})
}
