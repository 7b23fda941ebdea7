package onnx_test

import (
	"fmt"
	"runtime"
	"sync"
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

// BenchmarkParallelism measures how a model's runs are best spread over the cores: onnxruntime
// threads within a run (Threads), runs at once on one session (Runs, as one worker serves
// them), or one session per run (as one worker per run would hold). The model computes about
// 7 GFLOP a run (onnxtest's Compute: 200 products of 256×256 matrices). Each iteration is
// NumCPU sentences; "sentences/s" compares the layouts. Run with
//
//	go test -run XXX -bench Parallelism ./internal/onnx
func BenchmarkParallelism(b *testing.B) {
	mustLoad(b)
	model := onnxtest.Write(b, "piper.onnx", onnxtest.Piper(onnxtest.PiperOptions{Compute: 200}))
	in := sentence(1)
	n := runtime.NumCPU()
	layouts := []struct {
		name                    string
		threads, runs, sessions int
	}{
		{"threads=1/runs=1", 1, 1, 1},
		{fmt.Sprintf("threads=%d/runs=1", n), n, 1, 1},
		{fmt.Sprintf("threads=1/runs=%d", n), 1, n, 1},
		{fmt.Sprintf("threads=1/sessions=%d", n), 1, 1, n},
		{fmt.Sprintf("threads=%d/runs=%d", n, n), n, n, 1},
	}
	for _, l := range layouts {
		b.Run(l.name, func(b *testing.B) {
			sessions := make([]*onnx.Session, l.sessions)
			for i := range sessions {
				s, err := onnx.Open(model, onnx.Options{Threads: l.threads})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				sessions[i] = s
			}
			for b.Loop() {
				// n sentences, l.runs*l.sessions at a time.
				work := make(chan struct{}, n)
				for range n {
					work <- struct{}{}
				}
				close(work)
				var wg sync.WaitGroup
				for _, s := range sessions {
					for range l.runs {
						wg.Go(func() {
							for range work {
								if _, err := s.Piper(in); err != nil {
									b.Error(err)
								}
							}
						})
					}
				}
				wg.Wait()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "sentences/s")
		})
	}
}
