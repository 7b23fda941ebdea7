package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// fakeWorkerArg makes the test binary a worker process that serves a fake model (see
// TestMain), so that the pool's tests need no onnxruntime. Those of package onnx run the real
// one.
const fakeWorkerArg = "fake-onnx-worker"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fakeWorkerArg {
		if err := fakeWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeWorker serves a fakeModel whose signature is the JSON of the "model" file.
func fakeWorker(args []string) error {
	f, err := worker.ParseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(f.Model)
	if err != nil {
		return err
	}
	m := &fakeModel{meet: make(chan struct{})}
	if err := json.Unmarshal(b, &m.info); err != nil {
		return fmt.Errorf("fake model: %w", err)
	}
	if _, err := os.ReadFile(f.Library); err != nil {
		return err
	}
	return worker.Serve(context.Background(), os.Stdin, os.Stdout, m, worker.ServeOptions{Runs: f.Runs, Fault: f.Fault})
}

// fakeModel echoes its input as samples: the IDs, the scales and the speaker for Piper; the
// tokens, the style and the speed for Kokoro. A Piper run whose first ID is refuseID fails; one
// whose first ID is meetID waits until another such run meets it.
type fakeModel struct {
	info worker.Info
	meet chan struct{}
}

const (
	refuseID = -2
	meetID   = -1
)

func (m *fakeModel) Info() worker.Info { return m.info }

func (m *fakeModel) Piper(in worker.PiperInput) ([]float32, error) {
	switch in.IDs[0] {
	case refuseID:
		return nil, errors.New("refused")
	case meetID:
		select {
		case m.meet <- struct{}{}:
		case <-m.meet:
		}
	}
	return piperEcho(in), nil
}

func (m *fakeModel) Kokoro(in worker.KokoroInput) ([]float32, error) {
	s := make([]float32, 0, len(in.Tokens)+len(in.Style)+1)
	for _, id := range in.Tokens {
		s = append(s, float32(id))
	}
	return append(append(s, in.Style...), in.Speed), nil
}

func piperEcho(in worker.PiperInput) []float32 {
	s := make([]float32, 0, len(in.IDs)+4)
	for _, id := range in.IDs {
		s = append(s, float32(id))
	}
	return append(s, in.NoiseScale, in.LengthScale, in.NoiseW, float32(in.Speaker))
}

// counts is a proc.Recorder that counts.
type counts struct {
	busy, restarted, timedOut atomic.Int64
}

func (c *counts) Busy(d int) { c.busy.Add(int64(d)) }
func (c *counts) Restarted() { c.restarted.Add(1) }
func (c *counts) TimedOut()  { c.timedOut.Add(1) }
func (c *counts) String() string {
	return fmt.Sprintf("busy %d, restarted %d, timed out %d", c.busy.Load(), c.restarted.Load(), c.timedOut.Load())
}

// mustPool returns a Pool of fake workers whose model has the signature info, closed when the
// test ends.
func mustPool(t *testing.T, cfg worker.Config, info worker.Info) *worker.Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Command = []string{exe, fakeWorkerArg}
	cfg.Model, cfg.Library = filepath.Join(dir, "model.json"), filepath.Join(dir, "libfake.so")
	for path, content := range map[string][]byte{cfg.Model: b, cfg.Library: []byte("a library")} {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// limit is the time limit of runs that should succeed: far longer than any takes.
const limit = time.Minute

// mustEcho runs in on p within d and fails the test unless the model echoes it.
func mustEcho(t *testing.T, p *worker.Pool, in worker.PiperInput, d time.Duration) {
	t.Helper()
	got, err := p.Piper(t.Context(), in, d)
	if err != nil {
		t.Fatalf("Piper(%v): %v", in.IDs, err)
	}
	if diff := cmp.Diff(piperEcho(in), got); diff != "" {
		t.Errorf("Piper(%v) samples (-want +got):\n%s", in.IDs, diff)
	}
}

// startRun starts a run of in on p with ctx and returns its error's channel once p counts
// the run busy.
func startRun(ctx context.Context, p *worker.Pool, rec *counts, in worker.PiperInput, d time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := p.Piper(ctx, in, d)
		done <- err
	}()
	for rec.busy.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	return done
}

func TestPoolRuns(t *testing.T) {
	t.Parallel()
	for _, sandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(t *testing.T) {
			t.Parallel()
			var cfg worker.Config
			if sandboxed {
				// The model and library lie in the test's temporary directory, which the
				// sandbox does not show (its /tmp is empty): the worker reads them through
				// the descriptors it inherits.
				cfg.Sandbox = proctest.Sandbox(t)
			}
			piper := mustPool(t, cfg, piperInfo())
			kind, info, err := piper.Info(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if kind != worker.Piper || !cmp.Equal(info, piperInfo()) {
				t.Errorf("Info = %q, %+v; want piper, %+v", kind, info, piperInfo())
			}
			mustEcho(t, piper, worker.PiperInput{IDs: []int64{1, 0, 32, 0, 2}, NoiseScale: 0.667, LengthScale: 1, NoiseW: 0.8, Speaker: 4}, limit)

			kokoro := mustPool(t, cfg, kokoroInfo())
			style := []float32{0.25, 0.5, 0.75}
			got, err := kokoro.Kokoro(t.Context(), worker.KokoroInput{Tokens: []int64{0, 7, 0}, Style: style, Speed: 1.5}, limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]float32{0, 7, 0, 0.25, 0.5, 0.75, 1.5}, got); diff != "" {
				t.Errorf("Kokoro samples (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPoolRefusesAWrongSignature(t *testing.T) {
	t.Parallel()
	info := piperInfo()
	info.Inputs[0].Type = worker.Int32
	p := mustPool(t, worker.Config{}, info)
	_, _, err := p.Info(t.Context())
	if err == nil || !strings.Contains(err.Error(), `piper model: input "input" is int32, want int64`) {
		t.Errorf("Info = %v, want the worker's reason", err)
	}
	if _, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{1}}, limit); err == nil {
		t.Error("Piper succeeded on a model with a wrong signature")
	}
}

func TestPoolRunErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	rec := &counts{}
	p := mustPool(t, worker.Config{Metrics: rec}, piperInfo())
	_, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{refuseID}}, limit)
	if !errors.Is(err, worker.ErrRun) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Piper = %v, want ErrRun with the model's reason", err)
	}
	// The worker lives on.
	if _, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{3}}, limit); err != nil {
		t.Fatal(err)
	}
	if rec.restarted.Load() != 0 {
		t.Errorf("metrics: %s; want no restart", rec)
	}
}

