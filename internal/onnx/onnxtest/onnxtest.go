// Package onnxtest generates tiny ONNX models with the exact signatures of Piper and Kokoro
// voices, for tests: no real voice model may be downloaded, and none is needed to prove that
// what Narrator sends reaches the model in the right order and that the samples come back in
// order.
//
// Each model's output is a float32 waveform that encodes its inputs, value by value:
//
//	Piper:  [input..., input_lengths, noise_scale, length_scale, noise_w, sid]
//	        (sid only in a multi-speaker model), as output [1,1,T]
//	Kokoro: [tokens..., style (256 values), speed], as a [T] output ("audio", for the
//	        "tokens" variant) or [1,T] ("waveform", for "input_ids")
//
// The integer inputs are cast to float32, exact up to 2^24; an int32 speed is cast too. Every
// value v then becomes Repeat samples of v*Scale in a row: with Scale a power of two (1/1024,
// the default) the samples stay within [-1, 1] for IDs below 1024 and the encoding stays exact,
// and Repeat (default 1) makes the waveform as long as a caller wants audio to be. DecodePiper
// and DecodeKokoro undo it. The models are built by hand with protowire; they use the
// operators Cast, Reshape, Concat, Mul, Tile (and Gather, Add for Weights; Loop, Identity for
// Hang).
package onnxtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/narrator/narrator/internal/onnx"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/proctest"
)

// DefaultScale is the factor of the samples when an option's Scale is zero.
const DefaultScale = 1.0 / 1024

// PiperOptions shapes a generated Piper model.
type PiperOptions struct {
	// MultiSpeaker adds the input "sid" int64 [1], as in a multi-speaker voice.
	MultiSpeaker bool
	// Scale multiplies every encoded value; zero means DefaultScale.
	Scale float32
	// Repeat is how many samples each encoded value becomes; zero means 1.
	Repeat int
	// Weights adds a float32 initializer of this many zeros that every run reads (one element,
	// chosen by input_lengths, is added to the output), so that the model weighs what a real
	// one does: 82 million make the 330 MB of Kokoro's fp32 model. Runs must have fewer
	// phoneme IDs than Weights.
	Weights int
	// Hang makes every run spin for ever inside onnxruntime: the encoded values pass through
	// a Loop of 2^63-1 iterations, which does nothing but loop.
	Hang bool
	// Paced makes each value last Repeat times the length scale samples, rounded, as a real
	// voice speaks slower with a longer length scale; DecodePiper then needs Repeat set to
	// that product.
	Paced bool
	// Compute adds this many products of 256×256 matrices to every run, whose result, zero,
	// is added to the output: a run then costs CPU as a real model's does (each product is
	// 34 MFLOP), for benchmarks of threads and concurrent runs.
	Compute int
}

func (o PiperOptions) scale() float32 { return orDefault(o.Scale) }

