// Package onnx runs Piper and Kokoro voice models with onnxruntime, Microsoft's MIT-licensed
// inference library. It is the only package that imports its Go binding,
// github.com/yalue/onnxruntime_go, which loads the library at run time (cgo, dlopen).
//
// Only the onnx-worker processes use it (package worker runs them): a crash, hang or runaway
// allocation of the runtime then kills a worker, never the server. Load loads the library once
// per process; Open opens a model as a Session, which checks the model's signature (see
// worker.Info) and runs it, by as many goroutines at once as wish to.
package onnx

import (
	"errors"
	"fmt"
	"math"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/narrator/narrator/internal/onnx/worker"
)

// ErrNoLibrary means no onnxruntime library was named.
var ErrNoLibrary = errors.New("no onnxruntime library: give --onnxruntime PATH (or NARRATOR_ONNXRUNTIME); scripts/deps.sh onnxruntime fetches one")

// Load loads the onnxruntime shared library at path (libonnxruntime.so, version 1.24 or later)
// into the process and starts its environment. A process loads it once: a second call returns
// an error. The errors name the --onnxruntime flag, where the path comes from.
func Load(path string) error {
	if path == "" {
		return ErrNoLibrary
	}
	if ort.IsInitialized() {
		return fmt.Errorf("load onnxruntime %q (--onnxruntime): a library is loaded already", path)
	}
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("load onnxruntime %q (--onnxruntime): %w", path, err)
	}
	return nil
}

// Inspect returns the signature of the model at path: its inputs' and outputs' names, element
// types and shapes. The library must be loaded.
func Inspect(path string) (worker.Info, error) {
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return worker.Info{}, fmt.Errorf("inspect model %s: %w", path, err)
	}
	return worker.Info{Inputs: tensors(ins), Outputs: tensors(outs)}, nil
}

// tensors converts the runtime's descriptions. onnxruntime numbers element types as ONNX does,
// and reports a free dimension as -1; an input that is not a tensor gets type 0, which no
// signature accepts.
func tensors(infos []ort.InputOutputInfo) []worker.Tensor {
	ts := make([]worker.Tensor, len(infos))
	for k, info := range infos {
		ts[k] = worker.Tensor{Name: info.Name, Shape: []int64(info.Dimensions)}
		if info.OrtValueType == ort.ONNXTypeTensor {
			ts[k].Type = worker.DType(info.DataType)
		}
	}
	return ts
}

// Options configures a Session.
type Options struct {
	// Threads is the number of threads one run uses (onnxruntime's intra-op threads). Zero
	// means onnxruntime's default, one per core.
	Threads int
}

// Session is a model opened for runs. It is safe for concurrent use: onnxruntime runs a
// session from many threads at once, sharing its weights.
type Session struct {
	sess   *ort.DynamicAdvancedSession
	info   worker.Info
	kind   worker.Kind
	piper  worker.PiperSignature
	kokoro worker.KokoroSignature
}

// Open opens the model at path, which must have Piper's or Kokoro's signature (the error says
// what is wrong with one that has not). The library must be loaded.
func Open(path string, opts Options) (*Session, error) {
	info, err := Inspect(path)
	if err != nil {
		return nil, err
	}
	s := &Session{info: info}
	if s.kind, err = info.Kind(); err != nil {
		return nil, fmt.Errorf("open model %s: %w", path, err)
	}
	var inputs, outputs []string
	switch s.kind {
	case worker.Piper:
		s.piper, _ = info.Piper()
		inputs, outputs = []string{"input", "input_lengths", "scales"}, []string{"output"}
		if s.piper.Durations != "" {
			outputs = append(outputs, s.piper.Durations)
		}
		if s.piper.MultiSpeaker {
			inputs = append(inputs, "sid")
		}
	case worker.Kokoro:
		s.kokoro, _ = info.Kokoro()
		inputs, outputs = []string{s.kokoro.Tokens, "style", "speed"}, []string{s.kokoro.Output}
		if s.kokoro.Durations != "" {
			outputs = append(outputs, s.kokoro.Durations)
		}
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", path, err)
	}
	defer so.Destroy()
	if err := configure(so, opts); err != nil {
		return nil, fmt.Errorf("open model %s: %w", path, err)
	}
	if s.sess, err = ort.NewDynamicAdvancedSession(path, inputs, outputs, so); err != nil {
		return nil, fmt.Errorf("open model %s: %w", path, err)
	}
	return s, nil
}

// configure sets a session's threads. A run uses opts.Threads threads, and the graph's
// branches run one after another (one inter-op thread): voice models are chains. Idle
// threads sleep instead of spinning, onnxruntime's default, which would burn the cores
// that other workers and the server share.
func configure(so *ort.SessionOptions, opts Options) error {
	if opts.Threads > 0 {
		if err := so.SetIntraOpNumThreads(opts.Threads); err != nil {
			return err
		}
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return err
	}
	return so.AddSessionConfigEntry("session.intra_op.allow_spinning", "0")
}

// Info returns the model's signature.
func (s *Session) Info() worker.Info { return s.info }

