package main

import (
	"context"
	"fmt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/espeak"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/pipeline"
)

// speakClipText speaks the text of c, a spoken clip, with its voice (the
// project's body voice when none is given) as the API does: through
// pipeline.SpeakClip, with the project's pronunciation rules and
// speaking rate, on the voice's engine started for it alone. Installed
// neural voices are spoken by a server only.
func speakClipText(ctx context.Context, st dataStore, p *narrator.Project, c clipFlags) (*narrator.Clip, error) {
	cat, err := loadCatalog(ctx, st)
	if err != nil {
		return nil, err
	}
	name := *c.voice
	if name == "" {
		name = narrator.SpeechVoiceID(narrator.Voice{Language: p.Language, Name: p.BodyVoice})
	}
	voice, ok := cat.SpeechVoice(p.Language, name)
	if !ok {
		return nil, narrator.Errorf(narrator.EINVALID, "--%s-voice: no voice %q in the catalog; `narrator voices` lists them", c.kind, name)
	}
	eng, err := startClipEngine(voice)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	pipe := pipeline.New(pipeline.Config{Engines: map[string]pipeline.Synthesizer{voice.Engine: eng}, Rules: st, Workers: 1})
	defer pipe.Close()
	return pipe.SpeakClip(ctx, c.kind, narrator.Speech{ProjectID: p.ID, Voice: voice, Text: *c.text, Speed: p.Rate()})
}

// clipEngine is an engine started for one clip.
type clipEngine interface {
	pipeline.Synthesizer
	Close() error
}

// startClipEngine starts the built-in engine that speaks voice, with one
// process.
func startClipEngine(voice narrator.Voice) (clipEngine, error) {
	var (
		eng clipEngine
		err error
	)
	switch voice.Engine {
	case narrator.EngineFestival:
		eng, err = festival.New(festival.Options{})
	case narrator.EngineFlite:
		eng, err = flite.New(flite.Options{})
	case narrator.EngineEspeak:
		eng, err = espeak.New(espeak.Options{})
	default:
		return nil, narrator.Errorf(narrator.EINVALID, "voice %s is spoken by a server only (engine %s): set the clip through the API or the dashboard", voice.Name, voice.Engine)
	}
	if err != nil {
		return nil, fmt.Errorf("start engine %s (is its Debian package installed?): %w", voice.Engine, err)
	}
	return eng, nil
}