// Piper returns a model with a Piper voice's signature (see the package comment).
func Piper(o PiperOptions) []byte {
	g := piperGraph(o.MultiSpeaker)
	g.nodes = []node{
		{op: "Cast", inputs: []string{"input"}, outputs: []string{"ids_2d"}, attrs: []attr{{"to", dataTypeFloat32}}},
		{op: "Reshape", inputs: []string{"ids_2d", "flat"}, outputs: []string{"ids"}},
		{op: "Cast", inputs: []string{"input_lengths"}, outputs: []string{"lengths"}, attrs: []attr{{"to", dataTypeFloat32}}},
	}
	g.inits = []initializer{int64s("flat", []int64{1}, -1)}
	concat := []string{"ids", "lengths", "scales"}
	if o.MultiSpeaker {
		g.nodes = append(g.nodes, node{op: "Cast", inputs: []string{"sid"}, outputs: []string{"speaker"}, attrs: []attr{{"to", dataTypeFloat32}}})
		concat = append(concat, "speaker")
	}
	g.nodes = append(g.nodes, node{op: "Concat", inputs: concat, outputs: []string{"encoded"}, attrs: []attr{{"axis", 0}}})
	encoded := "encoded"
	if o.Weights > 0 {
		g.inits = append(g.inits, initializer{name: "weights", dtype: dataTypeFloat32, dims: []int64{int64(o.Weights)}, raw: make([]byte, 4*o.Weights)})
		g.nodes = append(g.nodes,
			node{op: "Gather", inputs: []string{"weights", "input_lengths"}, outputs: []string{"weight"}},
			node{op: "Add", inputs: []string{"encoded", "weight"}, outputs: []string{"weighed"}})
		encoded = "weighed"
	}
	if o.Compute > 0 {
		g.addCompute(encoded, "computed", "lengths", o.Compute)
		encoded = "computed"
	}
	if o.Hang {
		g.addLoop(encoded, "looped")
		encoded = "looped"
	}
	factor := ""
	if o.Paced {
		g.inits = append(g.inits, int64s("length_scale_index", []int64{1}, 1))
		g.nodes = append(g.nodes, node{op: "Gather", inputs: []string{"scales", "length_scale_index"}, outputs: []string{"pace"}})
		factor = "pace"
	}
	g.addSamples(encoded, "output", []int64{1, 1, -1}, o.scale(), o.Repeat, factor)
	return g.marshal()
}

// piperGraph returns a graph with a Piper voice's inputs and output, and no nodes yet: "input"
// int64 [batch, phonemes], "input_lengths" int64 [batch], "scales" float32 [3] and, in a
// multi-speaker voice, "sid" int64 [1]; "output" float32 [batch, 1, time].
func piperGraph(multiSpeaker bool) graph {
	g := graph{
		name: "piper",
		inputs: []value{
			{name: "input", dtype: dataTypeInt64, shape: []dim{{param: "batch_size"}, {param: "phonemes"}}},
			{name: "input_lengths", dtype: dataTypeInt64, shape: []dim{{param: "batch_size"}}},
			{name: "scales", dtype: dataTypeFloat32, shape: []dim{{size: 3}}},
		},
		outputs: []value{{name: "output", dtype: dataTypeFloat32, shape: []dim{{param: "batch_size"}, {size: 1}, {param: "time"}}}},
	}
	if multiSpeaker {
		g.inputs = append(g.inputs, value{name: "sid", dtype: dataTypeInt64, shape: []dim{{size: 1}}})
	}
	return g
}

// KokoroOptions shapes a generated Kokoro model.
type KokoroOptions struct {
	// InputIDs names the token input "input_ids", with a free batch dimension everywhere and a
	// [1,T] output "waveform", as onnx-community's exports have them; otherwise it is "tokens"
	// [1,N] and the output "audio" [T], as in kokoro-onnx's kokoro-v1.0.onnx.
	InputIDs bool
	// Speed is the element type of "speed": worker.Float32 (zero means that) or worker.Int32,
	// as real models have it, or another, which no Kokoro model has, for tests of the checks.
	Speed worker.DType
	// Output renames the output; empty keeps the variant's.
	Output string
	// Scale multiplies every encoded value; zero means DefaultScale.
	Scale float32
	// Repeat is how many samples each encoded value becomes; zero means 1.
	Repeat int
	// Paced makes each value last Repeat divided by the speed samples, rounded, as a real
	// voice speaks faster at a higher speed.
	Paced bool
}

func (o KokoroOptions) scale() float32 { return orDefault(o.Scale) }