func TestPoolCrash(t *testing.T) {
	t.Parallel()
	t.Run("retried on a fresh worker", func(t *testing.T) {
		t.Parallel()
		rec := &counts{}
		// Each worker crashes on its second request: the second run is retried on a new
		// worker, whose second request, the third run, crashes it and is retried on a third.
		p := mustPool(t, worker.Config{Fault: worker.Fault{CrashAt: 2}, Metrics: rec}, piperInfo())
		for i := range 3 {
			mustEcho(t, p, worker.PiperInput{IDs: []int64{int64(i + 10)}}, limit)
		}
		if rec.restarted.Load() != 2 || rec.timedOut.Load() != 0 || rec.busy.Load() != 0 {
			t.Errorf("metrics: %s; want two restarts", rec)
		}
	})
	t.Run("twice", func(t *testing.T) {
		t.Parallel()
		rec := &counts{}
		p := mustPool(t, worker.Config{Fault: worker.Fault{CrashAt: 1}, Metrics: rec, Sandbox: proctest.Sandbox(t)}, piperInfo())
		_, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{1}}, limit)
		if err == nil || errors.Is(err, worker.ErrRun) || strings.Count(err.Error(), "onnx worker") < 2 {
			t.Errorf("Piper = %v, want the errors of two crashed workers", err)
		}
		if rec.restarted.Load() != 2 {
			t.Errorf("metrics: %s; want two restarts", rec)
		}
	})
}

func TestPoolHang(t *testing.T) {
	t.Parallel()
	rec := &counts{}
	// Each worker hangs on its second request: the second run is killed at its limit and
	// retried on a new worker.
	p := mustPool(t, worker.Config{Fault: worker.Fault{HangAt: 2}, Metrics: rec}, piperInfo())
	if _, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{1}}, limit); err != nil {
		t.Fatal(err)
	}
	in := worker.PiperInput{IDs: []int64{2}}
	mustEcho(t, p, in, 2*time.Second)
	if rec.restarted.Load() != 1 || rec.timedOut.Load() != 1 {
		t.Errorf("metrics: %s; want one hung worker, restarted", rec)
	}

	// A worker that hangs on every run fails both attempts, each with ErrHung.
	hung := mustPool(t, worker.Config{Fault: worker.Fault{HangAt: 1}}, piperInfo())
	_, err := hung.Piper(t.Context(), in, time.Second)
	if !errors.Is(err, proc.ErrHung) || strings.Count(err.Error(), "no answer within 1s") != 2 {
		t.Errorf("Piper = %v, want two hung attempts", err)
	}
}

