package proc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// echoer starts a shell that answers each line it reads with "got LINE",
// dies on "die", and hangs (with a child) on "hang", writing the child's
// PID to pidFile.
func echoer(t *testing.T, pidFile string) *proc.Warm {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scratch")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	script := `while read -r l; do
case "$l" in
die) echo dying >&2; exit 3;;
hang) sleep 1000 & echo $! > "` + pidFile + `"; wait;;
*) echo "got $l";;
esac
done`
	w, err := proc.StartWarm("echoer", exec.Command("sh", "-c", script), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Kill)
	return w
}

// answer is an Exchange callback that keeps the first line.
func answer(got *string) func(string) (bool, error) {
	return func(line string) (bool, error) { *got = line; return true, nil }
}

func TestWarmExchanges(t *testing.T) {
	t.Parallel()
	w := echoer(t, "")
	var got string
	for _, msg := range []string{"one", "two"} {
		if err := w.Exchange(t.Context(), msg+"\n", 5*time.Second, answer(&got)); err != nil || got != "got "+msg {
			t.Fatalf("Exchange(%q) = %q, %v", msg, got, err)
		}
	}
	// A callback's error is returned as it is, and the process lives on.
	refused := errors.New("refused")
	if err := w.Exchange(t.Context(), "three\n", 5*time.Second, func(string) (bool, error) { return true, refused }); err != refused {
		t.Errorf("Exchange with a failing callback = %v, want its error", err)
	}
	if err := w.Exchange(t.Context(), "four\n", 5*time.Second, answer(&got)); err != nil || got != "got four" {
		t.Errorf("Exchange after a callback's error = %q, %v", got, err)
	}
}

func TestWarmDies(t *testing.T) {
	t.Parallel()
	w := echoer(t, "")
	var got string
	err := w.Exchange(t.Context(), "die\n", 5*time.Second, answer(&got))
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "dying") {
		t.Errorf("Exchange with a dying process = %v, want its exit status and stderr", err)
	}
}

// A process that dies between two exchanges, saying why on stderr, fails the next exchange
// with what it said, though the exchange begins after it has died.
func TestWarmDiedBefore(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	w, err := proc.StartWarm("crasher", exec.Command("sh", "-c", `echo $$ > "`+pidFile+`"; echo boom >&2; exit 1`), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Kill)
	proctest.Exited(t, proctest.PID(t, pidFile), "crasher")
	// Time for the process to be reaped and its stderr copied.
	time.Sleep(200 * time.Millisecond)
	var got string
	err = w.Exchange(t.Context(), "hello\n", 5*time.Second, answer(&got))
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Exchange with a process that had died = %v, want its stderr", err)
	}
}

func TestWarmHangAndKill(t *testing.T) {
	t.Parallel()
	for _, cancel := range []bool{false, true} {
		pidFile := filepath.Join(t.TempDir(), "child.pid")
		w := echoer(t, pidFile)
		ctx, stop := context.WithCancel(t.Context())
		limit := 300 * time.Millisecond
		if cancel {
			limit = time.Minute
			go func() {
				// Cancel once the process hangs (PID, which may fail the
				// test, is for the test's goroutine).
				for ctx.Err() == nil {
					if raw, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(raw), "\n") {
						stop()
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
		var got string
		err := w.Exchange(ctx, "hang\n", limit, answer(&got))
		stop()
		if cancel && !errors.Is(err, context.Canceled) {
			t.Errorf("Exchange cancelled = %v, want context.Canceled", err)
		}
		if !cancel && !errors.Is(err, proc.ErrHung) {
			t.Errorf("Exchange past its limit = %v, want ErrHung", err)
		}
		proctest.Exited(t, proctest.PID(t, pidFile), "the hung process's child")
		if _, err := os.Stat(w.Dir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("scratch directory after the kill: %v, want it removed", err)
		}
	}
}