// Kokoro returns a model with a Kokoro model's signature (see the package comment).
func Kokoro(o KokoroOptions) []byte {
	speed := int(o.Speed)
	if speed == 0 {
		speed = dataTypeFloat32
	}
	g, tokens, output, shape := kokoroGraph(o.InputIDs, speed, o.Output)
	g.nodes = []node{
		{op: "Cast", inputs: []string{tokens}, outputs: []string{"tokens_2d"}, attrs: []attr{{"to", dataTypeFloat32}}},
		{op: "Reshape", inputs: []string{"tokens_2d", "flat"}, outputs: []string{"ids"}},
		{op: "Reshape", inputs: []string{"style", "flat"}, outputs: []string{"style_row"}},
		{op: "Cast", inputs: []string{"speed"}, outputs: []string{"speed_f"}, attrs: []attr{{"to", dataTypeFloat32}}},
		{op: "Concat", inputs: []string{"ids", "style_row", "speed_f"}, outputs: []string{"encoded"}, attrs: []attr{{"axis", 0}}},
	}
	g.inits = []initializer{int64s("flat", []int64{1}, -1)}
	factor := ""
	if o.Paced {
		g.inits = append(g.inits, float32s("unit", []int64{1}, 1))
		g.nodes = append(g.nodes, node{op: "Div", inputs: []string{"unit", "speed_f"}, outputs: []string{"pace"}})
		factor = "pace"
	}
	g.addSamples("encoded", output, shape, o.scale(), o.Repeat, factor)
	return g.marshal()
}

// kokoroGraph returns a graph with a Kokoro model's inputs and output, and no nodes yet, and
// the names of its token input and output and the output's shape (for Reshape): "tokens"
// [1,N] and "audio" [T]; or, with inputIDs, "input_ids" and "waveform" [1,T], with a free
// batch dimension everywhere. "speed" has the element type speed, and output, unless empty,
// renames the output.
func kokoroGraph(inputIDs bool, speed int, output string) (g graph, tokens, out string, shape []int64) {
	batch, outDims := dim{size: 1}, []dim{{param: "num_samples"}}
	tokens, out, shape = "tokens", "audio", []int64{-1}
	if inputIDs {
		tokens, batch, out, shape = "input_ids", dim{param: "batch_size"}, "waveform", []int64{1, -1}
		outDims = []dim{batch, {param: "num_samples"}}
	}
	if output != "" {
		out = output
	}
	g = graph{
		name: "kokoro",
		inputs: []value{
			{name: tokens, dtype: dataTypeInt64, shape: []dim{batch, {param: "sequence_length"}}},
			{name: "style", dtype: dataTypeFloat32, shape: []dim{batch, {size: worker.StyleSize}}},
			{name: "speed", dtype: speed, shape: []dim{batch}},
		},
		outputs: []value{{name: out, dtype: dataTypeFloat32, shape: outDims}},
	}
	return g, tokens, out, shape
}

// addSamples adds the nodes that turn the vector in into the output out of shape: each value
// times scale, repeat times in a row, or, if factor names a float [1] tensor, repeat times
// factor, rounded.
func (g *graph) addSamples(in, out string, shape []int64, scale float32, repeat int, factor string) {
	repeat = max(repeat, 1)
	g.inits = append(g.inits,
		float32s("scale", []int64{1}, scale),
		int64s("column", []int64{2}, -1, 1),
		int64s("out_shape", []int64{int64(len(shape))}, shape...))
	if factor == "" {
		g.inits = append(g.inits, int64s("repeats", []int64{2}, 1, int64(repeat)))
	} else {
		g.inits = append(g.inits, float32s("repeat_f", []int64{1}, float32(repeat)), int64s("one", []int64{1}, 1))
		g.nodes = append(g.nodes,
			node{op: "Mul", inputs: []string{factor, "repeat_f"}, outputs: []string{"repeat_paced"}},
			node{op: "Round", inputs: []string{"repeat_paced"}, outputs: []string{"repeat_round"}},
			node{op: "Cast", inputs: []string{"repeat_round"}, outputs: []string{"repeat_n"}, attrs: []attr{{"to", dataTypeInt64}}},
			node{op: "Concat", inputs: []string{"one", "repeat_n"}, outputs: []string{"repeats"}, attrs: []attr{{"axis", 0}}})
	}
	g.nodes = append(g.nodes,
		node{op: "Mul", inputs: []string{in, "scale"}, outputs: []string{"scaled"}},
		node{op: "Reshape", inputs: []string{"scaled", "column"}, outputs: []string{"columns"}},
		node{op: "Tile", inputs: []string{"columns", "repeats"}, outputs: []string{"tiled"}},
		node{op: "Reshape", inputs: []string{"tiled", "out_shape"}, outputs: []string{out}})
}

