package onnx_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// workerArg makes the test binary a worker process, as "narrator onnx-worker" is one: the
// pool's tests here run the real runtime in real worker processes.
const workerArg = "onnx-worker"

func TestMain(m *testing.M) {
	onnxtest.ServeWorker(workerArg)
	os.Exit(m.Run())
}

// limit is the time limit of runs that should succeed: far longer than any takes.
const limit = time.Minute

// mustPool returns a Pool of sandboxed worker processes for model (or, if nil, cfg.Model),
// closed when the test ends.
func mustPool(tb testing.TB, cfg worker.Config, model []byte) *worker.Pool {
	tb.Helper()
	if model != nil {
		cfg.Model = onnxtest.Write(tb, "model.onnx", model)
	}
	if cfg.Sandbox == nil {
		cfg.Sandbox = proctest.Sandbox(tb)
	}
	return newPool(tb, cfg)
}

// newPool returns a Pool of worker processes for cfg, which names the model, with this test
// binary as the worker and, if cfg names none, the test's library. It is closed when the test
// ends.
func newPool(tb testing.TB, cfg worker.Config) *worker.Pool {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Command = []string{exe, workerArg}
	if cfg.Library == "" {
		cfg.Library = onnxtest.Library(tb)
	}
	p, err := worker.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// sentence returns the Piper input of the ith sentence of an article.
func sentence(i int) worker.PiperInput {
	return worker.PiperInput{IDs: []int64{1, 0, int64(20 + i), 0, int64(100 + i), 0, 2}, NoiseScale: 0.667, LengthScale: 1 + float32(i)/8, NoiseW: 0.8, Speaker: int64(i)}
}

func TestWorkerPiper(t *testing.T) {
	t.Parallel()
	for _, opts := range []onnxtest.PiperOptions{{}, {MultiSpeaker: true, Repeat: 50}} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			t.Parallel()
			p := mustPool(t, worker.Config{}, onnxtest.Piper(opts))
			kind, _, err := p.Info(t.Context())
			if err != nil || kind != worker.Piper {
				t.Fatalf("Info = %q, %v; want piper", kind, err)
			}
			for i := range 3 {
				samples, err := p.Piper(t.Context(), sentence(i), limit)
				if err != nil {
					t.Fatal(err)
				}
				wantPiper(t, samples, opts, sentence(i))
			}
		})
	}
}

func TestWorkerKokoro(t *testing.T) {
	t.Parallel()
	for _, opts := range []onnxtest.KokoroOptions{
		{},
		{InputIDs: true},
		{Speed: worker.Int32},
		{InputIDs: true, Speed: worker.Int32, Repeat: 10},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			t.Parallel()
			p := mustPool(t, worker.Config{}, onnxtest.Kokoro(opts))
			in := worker.KokoroInput{Tokens: []int64{0, 43, 102, 16, 0}, Style: style(), Speed: 2}
			samples, err := p.Kokoro(t.Context(), in, limit)
			if err != nil {
				t.Fatal(err)
			}
			wantKokoro(t, samples, opts, in)
			// A Piper run of a Kokoro model is refused, and not retried.
			if _, err := p.Piper(t.Context(), sentence(0), limit); !errors.Is(err, worker.ErrRun) {
				t.Errorf("Piper on a Kokoro model = %v, want ErrRun", err)
			}
		})
	}
}

func TestWorkerCrashMidArticle(t *testing.T) {
	t.Parallel()
	rec := &restarts{}
	// Every worker dies on its third run: an article of seven sentences kills three, and
	// each sentence still comes back right, in order.
	opts := onnxtest.PiperOptions{MultiSpeaker: true}
	p := mustPool(t, worker.Config{Fault: worker.Fault{CrashAt: 3}, Metrics: rec}, onnxtest.Piper(opts))
	for i := range 7 {
		samples, err := p.Piper(t.Context(), sentence(i), limit)
		if err != nil {
			t.Fatalf("sentence %d: %v", i, err)
		}
		wantPiper(t, samples, opts, sentence(i))
	}
	if rec.n() != 3 {
		t.Errorf("%d workers replaced, want 3", rec.n())
	}
}

