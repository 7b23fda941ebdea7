package proc_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/logtest"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// script is the shell script of each attempt; the last one repeats.
type script []string

// build returns a build func for Runner.Run that runs the scripts in turn, and the count of
// its calls.
func (s script) build() (func() *exec.Cmd, *atomic.Int32) {
	var calls atomic.Int32
	return func() *exec.Cmd {
		i := int(calls.Add(1)) - 1
		return exec.Command("sh", "-c", s[min(i, len(s)-1)])
	}, &calls
}

// recorder counts what a Runner tells its proc.Recorder.
type recorder struct {
	busy, maxBusy, restarted, timedOut atomic.Int32
}

func (r *recorder) Busy(delta int) {
	n := r.busy.Add(int32(delta))
	for m := r.maxBusy.Load(); n > m && !r.maxBusy.CompareAndSwap(m, n); m = r.maxBusy.Load() {
	}
}
func (r *recorder) Restarted() { r.restarted.Add(1) }
func (r *recorder) TimedOut()  { r.timedOut.Add(1) }

// mustRunner returns a Runner of procs processes named "tool" that logs to the returned
// buffer and records to the returned recorder, closed when the test ends.
func mustRunner(tb testing.TB, procs int) (*proc.Runner, *logtest.Buffer, *recorder) {
	tb.Helper()
	proctest.NeedProgram(tb, "sh", "apt-get install dash")
	logs := &logtest.Buffer{}
	rec := &recorder{}
	r := proc.NewRunner("tool", procs, slog.New(slog.NewTextHandler(logs, nil)), rec)
	tb.Cleanup(r.Close)
	return r, logs, rec
}

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		script    script
		parse     func([]byte) error
		limit     time.Duration
		wantCalls int32
		wantErr   []string // substrings of the error; nil means success
		wantLogs  int
		// wantHung is how many processes are killed for overrunning the limit.
		wantHung int32
	}{
		{
			name:      "ok",
			script:    script{"printf hello"},
			wantCalls: 1,
		},
		{
			name:      "crash retried",
			script:    script{"echo oops >&2; exit 3", "printf hello"},
			wantCalls: 2,
			wantLogs:  1,
		},
		{
			name:      "hang killed and retried",
			script:    script{"sleep 100", "printf hello"},
			limit:     300 * time.Millisecond,
			wantCalls: 2,
			wantLogs:  1,
			wantHung:  1,
		},
		{
			name:      "always crashes",
			script:    script{"echo oops >&2; exit 3"},
			wantCalls: 2,
			wantErr:   []string{"tool: exit status 3; stderr: oops\ntool: exit status 3; stderr: oops"},
			wantLogs:  2,
		},
		{
			name:      "always hangs",
			script:    script{"echo stuck >&2; exec sleep 100"},
			limit:     200 * time.Millisecond,
			wantCalls: 2,
			wantErr:   []string{"tool hung: no result within 200ms, killed; stderr: stuck"},
			wantLogs:  2,
			wantHung:  2,
		},
		{
			name:      "bad output retried",
			script:    script{"printf garbage; echo warn >&2"},
			parse:     func(b []byte) error { return fmt.Errorf("cannot parse %q", b) },
			wantCalls: 2,
			wantErr:   []string{`tool output: cannot parse "garbage"; stderr: warn`},
			wantLogs:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, logs, rec := mustRunner(t, 1)
			build, calls := tt.script.build()
			var got []byte
			parse := tt.parse
			if parse == nil {
				parse = func(b []byte) error { got = b; return nil }
			}
			limit := tt.limit
			if limit == 0 {
				limit = 10 * time.Second
			}
			start := time.Now()
			err := r.Run(t.Context(), limit, build, parse, "voice", "v1")
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
			if n := calls.Load(); n != tt.wantCalls {
				t.Errorf("attempts = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != "hello" {
					t.Errorf("stdout = %q, want hello", got)
				}
			} else {
				if err == nil {
					t.Fatal("no error")
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("err = %q, want it to contain %q", err, want)
					}
				}
			}
			if n := strings.Count(logs.String(), `msg="tool unit failed"`); n != tt.wantLogs {
				t.Errorf("%d warnings logged, want %d:\n%s", n, tt.wantLogs, logs)
			}
			if tt.wantLogs > 0 && !strings.Contains(logs.String(), "attempt=1 voice=v1 err=") {
				t.Errorf("warning lacks attempt, log args and error:\n%s", logs)
			}
			// Every failed attempt's process was replaced; the one process ran at a time.
			if got, want := rec.restarted.Load(), int32(tt.wantLogs); got != want {
				t.Errorf("recorded %d restarts, want %d", got, want)
			}
			if got := rec.timedOut.Load(); got != tt.wantHung {
				t.Errorf("recorded %d timeouts, want %d", got, tt.wantHung)
			}
			if busy, peak := rec.busy.Load(), rec.maxBusy.Load(); busy != 0 || peak != 1 {
				t.Errorf("busy processes: %d after the run, %d at most; want 0 and 1", busy, peak)
			}
		})
	}
}