// Kind returns the model's kind.
func (s *Session) Kind() worker.Kind { return s.kind }

// Piper runs a Piper model and returns its samples.
func (s *Session) Piper(in worker.PiperInput) ([]float32, error) {
	samples, _, err := s.PiperFrames(in)
	return samples, err
}

// PiperFrames is Piper that also returns each phoneme ID's length in frames, if the model
// gives them (worker.PiperSignature.Durations), else nil. Durations that do not come one per
// ID are dropped.
func (s *Session) PiperFrames(in worker.PiperInput) (samples, frames []float32, err error) {
	if s.kind != worker.Piper {
		return nil, nil, fmt.Errorf("piper run on a %s model", s.kind)
	}
	if len(in.IDs) == 0 {
		return nil, nil, errors.New("piper run without phoneme IDs")
	}
	n := int64(len(in.IDs))
	var vals values
	defer vals.destroy()
	vals.add(ort.NewTensor(ort.NewShape(1, n), in.IDs))
	vals.add(ort.NewTensor(ort.NewShape(1), []int64{n}))
	vals.add(ort.NewTensor(ort.NewShape(3), []float32{in.NoiseScale, in.LengthScale, in.NoiseW}))
	if s.piper.MultiSpeaker {
		vals.add(ort.NewTensor(ort.NewShape(1), []int64{in.Speaker}))
	}
	out, err := s.run(vals, 1+min(len(s.piper.Durations), 1))
	if err != nil {
		return nil, nil, err
	}
	if len(out) > 1 && len(out[1]) == len(in.IDs) {
		frames = out[1]
	}
	return out[0], frames, nil
}

// Kokoro runs a Kokoro model and returns its samples, at 24 kHz.
func (s *Session) Kokoro(in worker.KokoroInput) ([]float32, error) {
	samples, _, err := s.KokoroFrames(in)
	return samples, err
}

// KokoroFrames is Kokoro that also returns each token's length in frames (of
// worker.KokoroFrameSamples samples), if the model gives them (worker.KokoroSignature.Durations),
// else nil. Durations that do not come one per token are dropped.
func (s *Session) KokoroFrames(in worker.KokoroInput) (samples, frames []float32, err error) {
	if s.kind != worker.Kokoro {
		return nil, nil, fmt.Errorf("kokoro run on a %s model", s.kind)
	}
	if len(in.Tokens) == 0 {
		return nil, nil, errors.New("kokoro run without tokens")
	}
	if len(in.Style) != worker.StyleSize {
		return nil, nil, fmt.Errorf("kokoro run with a style of %d values, want %d", len(in.Style), worker.StyleSize)
	}
	var vals values
	defer vals.destroy()
	vals.add(ort.NewTensor(ort.NewShape(1, int64(len(in.Tokens))), in.Tokens))
	vals.add(ort.NewTensor(ort.NewShape(1, worker.StyleSize), in.Style))
	if s.kokoro.Speed == worker.Int32 {
		vals.add(ort.NewTensor(ort.NewShape(1), []int32{int32(max(math.Round(float64(in.Speed)), 1))}))
	} else {
		vals.add(ort.NewTensor(ort.NewShape(1), []float32{in.Speed}))
	}
	out, err := s.run(vals, 1+min(len(s.kokoro.Durations), 1))
	if err != nil {
		return nil, nil, err
	}
	if len(out) > 1 && len(out[1]) == len(in.Tokens) {
		frames = out[1]
	}
	return out[0], frames, nil
}

// run runs the session on the inputs and returns a copy of its n outputs, as float32: each is
// float32, or int64 (a Kokoro export's durations).
func (s *Session) run(in values, n int) ([][]float32, error) {
	if in.err != nil {
		return nil, fmt.Errorf("make input: %w", in.err)
	}
	out := make([]ort.Value, n) // allocated by the runtime, whatever their shapes
	if err := s.sess.Run(in.vals, out); err != nil {
		return nil, fmt.Errorf("run model: %w", err)
	}
	data := make([][]float32, n)
	for k, v := range out {
		defer v.Destroy()
		switch t := v.(type) {
		case *ort.Tensor[float32]:
			data[k] = append([]float32(nil), t.GetData()...)
		case *ort.Tensor[int64]:
			data[k] = make([]float32, len(t.GetData()))
			for i, x := range t.GetData() {
				data[k][i] = float32(x)
			}
		default:
			return nil, fmt.Errorf("run model: output %d is %T, want float32 or int64", k, v)
		}
	}
	return data, nil
}

// Close releases the session. It must not run any more.
func (s *Session) Close() error {
	return s.sess.Destroy()
}

// values collects a run's input tensors, and the first error in making them.
type values struct {
	vals []ort.Value
	err  error
}

func (v *values) add(t ort.Value, err error) {
	if err != nil {
		v.err = errors.Join(v.err, err)
		return
	}
	v.vals = append(v.vals, t)
}

func (v *values) destroy() {
	for _, t := range v.vals {
		_ = t.Destroy()
	}
}
