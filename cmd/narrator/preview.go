package main

import (
	"context"
	"fmt"
	"io"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/web"
)

var _ web.VoicePreviewer = voicePreviewer{}

// voicePreviewer speaks the dashboard's voice previews with the running
// engines, in the output format of every audio.
type voicePreviewer struct {
	engines map[string]pipeline.Synthesizer
}

// PreviewVoice implements web.VoicePreviewer.
func (p voicePreviewer) PreviewVoice(ctx context.Context, v narrator.Voice, text string, w io.Writer) error {
	eng := p.engines[v.Engine]
	if eng == nil {
		return fmt.Errorf("preview %s: engine %s is not running", v.Name, v.Engine)
	}
	samples, rate, err := eng.Synthesize(ctx, v.EngineVoice, text, 1)
	if err != nil {
		return fmt.Errorf("preview %s: %w", v.Name, err)
	}
	if rate != pipeline.SampleRate {
		samples = pcm.Resample(samples, rate, pipeline.SampleRate)
	}
	samples = pcm.Normalize(pcm.TrimSilence(samples, pipeline.SampleRate), pipeline.SampleRate, pcm.DefaultTargetDBFS)
	enc, err := mp3.NewEncoder(ctx, w, mp3.Options{SampleRate: pipeline.SampleRate, Bitrate: pipeline.Bitrate})
	if err != nil {
		return fmt.Errorf("preview %s: start encoder: %w", v.Name, err)
	}
	if err := enc.Write(samples); err != nil {
		_ = enc.Close()
		return fmt.Errorf("preview %s: encode: %w", v.Name, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("preview %s: encode: %w", v.Name, err)
	}
	return nil
}