func TestPoolConcurrentRuns(t *testing.T) {
	t.Parallel()
	p := mustPool(t, worker.Config{Workers: 2, Runs: 2}, piperInfo())
	var wg sync.WaitGroup
	errs := make([]error, 24)
	for i := range errs {
		wg.Go(func() {
			in := worker.PiperInput{IDs: slices.Repeat([]int64{int64(i)}, i+1), Speaker: int64(i)}
			got, err := p.Piper(t.Context(), in, limit)
			if err == nil && !cmp.Equal(piperEcho(in), got) {
				err = fmt.Errorf("run %d: got %v, want %v", i, got, piperEcho(in))
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}

func TestPoolRunsShareAWorker(t *testing.T) {
	t.Parallel()
	// One worker of two runs: two runs that each wait for the other complete only if the
	// worker makes them at once.
	p := mustPool(t, worker.Config{Workers: 1, Runs: 2}, piperInfo())
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = p.Piper(t.Context(), worker.PiperInput{IDs: []int64{meetID}}, limit)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}

func TestPoolCloseAndCancel(t *testing.T) {
	t.Parallel()
	p := mustPool(t, worker.Config{}, piperInfo())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Piper(ctx, worker.PiperInput{IDs: []int64{1}}, limit); !errors.Is(err, context.Canceled) {
		t.Errorf("Piper with a cancelled context = %v", err)
	}
	if _, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{1}}, limit); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{1}}, limit); !errors.Is(err, worker.ErrClosed) {
		t.Errorf("Piper after Close = %v, want ErrClosed", err)
	}
}

func TestPoolStartFailure(t *testing.T) {
	t.Parallel()
	p := mustPool(t, worker.Config{}, piperInfo())
	// The fake worker exits with this message.
	exe, _ := os.Executable()
	bad, err := worker.New(worker.Config{Command: []string{exe, fakeWorkerArg, "--bogus"}, Model: os.Args[0], Library: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bad.Close() })
	_, err = bad.Piper(t.Context(), worker.PiperInput{IDs: []int64{1}}, limit)
	if err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -bogus") {
		t.Errorf("Piper = %v, want the worker's complaint", err)
	}
	if _, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{1}}, limit); err != nil {
		t.Error(err)
	}
	if _, err := worker.New(worker.Config{Command: []string{exe}, Model: "/nonexistent.onnx", Library: exe}); err == nil {
		t.Error("New with a missing model succeeded")
	}
}

func TestPoolAbandonedRunKeepsItsLimit(t *testing.T) {
	t.Parallel()
	rec := &counts{}
	p := mustPool(t, worker.Config{Workers: 1, Runs: 1, Metrics: rec}, piperInfo())
	// A run that never ends (it waits for a partner that never comes), abandoned by its
	// caller: the worker is still killed at the run's limit, and the next run, queued behind
	// it in that worker, is retried on a fresh one.
	ctx, cancel := context.WithCancel(t.Context())
	done := startRun(ctx, p, rec, worker.PiperInput{IDs: []int64{meetID}}, 2*time.Second)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned run = %v, want context.Canceled", err)
	}
	mustEcho(t, p, worker.PiperInput{IDs: []int64{5}}, limit)
	if rec.restarted.Load() != 1 {
		t.Errorf("metrics: %s; want one restart", rec)
	}
}

func TestPoolFaultOnce(t *testing.T) {
	t.Parallel()
	t.Run("hang", func(t *testing.T) {
		t.Parallel()
		rec := &counts{}
		pidFile := filepath.Join(t.TempDir(), "pid")
		// The first worker hangs on its first run, leaving a child in its process group; the
		// retry, on a second worker without the fault, succeeds, and the child dies with the
		// first worker's group.
		p := mustPool(t, worker.Config{Fault: worker.Fault{HangAt: 1, Once: true, PIDFile: pidFile}, Metrics: rec}, piperInfo())
		mustEcho(t, p, worker.PiperInput{IDs: []int64{4}}, 5*time.Second)
		if rec.restarted.Load() != 1 || rec.timedOut.Load() != 1 {
			t.Errorf("metrics: %s; want one hung worker, restarted", rec)
		}
		proctest.Exited(t, proctest.PID(t, pidFile), "child of a hung worker: the process group was not killed")
	})
	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		p := mustPool(t, worker.Config{Fault: worker.Fault{CrashAt: 1, Once: true}}, piperInfo())
		if _, err := p.Piper(t.Context(), worker.PiperInput{IDs: []int64{4}}, limit); err != nil {
			t.Fatal(err)
		}
		// Every worker crashes: the error has the worker's last words.
		crash := mustPool(t, worker.Config{Fault: worker.Fault{CrashAt: 1}}, piperInfo())
		_, err := crash.Piper(t.Context(), worker.PiperInput{IDs: []int64{4}}, limit)
		if err == nil || !strings.Contains(err.Error(), "signal: killed") || !strings.Contains(err.Error(), "boom") {
			t.Errorf("Piper = %v, want the worker killed, with its stderr", err)
		}
	})
}

func TestPoolCloseStopsRuns(t *testing.T) {
	t.Parallel()
	rec := &counts{}
	p := mustPool(t, worker.Config{Fault: worker.Fault{HangAt: 1}, Metrics: rec}, piperInfo())
	if err := p.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	done := startRun(t.Context(), p, rec, worker.PiperInput{IDs: []int64{1}}, limit)
	p.Close()
	if err := <-done; !errors.Is(err, worker.ErrClosed) {
		t.Errorf("a run under way at Close = %v, want ErrClosed", err)
	}
	if err := p.Ping(t.Context()); !errors.Is(err, worker.ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
}
