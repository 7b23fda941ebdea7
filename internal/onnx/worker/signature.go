package worker

import (
	"fmt"
	"slices"
	"strings"
)

// DType is the element type of a tensor, numbered as ONNX numbers them (TensorProto.DataType).
type DType int32

// The element types Piper and Kokoro models use.
const (
	Float32 DType = 1
	Int32   DType = 6
	Int64   DType = 7
)

// String returns the type's name in ONNX, or its number.
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Tensor describes one input or output of a model.
type Tensor struct {
	Name string `json:"name"`
	Type DType  `json:"type"`
	// Shape has -1 for each dimension the model leaves free (a symbolic one, such as the number
	// of phonemes).
	Shape []int64 `json:"shape"`
}

// String describes t as "name float32[1,-1]".
func (t Tensor) String() string {
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("%s %s[%s]", t.Name, t.Type, strings.Join(dims, ","))
}

// Info is a model's signature: its inputs and outputs, as onnxruntime reports them.
type Info struct {
	Inputs  []Tensor `json:"inputs"`
	Outputs []Tensor `json:"outputs"`
}

// input returns the input named name.
func (i Info) input(name string) (Tensor, bool) {
	k := slices.IndexFunc(i.Inputs, func(t Tensor) bool { return t.Name == name })
	if k < 0 {
		return Tensor{}, false
	}
	return i.Inputs[k], true
}

// Kind is the family of a model, told by its signature.
type Kind string

// The kinds of model the seam runs.
const (
	Piper  Kind = "piper"
	Kokoro Kind = "kokoro"
)

// Kind tells a Piper model (it has the input "scales") from a Kokoro one (it has "style") and
// checks the whole signature of that kind (see Piper and Kokoro). The error says what is
// wrong.
func (i Info) Kind() (Kind, error) {
	_, scales := i.input("scales")
	_, style := i.input("style")
	switch {
	case scales && !style:
		_, err := i.Piper()
		return Piper, err
	case style && !scales:
		_, err := i.Kokoro()
		return Kokoro, err
	}
	return "", fmt.Errorf("not a Piper model (inputs input, input_lengths, scales and maybe sid) nor a Kokoro one (inputs tokens or input_ids, style, speed): its inputs are %s", i.describeInputs())
}

func (i Info) describeInputs() string {
	s := make([]string, len(i.Inputs))
	for k, t := range i.Inputs {
		s[k] = t.String()
	}
	return strings.Join(s, ", ")
}

// PiperSignature is what a Piper model's signature says about how to run it.
type PiperSignature struct {
	// MultiSpeaker is true if the model takes a speaker ID (the input "sid").
	MultiSpeaker bool
	// Durations names the output that gives each phoneme ID's length in frames (the output of
	// the model's Ceil node, w_ceil, which an aligned model has as a second output; see
	// package neural's MarkDurations), or is "" if the model has none.
	Durations string
}

// Piper checks that the model has Piper's signature, and returns what it says:
//   - inputs "input" int64 [1,N] (the phoneme IDs), "input_lengths" int64 [1], "scales" float32
//     [3] (noise_scale, length_scale, noise_w), and, in a multi-speaker model only, "sid"
//     int64 [1], and no other;
//   - an output "output", float32 (the samples, [1,1,T] in Piper's exports), and maybe one
//     more float32 output, the IDs' durations (Durations).
//
// A free dimension (-1) matches any size. The error names the input or output that is wrong.
func (i Info) Piper() (PiperSignature, error) {
	want := []Tensor{
		{Name: "input", Type: Int64, Shape: []int64{1, -1}},
		{Name: "input_lengths", Type: Int64, Shape: []int64{1}},
		{Name: "scales", Type: Float32, Shape: []int64{3}},
	}
	var sig PiperSignature
	if _, ok := i.input("sid"); ok {
		sig.MultiSpeaker = true
		want = append(want, Tensor{Name: "sid", Type: Int64, Shape: []int64{1}})
	}
	if err := i.check("piper", want); err != nil {
		return sig, err
	}
	k := slices.IndexFunc(i.Outputs, func(t Tensor) bool { return t.Name == "output" })
	if k < 0 {
		return sig, fmt.Errorf("piper model: no output named \"output\" (it has %d outputs)", len(i.Outputs))
	}
	if t := i.Outputs[k]; t.Type != Float32 {
		return sig, fmt.Errorf("piper model: output %q is %s, want float32", t.Name, t.Type)
	}
	if len(i.Outputs) == 2 {
		if t := i.Outputs[1-k]; t.Type == Float32 {
			sig.Durations = t.Name
		}
	}
	return sig, nil
}

// KokoroSignature is what a Kokoro model's signature says about how to run it.
type KokoroSignature struct {
	// Tokens is the name of the token input: "tokens" (kokoro-onnx's exports) or "input_ids"
	// (onnx-community's).
	Tokens string
	// Speed is the element type of the input "speed": Float32 or Int32. A model that takes an
	// int32 speed can only be given whole numbers.
	Speed DType
	// Output is the name of the model's waveform output: "waveform" or "audio".
	Output string
	// Durations names the output that gives each token's length in frames of
	// KokoroFrameSamples samples, as a timestamped export has it ("durations", "duration" or
	// "pred_dur", float32 or int64), or is "" if the model has none.
	Durations string
}

