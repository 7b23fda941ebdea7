package neural_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/proctest"
)

// TestMarkDurations patches generated Piper models: one with a single Ceil node gains its
// output as a second graph output, which onnxruntime then returns, one frame count per ID
// whose audio lasts that many hops; models with none or two are refused and keep sentence
// timings; the operator's bytes are never changed.
func TestMarkDurations(t *testing.T) {
	t.Parallel()
	for _, ceils := range []int{0, 2} {
		model := onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: ceils})
		if _, _, err := neural.MarkDurations(model); !errors.Is(err, neural.ErrNotAlignable) {
			t.Errorf("%d Ceil nodes: err %v, want ErrNotAlignable", ceils, err)
		}
	}
	model := onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: 1})
	orig := bytes.Clone(model)
	patched, out, err := neural.MarkDurations(model)
	if err != nil {
		t.Fatalf("MarkDurations: %v", err)
	}
	if out != "w_ceil" {
		t.Errorf("output %q, want w_ceil", out)
	}
	if !bytes.Equal(model, orig) {
		t.Error("MarkDurations changed the model it was given")
	}
	again, out2, err := neural.MarkDurations(patched)
	if err != nil || out2 != out || !bytes.Equal(again, patched) {
		t.Errorf("MarkDurations of a patched model: %q, %v; want it unchanged", out2, err)
	}

	lib := onnxtest.Library(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(model []byte, ls float32) (worker.PiperSignature, []float32, []float32) {
		cfg := worker.Config{Command: []string{exe, workerArg}, Library: lib, Model: onnxtest.Write(t, "m.onnx", model), Sandbox: proctest.Sandbox(t)}
		kind, info, err := neural.Inspect(t.Context(), cfg)
		if err != nil || kind != worker.Piper {
			t.Fatalf("Inspect: %v, %v", kind, err)
		}
		sig, err := info.Piper()
		if err != nil {
			t.Fatal(err)
		}
		p, err := worker.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		samples, frames, err := p.PiperFrames(t.Context(), worker.PiperInput{IDs: []int64{1, 0, 20, 0, 3, 0, 41, 2}, LengthScale: ls}, 10e9)
		if err != nil {
			t.Fatalf("PiperFrames: %v", err)
		}
		return sig, samples, frames
	}
	ids := []int64{1, 0, 20, 0, 3, 0, 41, 2}
	sig, samples, frames := run(model, 1)
	if sig.Durations != "" || frames != nil {
		t.Errorf("unpatched model: durations %q, frames %v; want none", sig.Durations, frames)
	}
	unpatchedLen := len(samples)
	for _, ls := range []float32{1, 1.37} {
		sig, samples, frames = run(patched, ls)
		if sig.Durations != "w_ceil" {
			t.Errorf("patched model: durations output %q, want w_ceil", sig.Durations)
		}
		var want []float32
		total := 0
		for _, id := range ids {
			f := onnxtest.Frames(id, ls)
			want = append(want, float32(f))
			total += int(f) * onnxtest.HopLength
		}
		if !slices.Equal(frames, want) {
			t.Errorf("length scale %g: frames %v, want %v", ls, frames, want)
		}
		if len(samples) != total {
			t.Errorf("length scale %g: %d samples, want %d", ls, len(samples), total)
		}
		if ls == 1 && len(samples) != unpatchedLen {
			t.Errorf("patched model made %d samples, unpatched %d", len(samples), unpatchedLen)
		}
	}
}

// TestPiperWords speaks through a patched model and checks that each word starts where the
// IDs before its first phoneme end: the sum of their frames times the hop length, across
// sentences and their pauses.
func TestPiperWords(t *testing.T) {
	t.Parallel()
	const text = "Hello there, my old friend. In the morning it was a fine test of it!"
	for _, hop := range []int{0, 300} {
		r := newRig(t, neural.Options{})
		model, _, err := neural.MarkDurations(onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: 1, Hop: hop}))
		if err != nil {
			t.Fatal(err)
		}
		cfg := piperConfig(t, func(m map[string]any) {
			if hop != 0 {
				m["audio"].(map[string]any)["hop_length"] = hop
			}
		})
		v := &narrator.InstalledVoice{
			Voice: narrator.Voice{Name: "Tiny", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-tiny"},
			Files: []narrator.VoiceFile{r.put(t, narrator.VoiceFileModel, "tiny.onnx", model), r.put(t, narrator.VoiceFileConfig, "tiny.onnx.json", cfg)},
		}
		r.install(v)
		const rate = 1.25
		samples, sr, words, err := r.engine.SynthesizeWords(t.Context(), "piper-tiny", text, rate)
		if err != nil {
			t.Fatalf("SynthesizeWords: %v", err)
		}
		c, sentences := r.piperIDs(t, cfg, text)
		// Where each word's first phoneme starts, from the IDs alone: words follow the
		// start and each space.
		pad, space, punct := c.Symbols()
		var starts []float64
		at := 0
		for i, ids := range sentences {
			inWord := false
			for _, id := range ids {
				switch {
				case space[id]:
					inWord = false
				case pad[id] || punct[id]:
				case !inWord:
					inWord = true
					starts = append(starts, float64(at)/float64(sr))
				}
				at += int(onnxtest.Frames(id, c.LengthScale/rate)) * c.HopLength
			}
			if i < len(sentences)-1 {
				at += int(0.15 * float64(sr))
			}
		}
		if len(samples) != at {
			t.Errorf("hop %d: %d samples, want %d", hop, len(samples), at)
		}
		want := []string{"Hello", "there", "my", "old", "friend", "In", "the", "morning", "it", "was", "a", "fine", "test", "of", "it"}
		var got []string
		for _, w := range words {
			got = append(got, w.Text)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("hop %d: words %q, want %q", hop, got, want)
		}
		// espeak-ng joins "in the", "was a", ... into one phoneme word: only those that
		// begin one are checked exactly; the others lie within theirs.
		k := 0
		for _, w := range words {
			if k < len(starts) && math.Abs(w.Start-starts[k]) < 1e-6 {
				k++
				continue
			}
			if k == 0 || w.Start < starts[k-1] || (k < len(starts) && w.Start >= starts[k]) {
				t.Errorf("hop %d: %q starts at %.4f s, outside its phoneme word (starts %v)", hop, w.Text, w.Start, starts)
			}
		}
		if k != len(starts) {
			t.Errorf("hop %d: %d of %d phoneme words start a word: %+v, starts %v", hop, k, len(starts), words, starts)
		}
	}
}