// addCompute adds n products of 256×256 matrices that start from the float [1] tensor seed,
// an input, so that onnxruntime cannot fold them into a constant, and adds their sum times
// zero to in, giving out.
func (g *graph) addCompute(in, out, seed string, n int) {
	const size = 256
	identity := make([]float32, size*size)
	for i := range size {
		identity[i*size+i] = 1
	}
	g.inits = append(g.inits, float32s("compute_w", []int64{size, size}, identity...), float32s("compute_zero", []int64{1}, 0))
	g.nodes = append(g.nodes, node{op: "Mul", inputs: []string{"compute_w", seed}, outputs: []string{"compute_0"}})
	for i := range n {
		g.nodes = append(g.nodes, node{op: "MatMul", inputs: []string{fmt.Sprintf("compute_%d", i), "compute_w"}, outputs: []string{fmt.Sprintf("compute_%d", i+1)}})
	}
	g.nodes = append(g.nodes,
		node{op: "ReduceSum", inputs: []string{fmt.Sprintf("compute_%d", n)}, outputs: []string{"compute_sum"}, attrs: []attr{{"keepdims", 0}}},
		node{op: "Mul", inputs: []string{"compute_sum", "compute_zero"}, outputs: []string{"compute_nothing"}},
		node{op: "Add", inputs: []string{in, "compute_nothing"}, outputs: []string{out}})
}

// addLoop adds a Loop of 2^63-1 iterations that passes the vector in on to out unchanged, had
// it an end.
func (g *graph) addLoop(in, out string) {
	g.inits = append(g.inits,
		int64s("trips", nil, math.MaxInt64),
		initializer{name: "forever", dtype: dataTypeBool, raw: []byte{1}})
	body := &graph{
		name: "spin",
		inputs: []value{
			{name: "i", dtype: dataTypeInt64},
			{name: "cond_in", dtype: dataTypeBool},
			{name: "carried_in", dtype: dataTypeFloat32, shape: []dim{{param: "n"}}},
		},
		outputs: []value{
			{name: "cond_out", dtype: dataTypeBool},
			{name: "carried_out", dtype: dataTypeFloat32, shape: []dim{{param: "n"}}},
		},
		nodes: []node{
			{op: "Identity", inputs: []string{"cond_in"}, outputs: []string{"cond_out"}},
			{op: "Identity", inputs: []string{"carried_in"}, outputs: []string{"carried_out"}},
		},
	}
	g.nodes = append(g.nodes, node{op: "Loop", inputs: []string{"trips", "forever", in}, outputs: []string{out}, body: body})
}

func orDefault(scale float32) float32 {
	if scale == 0 {
		return DefaultScale
	}
	return scale
}

// values undoes the scaling and repetition of samples, checking that each run of repeat
// samples is one value.
func values(samples []float32, scale float32, repeat int) ([]float32, error) {
	repeat = max(repeat, 1)
	if len(samples)%repeat != 0 {
		return nil, fmt.Errorf("%d samples, not a multiple of the repeat %d", len(samples), repeat)
	}
	v := make([]float32, len(samples)/repeat)
	for k := range v {
		run := samples[k*repeat : (k+1)*repeat]
		for _, s := range run {
			if s != run[0] {
				return nil, fmt.Errorf("samples %d to %d differ: %v", k*repeat, (k+1)*repeat-1, run)
			}
		}
		v[k] = run[0] / scale
	}
	return v, nil
}

// integer returns v as an integer, or an error if it is not one.
func integer(v float32, what string) (int64, error) {
	if v != float32(math.Trunc(float64(v))) {
		return 0, fmt.Errorf("%s %g is not a whole number", what, v)
	}
	return int64(v), nil
}

