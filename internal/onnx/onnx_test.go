package onnx_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/onnx"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
)

// loaded is the library loaded into this test process by mustLoad, or "" before.
var loaded string

// mustLoad loads the onnxruntime library into the test process, once.
func mustLoad(tb testing.TB) {
	tb.Helper()
	lib := onnxtest.Library(tb)
	if loaded == "" {
		if err := onnx.Load(lib); err != nil {
			tb.Fatal(err)
		}
		loaded = lib
	}
}

func TestLoadErrorsNameTheFlag(t *testing.T) {
	for _, path := range []string{"", "/nonexistent/libonnxruntime.so"} {
		err := onnx.Load(path)
		if err == nil || !strings.Contains(err.Error(), "--onnxruntime") {
			t.Errorf("Load(%q) = %v, want an error naming --onnxruntime", path, err)
		}
	}
}

func TestInspect(t *testing.T) {
	mustLoad(t)
	// onnxruntime infers the outputs' batch dimension, declared free, from the reshape that
	// makes them.
	tests := []struct {
		name  string
		model []byte
		want  worker.Info
	}{
		{"piper", onnxtest.Piper(onnxtest.PiperOptions{}), worker.Info{
			Inputs: []worker.Tensor{
				{Name: "input", Type: worker.Int64, Shape: []int64{-1, -1}},
				{Name: "input_lengths", Type: worker.Int64, Shape: []int64{-1}},
				{Name: "scales", Type: worker.Float32, Shape: []int64{3}},
			},
			Outputs: []worker.Tensor{{Name: "output", Type: worker.Float32, Shape: []int64{1, 1, -1}}},
		}},
		{"piper multi-speaker", onnxtest.Piper(onnxtest.PiperOptions{MultiSpeaker: true}), worker.Info{
			Inputs: []worker.Tensor{
				{Name: "input", Type: worker.Int64, Shape: []int64{-1, -1}},
				{Name: "input_lengths", Type: worker.Int64, Shape: []int64{-1}},
				{Name: "scales", Type: worker.Float32, Shape: []int64{3}},
				{Name: "sid", Type: worker.Int64, Shape: []int64{1}},
			},
			Outputs: []worker.Tensor{{Name: "output", Type: worker.Float32, Shape: []int64{1, 1, -1}}},
		}},
		{"kokoro tokens", onnxtest.Kokoro(onnxtest.KokoroOptions{}), worker.Info{
			Inputs: []worker.Tensor{
				{Name: "tokens", Type: worker.Int64, Shape: []int64{1, -1}},
				{Name: "style", Type: worker.Float32, Shape: []int64{1, 256}},
				{Name: "speed", Type: worker.Float32, Shape: []int64{1}},
			},
			Outputs: []worker.Tensor{{Name: "audio", Type: worker.Float32, Shape: []int64{-1}}},
		}},
		{"kokoro input_ids int32 speed", onnxtest.Kokoro(onnxtest.KokoroOptions{InputIDs: true, Speed: worker.Int32}), worker.Info{
			Inputs: []worker.Tensor{
				{Name: "input_ids", Type: worker.Int64, Shape: []int64{-1, -1}},
				{Name: "style", Type: worker.Float32, Shape: []int64{-1, 256}},
				{Name: "speed", Type: worker.Int32, Shape: []int64{-1}},
			},
			Outputs: []worker.Tensor{{Name: "waveform", Type: worker.Float32, Shape: []int64{1, -1}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := onnx.Inspect(onnxtest.Write(t, "model.onnx", tt.model))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Inspect (-want +got):\n%s", diff)
			}
		})
	}
}

// style returns a style row whose values tell their position: 0.5, 1.5, ...
func style() []float32 {
	s := make([]float32, worker.StyleSize)
	for k := range s {
		s[k] = float32(k) + 0.5
	}
	return s
}

// wantPiper fails t unless samples, the output of a model made by onnxtest.Piper(opts), show
// that the model received want (its speaker only if opts is MultiSpeaker).
func wantPiper(t *testing.T, samples []float32, opts onnxtest.PiperOptions, want worker.PiperInput) {
	t.Helper()
	got, err := onnxtest.DecodePiper(samples, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !opts.MultiSpeaker {
		want.Speaker = 0
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the model received (-want +got):\n%s", diff)
	}
}

// wantKokoro fails t unless samples, the output of a model made by onnxtest.Kokoro(opts),
// show that the model received want.
func wantKokoro(t *testing.T, samples []float32, opts onnxtest.KokoroOptions, want worker.KokoroInput) {
	t.Helper()
	got, err := onnxtest.DecodeKokoro(samples, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the model received (-want +got):\n%s", diff)
	}
}

func TestPiper(t *testing.T) {
	mustLoad(t)
	in := worker.PiperInput{IDs: []int64{1, 0, 32, 0, 120, 0, 61, 0, 2}, NoiseScale: 0.667, LengthScale: 1.25, NoiseW: 0.8, Speaker: 7}
	for _, opts := range []onnxtest.PiperOptions{
		{},
		{MultiSpeaker: true},
		{MultiSpeaker: true, Repeat: 100, Scale: 1.0 / 256},
		{Repeat: 100, Paced: true},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			s, err := onnx.Open(onnxtest.Write(t, "piper.onnx", onnxtest.Piper(opts)), onnx.Options{Threads: 1})
			if opts.Paced {
				// Each value lasts the repeat times the length scale.
				opts.Repeat = int(math.Round(float64(opts.Repeat) * float64(in.LengthScale)))
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if s.Kind() != worker.Piper {
				t.Errorf("Kind = %q, want piper", s.Kind())
			}
			samples, err := s.Piper(in)
			if err != nil {
				t.Fatal(err)
			}
			if want := (len(in.IDs) + 4) * max(opts.Repeat, 1); !opts.MultiSpeaker && len(samples) != want {
				t.Errorf("%d samples, want %d", len(samples), want)
			}
			wantPiper(t, samples, opts, in)
		})
	}
}

func TestKokoro(t *testing.T) {
	mustLoad(t)
	in := worker.KokoroInput{Tokens: []int64{0, 50, 83, 156, 0}, Style: style(), Speed: 1.25}
	for _, opts := range []onnxtest.KokoroOptions{
		{},
		{InputIDs: true},
		{Speed: worker.Int32},
		{InputIDs: true, Speed: worker.Int32, Repeat: 3},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			s, err := onnx.Open(onnxtest.Write(t, "kokoro.onnx", onnxtest.Kokoro(opts)), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			samples, err := s.Kokoro(in)
			if err != nil {
				t.Fatal(err)
			}
			want := in
			if opts.Speed == worker.Int32 {
				want.Speed = 1 // 1.25, rounded: the model takes whole numbers
			}
			wantKokoro(t, samples, opts, want)
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	mustLoad(t)
	tests := []struct {
		name  string
		model []byte
		want  string
	}{
		{"not a model", []byte("not a model"), "inspect model"},
		{"kokoro int64 speed", onnxtest.Kokoro(onnxtest.KokoroOptions{Speed: worker.Int64}), `input "speed" is int64, want float32 or int32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := onnx.Open(onnxtest.Write(t, "model.onnx", tt.model), onnx.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRunRefuses(t *testing.T) {
	mustLoad(t)
	piper, err := onnx.Open(onnxtest.Write(t, "piper.onnx", onnxtest.Piper(onnxtest.PiperOptions{})), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { piper.Close() })
	if _, err := piper.Kokoro(worker.KokoroInput{Tokens: []int64{1}, Style: style()}); err == nil {
		t.Error("a Kokoro run of a Piper model succeeded")
	}
	if _, err := piper.Piper(worker.PiperInput{}); err == nil {
		t.Error("a Piper run without phoneme IDs succeeded")
	}
}

// TestKokoroFrames runs timestamped Kokoro models (durations float32 or int64, under each
// export's name) and checks that each token's frames come back, that its sound lasts that
// many frames of 600 samples, in order, and that the style and speed reached the model.
func TestKokoroFrames(t *testing.T) {
	mustLoad(t)
	tokens := []int64{0, 50, 83, 156, 16, 43, 4, 0}
	for _, opts := range []onnxtest.KokoroTimedOptions{
		{},
		{InputIDs: true},
		{Durations: "duration", Int64: true},
		{InputIDs: true, Durations: "pred_dur", Int64: true},
		{NoDurations: true},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			s, err := onnx.Open(onnxtest.Write(t, "kokoro.onnx", onnxtest.KokoroTimed(opts)), onnx.Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			for _, speed := range []float32{1, 1.3, 0.8} {
				samples, frames, err := s.KokoroFrames(worker.KokoroInput{Tokens: tokens, Style: style(), Speed: speed})
				if err != nil {
					t.Fatal(err)
				}
				var want []float32
				at := 0
				for _, tok := range tokens {
					f := onnxtest.KokoroFrames(tok, speed)
					if !opts.NoDurations {
						want = append(want, float32(f))
					}
					// Each token's frames sound at its amplitude, 0.25 + token/1024.
					for k := range int(f) * worker.KokoroFrameSamples {
						if got := math.Abs(float64(samples[at+k])); got != 0.25+float64(tok)/1024 {
							t.Fatalf("speed %g: sample %d of token %d is %g", speed, at+k, tok, samples[at+k])
						}
					}
					at += int(f) * worker.KokoroFrameSamples
				}
				if diff := cmp.Diff(want, frames); diff != "" {
					t.Errorf("speed %g: frames (-want +got):\n%s", speed, diff)
				}
				if len(samples) != at+onnxtest.KokoroTail {
					t.Errorf("speed %g: %d samples, want %d and the tail", speed, len(samples), at)
				}
				gotStyle, gotSpeed, err := onnxtest.DecodeKokoroTail(samples)
				if err != nil || gotSpeed != speed || !slices.Equal(gotStyle, style()) {
					t.Errorf("speed %g: the model got speed %g and style %v (%v)", speed, gotSpeed, gotStyle, err)
				}
			}
		})
	}
}