func TestWorkerHang(t *testing.T) {
	t.Parallel()
	p := mustPool(t, worker.Config{Fault: worker.Fault{HangAt: 1}}, onnxtest.Piper(onnxtest.PiperOptions{}))
	_, err := p.Piper(t.Context(), sentence(0), 3*time.Second)
	if !errors.Is(err, proc.ErrHung) || strings.Count(err.Error(), "no answer within 3s, killed") != 2 {
		t.Errorf("Piper = %v, want two attempts killed at their limit", err)
	}
}

func TestWorkerConcurrentRuns(t *testing.T) {
	t.Parallel()
	opts := onnxtest.KokoroOptions{Repeat: 4}
	p := mustPool(t, worker.Config{Workers: 2, Runs: 2}, onnxtest.Kokoro(opts))
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() {
			s := style()
			s[0] = float32(i)
			in := worker.KokoroInput{Tokens: []int64{0, int64(i), 0}, Style: s, Speed: 1}
			samples, err := p.Kokoro(t.Context(), in, limit)
			if err != nil {
				errs[i] = err
				return
			}
			got, err := onnxtest.DecodeKokoro(samples, opts)
			if err == nil && !cmp.Equal(in, got) {
				err = fmt.Errorf("run %d: %s", i, cmp.Diff(in, got))
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}

func TestWorkerRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		library bool // the library is the model file, not a library
		model   []byte
		want    string
	}{
		{"wrong signature", false, onnxtest.Kokoro(onnxtest.KokoroOptions{Speed: worker.Int64}), `kokoro model: input "speed" is int64, want float32 or int32`},
		{"not a model", false, []byte("not a model"), "inspect model"},
		{"not a library", true, onnxtest.Piper(onnxtest.PiperOptions{}), "--onnxruntime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var cfg worker.Config
			if tt.library {
				cfg.Library = onnxtest.Write(t, "libonnxruntime.so", tt.model)
			}
			p := mustPool(t, cfg, tt.model)
			_, _, err := p.Info(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Info = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestHeavyModel runs a model as heavy as Kokoro's fp32 one (330 MB of weights) in a sandboxed
// worker under the default memory limit, and shows that the limit holds: under 2 GiB, where a
// light model runs, the worker cannot load it.
func TestHeavyModel(t *testing.T) {
	t.Parallel()
	opts := onnxtest.PiperOptions{Weights: 330 << 20 / 4}
	heavy := onnxtest.Write(t, "heavy.onnx", onnxtest.Piper(opts))
	light := mustPool(t, worker.Config{Memory: 2 << 30}, onnxtest.Piper(onnxtest.PiperOptions{}))
	if _, err := light.Piper(t.Context(), sentence(1), limit); err != nil {
		t.Fatalf("a light model under 2 GiB: %v", err)
	}
	small := mustPool(t, worker.Config{Model: heavy, Memory: 2 << 30}, nil)
	if _, _, err := small.Info(t.Context()); err == nil {
		t.Error("a worker limited to 2 GiB loaded the heavy model")
	} else {
		t.Logf("the heavy model under 2 GiB: %v", err)
	}
	p := mustPool(t, worker.Config{Model: heavy, Threads: 2}, nil)
	samples, err := p.Piper(t.Context(), sentence(1), limit)
	if err != nil {
		t.Fatal(err)
	}
	wantPiper(t, samples, opts, sentence(1))
}

// restarts is a proc.Recorder that counts replaced workers.
type restarts struct {
	mu        sync.Mutex
	restarted int
}

func (r *restarts) Busy(int) {}
func (r *restarts) Restarted() {
	r.mu.Lock()
	r.restarted++
	r.mu.Unlock()
}
func (r *restarts) TimedOut() {}
func (r *restarts) n() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarted
}

// TestModelThatHangs runs a model that spins for ever inside onnxruntime: the worker is killed
// at the run's limit, both times.
func TestModelThatHangs(t *testing.T) {
	t.Parallel()
	p := mustPool(t, worker.Config{}, onnxtest.Piper(onnxtest.PiperOptions{Hang: true}))
	_, err := p.Piper(t.Context(), sentence(0), 3*time.Second)
	if !errors.Is(err, proc.ErrHung) || strings.Count(err.Error(), "no answer within 3s, killed") != 2 {
		t.Errorf("Piper = %v, want two attempts killed at their limit", err)
	}
}