// DecodePiper returns the input that a model made by Piper(o) received, from its samples. It
// checks that input_lengths was the number of phoneme IDs. Speaker is zero unless o is
// MultiSpeaker.
func DecodePiper(samples []float32, o PiperOptions) (worker.PiperInput, error) {
	var in worker.PiperInput
	v, err := values(samples, o.scale(), o.Repeat)
	if err != nil {
		return in, fmt.Errorf("decode piper: %w", err)
	}
	tail := 4
	if o.MultiSpeaker {
		tail = 5
	}
	n := len(v) - tail
	if n < 0 {
		return in, fmt.Errorf("decode piper: %d values, want at least %d", len(v), tail)
	}
	for k := range n {
		id, err := integer(v[k], fmt.Sprintf("phoneme ID %d", k))
		if err != nil {
			return in, fmt.Errorf("decode piper: %w", err)
		}
		in.IDs = append(in.IDs, id)
	}
	length, err := integer(v[n], "input_lengths")
	if err != nil {
		return in, fmt.Errorf("decode piper: %w", err)
	}
	if length != int64(n) {
		return in, fmt.Errorf("decode piper: input_lengths %d, but %d phoneme IDs", length, n)
	}
	in.NoiseScale, in.LengthScale, in.NoiseW = v[n+1], v[n+2], v[n+3]
	if o.MultiSpeaker {
		if in.Speaker, err = integer(v[n+4], "sid"); err != nil {
			return in, fmt.Errorf("decode piper: %w", err)
		}
	}
	return in, nil
}

// DecodeKokoro returns the input that a model made by Kokoro(o) received, from its samples.
func DecodeKokoro(samples []float32, o KokoroOptions) (worker.KokoroInput, error) {
	var in worker.KokoroInput
	v, err := values(samples, o.scale(), o.Repeat)
	if err != nil {
		return in, fmt.Errorf("decode kokoro: %w", err)
	}
	n := len(v) - worker.StyleSize - 1
	if n < 0 {
		return in, fmt.Errorf("decode kokoro: %d values, want at least %d", len(v), worker.StyleSize+1)
	}
	for k := range n {
		id, err := integer(v[k], fmt.Sprintf("token %d", k))
		if err != nil {
			return in, fmt.Errorf("decode kokoro: %w", err)
		}
		in.Tokens = append(in.Tokens, id)
	}
	in.Style = v[n : n+worker.StyleSize]
	in.Speed = v[n+worker.StyleSize]
	return in, nil
}

