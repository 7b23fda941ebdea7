package onnx_test

import (
	"fmt"
	"testing"

	"github.com/narrator/narrator/internal/onnx"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/proctest"
)

// BenchmarkRoundTrip measures what a worker process costs around inference: framing, the
// copies through two pipes and the process hop. The tiny Piper model computes next to nothing,
// so "in-process" is almost all the runtime's own overhead, and the difference between a
// "worker" line and the "in-process" line of the same length is the worker's cost, per run
// and per second of audio (22,050 samples, Piper's medium rate). Run with
//
//	go test -run XXX -bench RoundTrip ./internal/onnx
func BenchmarkRoundTrip(b *testing.B) {
	const rate = 22050
	mustLoad(b)
	in := sentence(1)
	in.IDs = make([]int64, 100)
	for _, seconds := range []int{1, 10} {
		// 100 IDs and 4 other values, repeated: about seconds of audio.
		opts := onnxtest.PiperOptions{Repeat: seconds * rate / 104}
		audio := float64(104*opts.Repeat) / rate
		model := onnxtest.Write(b, "piper.onnx", onnxtest.Piper(opts))
		report := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/audio, "ns/audio-s")
		}
		b.Run(fmt.Sprintf("in-process/%ds", seconds), func(b *testing.B) {
			s, err := onnx.Open(model, onnx.Options{Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				if _, err := s.Piper(in); err != nil {
					b.Fatal(err)
				}
			}
			report(b)
		})
		for _, sandboxed := range []bool{false, true} {
			name := "worker"
			if sandboxed {
				name = "worker-sandboxed"
			}
			b.Run(fmt.Sprintf("%s/%ds", name, seconds), func(b *testing.B) {
				cfg := worker.Config{Model: model}
				if sandboxed {
					cfg.Sandbox = proctest.Sandbox(b)
				}
				p := newPool(b, cfg)
				if _, _, err := p.Info(b.Context()); err != nil { // start the worker
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := p.Piper(b.Context(), in, limit); err != nil {
						b.Fatal(err)
					}
				}
				report(b)
			})
		}
	}
}