// TestRunKillsGroup checks that a hung process is killed with the children it started.
func TestRunKillsGroup(t *testing.T) {
	t.Parallel()
	r, _, _ := mustRunner(t, 1)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	build, calls := script{"sleep 100 & echo $! > " + pidFile + "; wait", "true"}.build()
	if err := r.Run(t.Context(), 300*time.Millisecond, build, nil); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("attempts = %d, want 2", n)
	}
	// The child is not the process that was killed, only in its group.
	proctest.Exited(t, proctest.PID(t, pidFile), "child sleep 100 of a hung process")
}

func TestRunCancel(t *testing.T) {
	t.Parallel()
	r, logs, _ := mustRunner(t, 1)
	build, calls := script{"sleep 100"}.build()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := r.Run(ctx, 10*time.Second, build, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %s, want soon after the deadline", d)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("attempts = %d, want 1 (no retry after cancel)", n)
	}
	if logs.String() != "" {
		t.Errorf("logged on cancel:\n%s", logs)
	}
}

// TestRunCancelWaiting checks that a unit waiting for a free slot gives up when ctx ends.
func TestRunCancelWaiting(t *testing.T) {
	t.Parallel()
	r, _, _ := mustRunner(t, 1)
	pidFile := filepath.Join(t.TempDir(), "busy.pid")
	busy, _ := script{"echo $$ > " + pidFile + "; exec sleep 100"}.build()
	done := make(chan error, 1)
	go func() { done <- r.Run(t.Context(), 10*time.Second, busy, nil) }()
	proctest.PID(t, pidFile)

	build, calls := script{"true"}.build()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := r.Run(ctx, 10*time.Second, build, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("attempts = %d, want 0", n)
	}
	r.Close()
	if err := <-done; !errors.Is(err, proc.ErrClosed) {
		t.Errorf("busy unit: err = %v, want ErrClosed", err)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	r, _, _ := mustRunner(t, 2)
	dir := t.TempDir()
	var pids []int
	done := make(chan error, 2)
	for i := range 2 {
		pidFile := filepath.Join(dir, fmt.Sprintf("%d.pid", i))
		build, _ := script{"echo $$ > " + pidFile + "; exec sleep 100"}.build()
		go func() { done <- r.Run(t.Context(), 10*time.Second, build, nil) }()
		pids = append(pids, proctest.PID(t, pidFile))
	}
	r.Close()
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, proc.ErrClosed) {
				t.Errorf("err = %v, want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run still running 5s after Close")
		}
	}
	for _, pid := range pids {
		proctest.Exited(t, pid, "running when the Runner was closed")
	}
	build, _ := script{"true"}.build()
	if err := r.Run(t.Context(), time.Second, build, nil); !errors.Is(err, proc.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
	r.Close() // a second Close is harmless
}

// TestConcurrency checks that no more than procs processes run at once.
func TestConcurrency(t *testing.T) {
	t.Parallel()
	const procs = 2
	r, _, _ := mustRunner(t, procs)
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			build := func() *exec.Cmd {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				return exec.Command("sleep", "0.05")
			}
			parse := func([]byte) error { running.Add(-1); return nil }
			if err := r.Run(t.Context(), 10*time.Second, build, parse); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > procs {
		t.Errorf("%d processes ran at once, want at most %d", p, procs)
	}
}