// Write writes model to a file name in a new temporary directory of tb and returns its path.
func Write(tb testing.TB, name string, model []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, model, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// ServeWorker makes the test binary a worker process of the real runtime when its first
// argument is arg, as "narrator onnx-worker" is one: it serves runs (onnx.ServeWorker) until
// its stdin ends and exits. Otherwise it returns at once. A TestMain calls it first, and a
// pool's Command is the test binary with arg.
func ServeWorker(arg string) {
	if len(os.Args) < 2 || os.Args[1] != arg {
		return
	}
	f, err := worker.ParseFlags(os.Args[2:], os.Stderr)
	if err == nil {
		err = onnx.ServeWorker(context.Background(), f, os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Library returns the onnxruntime library that NARRATOR_ONNXRUNTIME names (scripts/test.sh
// sets it). If it names no file, the test skips, or fails under NARRATOR_TEST_FULL=1.
func Library(tb testing.TB) string {
	tb.Helper()
	path := proctest.NeedEnv(tb, "NARRATOR_ONNXRUNTIME", "onnxruntime", "set it to what scripts/deps.sh onnxruntime prints")
	if _, err := os.Stat(path); err != nil {
		proctest.Missing(tb, "onnxruntime", fmt.Sprintf("NARRATOR_ONNXRUNTIME: %v; scripts/deps.sh onnxruntime fetches it", err))
	}
	return path
}

// HopLength is the samples of one frame of a model made by PiperTimed, as of a VITS voice.
const HopLength = 256

// TimedOptions shapes a generated Piper model whose phoneme IDs last as a real voice's do.
type TimedOptions struct {
	// MultiSpeaker adds the input "sid" int64 [1], as in a multi-speaker voice.
	MultiSpeaker bool
	// Ceils is how many Ceil nodes the model has: 1 (as every Piper voice), or 0 or 2, for
	// tests of models that cannot be aligned. With none, each ID lasts its frames all the
	// same, rounded instead of ceiled.
	Ceils int
	// Hop is the samples of one frame; zero means HopLength.
	Hop int
	// Compute adds this many products of 256×256 matrices to every run, before the Ceil
	// node, as PiperOptions.Compute does.
	Compute int
}

// Frames returns how many frames a model made by PiperTimed gives phoneme ID id at the
// length scale ls: ceil((id mod 4 + 1.5) × ls), that is 2, 3, 4 or 5 at 1.
func Frames(id int64, ls float32) int64 {
	return int64(math.Ceil(float64((float32(id%4) + 1.5) * ls)))
}

// PiperTimed returns a model with a Piper voice's signature whose output lasts, for each
// phoneme ID, exactly Frames(id, length scale) × o.Hop samples, in order: a square wave of
// period 8 samples and amplitude 0.25 + id/1024, never silent. As in a real Piper voice, the
// frames are the output of the graph's single Ceil node (o.Ceils 1), so that MarkDurations can
// make it a second output.
func PiperTimed(o TimedOptions) []byte {
	g := piperGraph(o.MultiSpeaker)
	hop := o.Hop
	if hop == 0 {
		hop = HopLength
	}
	g.inits = append(g.inits,
		int64s("flat", []int64{1}, -1),
		int64s("four", nil, 4),
		float32s("one_half", nil, 1.5),
		int64s("ls_index", []int64{1}, 1),
		int64s("out_shape", []int64{3}, 1, 1, -1),
		float32s("half", nil, 0.5),
	)
	g.nodes = append(g.nodes,
		node{op: "Reshape", inputs: []string{"input", "flat"}, outputs: []string{"ids"}},
		node{op: "Mod", inputs: []string{"ids", "four"}, outputs: []string{"ids_mod"}},
		node{op: "Cast", inputs: []string{"ids_mod"}, outputs: []string{"ids_mod_f"}, attrs: []attr{{"to", dataTypeFloat32}}},
		node{op: "Add", inputs: []string{"ids_mod_f", "one_half"}, outputs: []string{"w_base"}},
		node{op: "Gather", inputs: []string{"scales", "ls_index"}, outputs: []string{"pace"}},
		node{op: "Mul", inputs: []string{"w_base", "pace"}, outputs: []string{"w"}},
	)
	if o.Compute > 0 {
		g.nodes[len(g.nodes)-1].outputs = []string{"w_paced"}
		g.addCompute("w_paced", "w", "pace", o.Compute)
	}
	switch o.Ceils {
	case 0:
		g.nodes = append(g.nodes,
			node{op: "Add", inputs: []string{"w", "half"}, outputs: []string{"w_half"}},
			node{op: "Floor", inputs: []string{"w_half"}, outputs: []string{"w_ceil"}})
	case 1:
		g.nodes = append(g.nodes, node{op: "Ceil", inputs: []string{"w"}, outputs: []string{"w_ceil"}})
	default:
		g.nodes = append(g.nodes,
			node{op: "Ceil", inputs: []string{"w"}, outputs: []string{"w_ceil_a"}},
			node{op: "Ceil", inputs: []string{"w_ceil_a"}, outputs: []string{"w_ceil"}})
	}
	g.nodes = append(g.nodes, node{op: "Cast", inputs: []string{"w_ceil"}, outputs: []string{"frames"}, attrs: []attr{{"to", dataTypeInt64}}})
	g.addFramed("ids", "frames", hop, "waves")
	g.nodes = append(g.nodes, node{op: "Reshape", inputs: []string{"waves", "out_shape"}, outputs: []string{"output"}})
	return g.marshal()
}

// addFramed adds the nodes that turn the int64 [N] tensors ids and frames into out, a float
// [1, total × hop] tensor: for each ID in order, frames × hop samples of a square wave of
// period 8 and amplitude 0.25 + id/1024.
func (g *graph) addFramed(ids, frames string, hop int, out string) {
	pattern := make([]float32, hop)
	for i := range pattern {
		pattern[i] = 1
		if i%8 >= 4 {
			pattern[i] = -1
		}
	}
	g.inits = append(g.inits,
		int64s("zero", nil, 0),
		int64s("one", nil, 1),
		int64s("axis0", nil, 0),
		int64s("axis1", []int64{1}, 1),
		int64s("col", []int64{2}, -1, 1),
		int64s("row", []int64{2}, 1, -1),
		float32s("base", nil, 0.25),
		float32s("per_id", nil, 1.0/1024),
		int64s("hop", []int64{2}, 1, int64(hop)),
		float32s("pattern", []int64{1, int64(hop)}, pattern...),
	)
	g.nodes = append(g.nodes,
		node{op: "CumSum", inputs: []string{frames, "axis0"}, outputs: []string{"ends"}},
		node{op: "ReduceSum", inputs: []string{frames}, outputs: []string{"total"}, attrs: []attr{{"keepdims", 0}}},
		node{op: "Range", inputs: []string{"zero", "total", "one"}, outputs: []string{"frame_index"}},
		node{op: "Reshape", inputs: []string{"frame_index", "col"}, outputs: []string{"frame_col"}},
		node{op: "Reshape", inputs: []string{"ends", "row"}, outputs: []string{"ends_row"}},
		node{op: "GreaterOrEqual", inputs: []string{"frame_col", "ends_row"}, outputs: []string{"past"}},
		node{op: "Cast", inputs: []string{"past"}, outputs: []string{"past_n"}, attrs: []attr{{"to", dataTypeInt64}}},
		node{op: "ReduceSum", inputs: []string{"past_n", "axis1"}, outputs: []string{"which"}, attrs: []attr{{"keepdims", 0}}},
		node{op: "Cast", inputs: []string{ids}, outputs: []string{"ids_f"}, attrs: []attr{{"to", dataTypeFloat32}}},
		node{op: "Mul", inputs: []string{"ids_f", "per_id"}, outputs: []string{"amp_id"}},
		node{op: "Add", inputs: []string{"amp_id", "base"}, outputs: []string{"amp"}},
		node{op: "Gather", inputs: []string{"amp", "which"}, outputs: []string{"frame_amp"}},
		node{op: "Reshape", inputs: []string{"frame_amp", "col"}, outputs: []string{"frame_col_amp"}},
		node{op: "Tile", inputs: []string{"frame_col_amp", "hop"}, outputs: []string{"hops"}},
		node{op: "Mul", inputs: []string{"hops", "pattern"}, outputs: []string{out}},
	)
}

// KokoroTimedOptions shapes a generated Kokoro model that gives its tokens' durations.
type KokoroTimedOptions struct {
	// InputIDs names the token input "input_ids" and the waveform "waveform" [1,T], as
	// onnx-community's timestamped export has them; otherwise "tokens" and "audio" [T].
	InputIDs bool
	// Durations names the durations output; empty means "durations". Int64 makes it int64,
	// as kokoro's export script does ("duration"); otherwise it is float32.
	Durations string
	Int64     bool
	// NoDurations leaves the durations out of the graph's outputs: the model makes the same
	// waveform, as an export without them does.
	NoDurations bool
	// Compute adds this many products of 256×256 matrices to every run, before the
	// durations, as PiperOptions.Compute does.
	Compute int
}

// KokoroFrames returns how many frames of worker.KokoroFrameSamples samples a model made by
// KokoroTimed gives token at speed: round((token mod 4 + 1.3) / speed), at least 1, as
// Kokoro rounds its predicted durations; that is 1, 2, 3 or 4 at speed 1.
func KokoroFrames(token int64, speed float32) int64 {
	return max(int64(math.RoundToEven(float64((float32(token%4)+1.3)/speed))), 1)
}

// KokoroTimed returns a model with a Kokoro model's signature and a durations output, as a
// timestamped export has: for each token, KokoroFrames(token, speed) frames of
// worker.KokoroFrameSamples samples of the square wave PiperTimed makes, in order; then a
// tail of StyleSize+1 samples, the style and the speed times DefaultScale, so that the
// waveform is a little longer than its frames (as a real one may be) and the style the
// model got can be read back (DecodeKokoroTail).
func KokoroTimed(o KokoroTimedOptions) []byte {
	g, tokens, output, shape := kokoroGraph(o.InputIDs, dataTypeFloat32, "")
	durations := o.Durations
	if durations == "" {
		durations = "durations"
	}
	durType := dataTypeFloat32
	if o.Int64 {
		durType = dataTypeInt64
	}
	g.inits = []initializer{
		int64s("flat", []int64{1}, -1),
		int64s("four", nil, 4),
		float32s("base_frames", nil, 1.3),
		float32s("min_frames", nil, 1),
		float32s("scale", []int64{1}, DefaultScale),
		int64s("out_shape", []int64{int64(len(shape))}, shape...),
	}
	g.nodes = []node{
		{op: "Reshape", inputs: []string{tokens, "flat"}, outputs: []string{"ids"}},
		{op: "Mod", inputs: []string{"ids", "four"}, outputs: []string{"ids_mod"}},
		{op: "Cast", inputs: []string{"ids_mod"}, outputs: []string{"ids_mod_f"}, attrs: []attr{{"to", dataTypeFloat32}}},
		{op: "Add", inputs: []string{"ids_mod_f", "base_frames"}, outputs: []string{"d_base"}},
		{op: "Div", inputs: []string{"d_base", "speed"}, outputs: []string{"d"}},
	}
	if !o.NoDurations {
		g.outputs = append(g.outputs, value{name: durations, dtype: durType, shape: []dim{{param: "sequence_length"}}})
	}
	if o.Compute > 0 {
		g.nodes[len(g.nodes)-1].outputs = []string{"d_paced"}
		g.addCompute("d_paced", "d", "speed", o.Compute)
	}
	g.nodes = append(g.nodes,
		node{op: "Round", inputs: []string{"d"}, outputs: []string{"d_round"}},
		node{op: "Max", inputs: []string{"d_round", "min_frames"}, outputs: []string{"d_frames"}},
		node{op: "Cast", inputs: []string{"d_frames"}, outputs: []string{"frames"}, attrs: []attr{{"to", dataTypeInt64}}},
		node{op: "Cast", inputs: []string{"frames"}, outputs: []string{durations}, attrs: []attr{{"to", int64(durType)}}},
	)
	g.addFramed("ids", "frames", worker.KokoroFrameSamples, "waves")
	g.nodes = append(g.nodes,
		node{op: "Reshape", inputs: []string{"waves", "flat"}, outputs: []string{"waves_flat"}},
		node{op: "Reshape", inputs: []string{"style", "flat"}, outputs: []string{"style_row"}},
		node{op: "Concat", inputs: []string{"style_row", "speed"}, outputs: []string{"tail_values"}, attrs: []attr{{"axis", 0}}},
		node{op: "Mul", inputs: []string{"tail_values", "scale"}, outputs: []string{"tail"}},
		node{op: "Concat", inputs: []string{"waves_flat", "tail"}, outputs: []string{"samples"}, attrs: []attr{{"axis", 0}}},
		node{op: "Reshape", inputs: []string{"samples", "out_shape"}, outputs: []string{output}},
	)
	return g.marshal()
}

// KokoroTail is the number of samples a model made by KokoroTimed ends each run with.
const KokoroTail = worker.StyleSize + 1

// DecodeKokoroTail returns the style and speed a model made by KokoroTimed got, from the last
// KokoroTail samples of a run.
func DecodeKokoroTail(samples []float32) (style []float32, speed float32, err error) {
	if len(samples) < KokoroTail {
		return nil, 0, fmt.Errorf("decode kokoro tail: %d samples, want at least %d", len(samples), KokoroTail)
	}
	v, _ := values(samples[len(samples)-KokoroTail:], DefaultScale, 1)
	return v[:worker.StyleSize], v[worker.StyleSize], nil
}
