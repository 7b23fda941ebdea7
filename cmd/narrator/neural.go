package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/metrics"
	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/voicecat"
)

// startNeural adds the neural engine to engines, under both its names, and its closing to
// *closeAll. Without the phonemiser's helper no neural voice can speak: the node logs why and
// runs without them; without --onnxruntime the engine refuses them with a message naming the
// flag.
func startNeural(cfg config.Config, sb *proc.Sandbox, voices *voicecat.Source, media neural.FileSource, logger *slog.Logger, m *metrics.Metrics, engines map[string]pipeline.Synthesizer, closeAll *func()) error {
	if cfg.EngineStandIn > 0 {
		for _, name := range []string{narrator.EnginePiper, narrator.EngineKokoro} {
			engines[name] = engines[narrator.EngineFestival]
		}
		return nil
	}
	// The phonemiser's helper, narrator-espeak, is looked for beside narrator, then on the
	// PATH.
	phon, err := phonemize.New(phonemize.Options{Options: proc.Options{Procs: cfg.UnitWorkers, Sandbox: sb, Logger: logger, Metrics: m.Engine("phonemize")}})
	if err != nil {
		logger.Warn("neural voices are off: their phonemiser's helper narrator-espeak is missing (scripts/deps.sh builds it beside narrator)", "err", err)
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		phon.Close()
		return err
	}
	fault, err := worker.ParseFault(cfg.ONNXFault)
	if err != nil {
		phon.Close()
		return fmt.Errorf("%s: %w", config.EnvTestONNXFault, err)
	}
	if cfg.ONNXRuntime == "" {
		logger.Info("neural voices are off until --onnxruntime names the onnxruntime library")
	}
	eng, err := neural.New(neural.Options{
		Voices: voices, Files: media, CacheDir: cfg.VoiceCacheDir(), Phonemizer: phon,
		Command: []string{exe, "onnx-worker"}, Library: cfg.ONNXRuntime,
		// One worker per model, running as many sentences at once as the node synthesises,
		// one thread each: see docs/speech.md.
		Workers: 1, Runs: cfg.UnitWorkers, Threads: 1,
		Sandbox: sb, Fault: fault, Logger: logger, Metrics: m.Engine("neural"),
	})
	if err != nil {
		phon.Close()
		return err
	}
	engines[narrator.EnginePiper] = eng
	engines[narrator.EngineKokoro] = eng
	prev := *closeAll
	*closeAll = func() {
		prev()
		if err := eng.Close(); err != nil {
			logger.Warn("close the neural engine", "err", err)
		}
		phon.Close()
	}
	return nil
}
