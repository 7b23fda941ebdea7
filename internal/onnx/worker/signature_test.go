package worker_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/onnx/worker"
)

// piperInfo is a Piper signature as onnxruntime reports a real single-speaker voice's.
func piperInfo() worker.Info {
	return worker.Info{
		Inputs: []worker.Tensor{
			{Name: "input", Type: worker.Int64, Shape: []int64{-1, -1}},
			{Name: "input_lengths", Type: worker.Int64, Shape: []int64{-1}},
			{Name: "scales", Type: worker.Float32, Shape: []int64{3}},
		},
		Outputs: []worker.Tensor{{Name: "output", Type: worker.Float32, Shape: []int64{-1, 1, -1}}},
	}
}

// kokoroInfo is kokoro-v1.0.onnx's signature.
func kokoroInfo() worker.Info {
	return worker.Info{
		Inputs: []worker.Tensor{
			{Name: "tokens", Type: worker.Int64, Shape: []int64{1, -1}},
			{Name: "style", Type: worker.Float32, Shape: []int64{1, 256}},
			{Name: "speed", Type: worker.Float32, Shape: []int64{1}},
		},
		Outputs: []worker.Tensor{{Name: "audio", Type: worker.Float32, Shape: []int64{-1}}},
	}
}

func TestSignatures(t *testing.T) {
	tests := []struct {
		name       string
		info       func() worker.Info
		wantKind   worker.Kind
		wantPiper  worker.PiperSignature
		wantKokoro worker.KokoroSignature
	}{
		{"piper", piperInfo, worker.Piper, worker.PiperSignature{}, worker.KokoroSignature{}},
		{"piper multi-speaker", func() worker.Info {
			i := piperInfo()
			i.Inputs = append(i.Inputs, worker.Tensor{Name: "sid", Type: worker.Int64, Shape: []int64{1}})
			return i
		}, worker.Piper, worker.PiperSignature{MultiSpeaker: true}, worker.KokoroSignature{}},
		{"kokoro", kokoroInfo, worker.Kokoro, worker.PiperSignature{}, worker.KokoroSignature{Tokens: "tokens", Speed: worker.Float32, Output: "audio"}},
		{"kokoro input_ids int32 speed", func() worker.Info {
			i := kokoroInfo()
			i.Inputs[0].Name, i.Inputs[2].Type, i.Outputs[0].Name = "input_ids", worker.Int32, "waveform"
			return i
		}, worker.Kokoro, worker.PiperSignature{}, worker.KokoroSignature{Tokens: "input_ids", Speed: worker.Int32, Output: "waveform"}},
		{"kokoro timestamped", func() worker.Info {
			i := kokoroInfo()
			i.Outputs = append(i.Outputs, worker.Tensor{Name: "durations", Type: worker.Float32, Shape: []int64{-1}})
			return i
		}, worker.Kokoro, worker.PiperSignature{}, worker.KokoroSignature{Tokens: "tokens", Speed: worker.Float32, Output: "audio", Durations: "durations"}},
		{"kokoro export.py", func() worker.Info {
			i := kokoroInfo()
			i.Outputs = []worker.Tensor{{Name: "duration", Type: worker.Int64, Shape: []int64{-1}}, {Name: "waveform", Type: worker.Float32, Shape: []int64{-1}}}
			return i
		}, worker.Kokoro, worker.PiperSignature{}, worker.KokoroSignature{Tokens: "tokens", Speed: worker.Float32, Output: "waveform", Durations: "duration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := tt.info()
			kind, err := info.Kind()
			if err != nil || kind != tt.wantKind {
				t.Fatalf("Kind = %q, %v; want %q", kind, err, tt.wantKind)
			}
			if kind == worker.Piper {
				got, err := info.Piper()
				if err != nil || got != tt.wantPiper {
					t.Errorf("Piper = %+v, %v; want %+v", got, err, tt.wantPiper)
				}
			} else {
				got, err := info.Kokoro()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.wantKokoro, got); diff != "" {
					t.Errorf("Kokoro (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestWrongSignatures(t *testing.T) {
	tests := []struct {
		name string
		edit func(*worker.Info)
		base func() worker.Info
		want string
	}{
		{"neither", func(i *worker.Info) { i.Inputs[2].Name = "noise" }, piperInfo, "not a Piper model"},
		{"piper ids int32", func(i *worker.Info) { i.Inputs[0].Type = worker.Int32 }, piperInfo, `piper model: input "input" is int32, want int64`},
		{"piper no lengths", func(i *worker.Info) { i.Inputs = append(i.Inputs[:1], i.Inputs[2]) }, piperInfo, `piper model: no input "input_lengths"`},
		{"piper scales of 4", func(i *worker.Info) { i.Inputs[2].Shape = []int64{4} }, piperInfo, `input "scales" has shape scales float32[4], want scales float32[3]`},
		{"piper batch of 2", func(i *worker.Info) { i.Inputs[0].Shape = []int64{2, -1} }, piperInfo, `input "input" has shape`},
		{"piper extra input", func(i *worker.Info) {
			i.Inputs = append(i.Inputs, worker.Tensor{Name: "emotion", Type: worker.Int64, Shape: []int64{1}})
		}, piperInfo, "unexpected input emotion int64[1]"},
		{"piper no output", func(i *worker.Info) { i.Outputs[0].Name = "wav" }, piperInfo, `no output named "output"`},
		{"piper float16 output", func(i *worker.Info) { i.Outputs[0].Type = 10 }, piperInfo, `output "output" is dtype(10), want float32`},
		{"kokoro no tokens", func(i *worker.Info) { i.Inputs[0].Name = "phonemes" }, kokoroInfo, "kokoro model: no token input"},
		{"kokoro style of 128", func(i *worker.Info) { i.Inputs[1].Shape = []int64{1, 128} }, kokoroInfo, `input "style" has shape`},
		{"kokoro int64 speed", func(i *worker.Info) { i.Inputs[2].Type = worker.Int64 }, kokoroInfo, `input "speed" is int64, want float32 or int32`},
		{"kokoro no speed", func(i *worker.Info) { i.Inputs = i.Inputs[:2] }, kokoroInfo, `no input "speed"`},
		{"kokoro two outputs", func(i *worker.Info) { i.Outputs = append(i.Outputs, i.Outputs[0]) }, kokoroInfo, "2 outputs, want the waveform and maybe its durations"},
		{"kokoro three outputs", func(i *worker.Info) {
			i.Outputs = append(i.Outputs, worker.Tensor{Name: "durations", Type: worker.Int64}, worker.Tensor{Name: "pred_dur", Type: worker.Int64})
		}, kokoroInfo, "3 outputs"},
		{"kokoro int32 durations", func(i *worker.Info) {
			i.Outputs = append(i.Outputs, worker.Tensor{Name: "durations", Type: worker.Int32})
		}, kokoroInfo, `output "durations" is int32, want float32 or int64`},
		{"kokoro int64 waveform", func(i *worker.Info) {
			i.Outputs = []worker.Tensor{{Name: "audio", Type: worker.Int64}, {Name: "durations", Type: worker.Float32}}
		}, kokoroInfo, `output "audio" is int64, want float32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := tt.base()
			tt.edit(&info)
			_, err := info.Kind()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Kind() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