// KokoroFrameSamples is the samples of one frame of a Kokoro model's durations, at 24 kHz:
// kokoro's KPipeline.join_timestamps counts 40 frames a second.
const KokoroFrameSamples = 600

// kokoroDurations are the names a Kokoro export gives its durations output: kokoro's own
// export script ("duration"), onnx-community's timestamped export ("durations"), and grafts
// of the tensor pred_dur.
var kokoroDurations = []string{"durations", "duration", "pred_dur"}

// StyleSize is the length of a Kokoro style vector: one row of a voice's (510,1,256) table.
const StyleSize = 256

// Kokoro checks that the model has Kokoro's signature, and returns what it says:
//   - inputs "tokens" or "input_ids" int64 [1,N], "style" float32 [1,256], "speed" float32 or
//     int32 [1], and no other;
//   - an output float32 (the samples at 24 kHz), whatever its name, and maybe a second, the
//     tokens' durations (Durations), float32 or int64.
//
// A free dimension (-1) matches any size. The error names the input or output that is wrong.
func (i Info) Kokoro() (KokoroSignature, error) {
	var sig KokoroSignature
	for _, name := range []string{"tokens", "input_ids"} {
		if _, ok := i.input(name); ok {
			if sig.Tokens != "" {
				return sig, fmt.Errorf("kokoro model: both inputs \"tokens\" and \"input_ids\"")
			}
			sig.Tokens = name
		}
	}
	if sig.Tokens == "" {
		return sig, fmt.Errorf("kokoro model: no token input (\"tokens\" or \"input_ids\"); its inputs are %s", i.describeInputs())
	}
	sig.Speed = Float32
	if speed, ok := i.input("speed"); ok && speed.Type == Int32 {
		sig.Speed = Int32
	}
	want := []Tensor{
		{Name: sig.Tokens, Type: Int64, Shape: []int64{1, -1}},
		{Name: "style", Type: Float32, Shape: []int64{1, StyleSize}},
		{Name: "speed", Type: sig.Speed, Shape: []int64{1}},
	}
	if err := i.check("kokoro", want); err != nil {
		if speed, ok := i.input("speed"); ok && speed.Type != Float32 && speed.Type != Int32 {
			return sig, fmt.Errorf("kokoro model: input \"speed\" is %s, want float32 or int32", speed.Type)
		}
		return sig, err
	}
	wave := 0
	switch len(i.Outputs) {
	case 1:
	case 2:
		d := slices.IndexFunc(i.Outputs, func(t Tensor) bool { return slices.Contains(kokoroDurations, t.Name) })
		if d < 0 {
			return sig, fmt.Errorf("kokoro model: 2 outputs, want the waveform and maybe its durations (named %s)", strings.Join(kokoroDurations, ", "))
		}
		if t := i.Outputs[d]; t.Type != Float32 && t.Type != Int64 {
			return sig, fmt.Errorf("kokoro model: output %q is %s, want float32 or int64", t.Name, t.Type)
		}
		sig.Durations, wave = i.Outputs[d].Name, 1-d
	default:
		return sig, fmt.Errorf("kokoro model: %d outputs, want one (the waveform), or two (and its durations)", len(i.Outputs))
	}
	if t := i.Outputs[wave]; t.Type != Float32 {
		return sig, fmt.Errorf("kokoro model: output %q is %s, want float32", t.Name, t.Type)
	}
	sig.Output = i.Outputs[wave].Name
	return sig, nil
}

// check reports the first difference between the model's inputs and want, which lists every
// input the model must have and no other.
func (i Info) check(kind string, want []Tensor) error {
	for _, w := range want {
		got, ok := i.input(w.Name)
		if !ok {
			return fmt.Errorf("%s model: no input %q (want %s); its inputs are %s", kind, w.Name, w, i.describeInputs())
		}
		if got.Type != w.Type {
			return fmt.Errorf("%s model: input %q is %s, want %s", kind, w.Name, got.Type, w.Type)
		}
		if !fits(got.Shape, w.Shape) {
			return fmt.Errorf("%s model: input %q has shape %s, want %s", kind, w.Name, got, w)
		}
	}
	for _, got := range i.Inputs {
		if !slices.ContainsFunc(want, func(w Tensor) bool { return w.Name == got.Name }) {
			return fmt.Errorf("%s model: unexpected input %s", kind, got)
		}
	}
	return nil
}

// fits reports whether a model's shape accepts tensors of shape want: the same rank, and each
// fixed dimension of either equal to the other's, or free.
func fits(got, want []int64) bool {
	if len(got) != len(want) {
		return false
	}
	for k := range got {
		if got[k] >= 0 && want[k] >= 0 && got[k] != want[k] {
			return false
		}
	}
	return true
}
