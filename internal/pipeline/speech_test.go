package pipeline_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/pipeline"
)

// gateEngine is toneEngine that records the rates it is asked for and
// speaks a text holding "last" only once gate is closed.
type gateEngine struct {
	toneEngine
	gate  chan struct{}
	mu    sync.Mutex
	rates []float64
}

func (e *gateEngine) Synthesize(ctx context.Context, voice, text string, rate float64) ([]int16, int, error) {
	e.mu.Lock()
	e.rates = append(e.rates, rate)
	e.mu.Unlock()
	if strings.Contains(text, "last") {
		select {
		case <-e.gate:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	return e.toneEngine.Synthesize(ctx, voice, text, rate)
}

// firstWrite closes opened at its first non-empty write.
type firstWrite struct {
	bytes.Buffer
	once   sync.Once
	opened chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.once.Do(func() { close(w.opened) })
	}
	return w.Buffer.Write(p)
}

// speakGated speaks sp with a gateEngine as flite (and rules, if any) on
// a pipeline of two workers, opening the gate at the first write, so
// that a text holding "last" is spoken only after the first bytes were
// written. It returns the engine and what was written.
func speakGated(t *testing.T, rules ruleList, sp narrator.Speech) (*gateEngine, *firstWrite) {
	t.Helper()
	eng := &gateEngine{gate: make(chan struct{})}
	cfg := pipeline.Config{Engines: map[string]pipeline.Synthesizer{narrator.EngineFlite: eng}, Workers: 2}
	if rules != nil {
		cfg.Rules = rules
	}
	p := pipeline.New(cfg)
	t.Cleanup(func() { p.Close() })
	out := &firstWrite{opened: make(chan struct{})}
	go func() {
		<-out.opened
		close(eng.gate)
	}()
	// Guards against a hang if nothing were written before the gated
	// text: not a measure of speed.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := p.Speak(ctx, sp, out); err != nil {
		t.Fatal(err)
	}
	return eng, out
}

// TestSpeak checks each format: the audio decodes, the sentences are
// written as they are spoken (the last sentence is spoken only after the
// first bytes were written), the project's rules and the speed apply.
func TestSpeak(t *testing.T) {
	t.Parallel()
	voice, _ := narrator.LookupVoice("en_US", "Kevin")
	const text = "We run nginx in production. Here is a second sentence. And this is the last one."
	for _, format := range narrator.SpeechFormats() {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			eng, out := speakGated(t, ruleList{{Phrase: "nginx", Say: "engine x"}},
				narrator.Speech{ProjectID: 1, Voice: voice, Text: text, Speed: 1.5, Format: format})
			calls := eng.calls()
			// The workers take sentences in parallel: any order.
			if len(calls) != 3 || !slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "We run engine x") }) {
				t.Errorf("engine got %q", calls)
			}
			for _, r := range eng.rates {
				if r != 1.5 {
					t.Errorf("rates %v, want 1.5 each", eng.rates)
					break
				}
			}
			// The tone engine speaks about 15 characters a second.
			var seconds float64
			switch format {
			case narrator.SpeechMP3:
				seconds = float64(len(pcmtest.DecodeMP3(t, out.Bytes(), pipeline.SampleRate))) / pipeline.SampleRate
			case narrator.SpeechWAV:
				samples, rate, err := pcm.DecodeWAV(bytes.NewReader(out.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				seconds = float64(len(samples)) / float64(rate)
			case narrator.SpeechPCM:
				if out.Len()%2 != 0 {
					t.Fatalf("%d bytes of 16-bit PCM", out.Len())
				}
				samples := make([]int16, out.Len()/2)
				if err := binary.Read(bytes.NewReader(out.Bytes()), binary.LittleEndian, samples); err != nil {
					t.Fatal(err)
				}
				seconds = float64(len(samples)) / narrator.SpeechPCMRate
			}
			if want := float64(len(strings.Join(calls, ""))) / 15; seconds < want || seconds > want+3 {
				t.Errorf("%.2f s of audio, want %.2f s of speech and pauses", seconds, want)
			}
		})
	}
}

// TestSpeakLongFirstSentence checks that a long first sentence is spoken
// in two pieces, split at its comma, and that the first bytes are written
// once the first piece is spoken: the second is spoken only after them.
func TestSpeakLongFirstSentence(t *testing.T) {
	t.Parallel()
	voice, _ := narrator.LookupVoice("en_US", "Kevin")
	const (
		head = "The small ferry that links the old harbour with the island village went back into service on Monday morning,"
		tail = "after the last four months in the shipyard."
	)
	for _, format := range narrator.SpeechFormats() {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			// tail holds "last": it is spoken only after the first bytes.
			eng, _ := speakGated(t, nil, narrator.Speech{Voice: voice, Text: head + " " + tail, Format: format})
			calls := eng.calls()
			slices.Sort(calls)
			if diff := cmp.Diff([]string{head, tail}, calls); diff != "" {
				t.Errorf("engine calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderLongFirstSentence checks that a rendering, unlike a speech,
// speaks a long first sentence whole: its units, and so its chunks and
// transcript, are the article's.
func TestRenderLongFirstSentence(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	const text = "The small ferry that links the old harbour with the island village went back into service on Monday morning, after four months in the shipyard."
	if _, err := b.pipe.Render(t.Context(), &narrator.Audio{Body: text}, b.proj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{text}, b.engine.calls()); diff != "" {
		t.Errorf("engine calls (-want +got):\n%s", diff)
	}
}

// TestSpeakRefuses checks what Speak refuses before writing anything.
func TestSpeakRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	kevin, _ := narrator.LookupVoice("en_US", "Kevin")
	p := pipeline.New(pipeline.Config{Engines: map[string]pipeline.Synthesizer{narrator.EngineFlite: b.engine}, MaxDuration: time.Minute})
	t.Cleanup(func() { p.Close() })
	sally, _ := narrator.LookupVoice("en_US", "Sally")
	tests := []struct {
		name string
		s    narrator.Speech
	}{
		{"format", narrator.Speech{Voice: kevin, Text: "Hello.", Format: "opus"}},
		{"engine not running", narrator.Speech{Voice: sally, Text: "Hello.", Format: "mp3"}},
		{"nothing to read", narrator.Speech{Voice: kevin, Text: " <p></p> ", Format: "mp3"}},
		{"too long", narrator.Speech{Voice: kevin, Text: strings.Repeat("A sentence of words. ", 200), Format: "mp3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := p.Speak(t.Context(), tt.s, &out)
			if narrator.ErrorCode(err) != narrator.EINVALID || out.Len() != 0 {
				t.Errorf("error %v (code %q), %d bytes written; want EINVALID and nothing", err, narrator.ErrorCode(err), out.Len())
			}
		})
	}
}
