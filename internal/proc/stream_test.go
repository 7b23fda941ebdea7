package proc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// mustStream starts the shell script as a Stream named "tool" whose stdout goes to w and whose
// stderr tail leaves out noise.
func mustStream(tb testing.TB, ctx context.Context, script string, w io.Writer) *proc.Stream {
	tb.Helper()
	proctest.NeedProgram(tb, "sh", "apt-get install dash")
	s, err := proc.StartStream(ctx, "tool", exec.Command("sh", "-c", script), w, &proc.Tail{SkipFunc: noise})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// writeUntilError writes chunk up to n times, stopping at the first error, then closes s and
// returns the first error of all.
func writeUntilError(s *proc.Stream, chunk []byte, n int) error {
	var err error
	for range n {
		if _, err = s.Write(chunk); err != nil {
			break
		}
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

func TestStream(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	s := mustStream(t, t.Context(), "tr a-z A-Z", &out)
	for _, chunk := range []string{"hello, ", "stream", strings.Repeat("x", 1<<20)} {
		if _, err := s.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "HELLO, STREAM" + strings.Repeat("X", 1<<20); out.String() != want {
		t.Errorf("stdout = %d bytes starting %.20q, want %d bytes starting %.20q", out.Len(), out.String(), len(want), want)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := s.Write([]byte("late")); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Errorf("Write after Close = %v, want an error", err)
	}
}

func TestStreamErrors(t *testing.T) {
	t.Parallel()
	full := errors.New("disk full")
	tests := []struct {
		name   string
		script string
		out    io.Writer // nil means a buffer
		want   string
		wantIs error
	}{
		{
			name:   "exits with an error",
			script: "echo 'WARN: noise' >&2; echo oops >&2; exit 3",
			want:   "tool: exit status 3; stderr: oops",
		},
		{
			name:   "exits with an error after reading",
			script: "head -c 100000 >/dev/null; echo oops >&2; exit 3",
			want:   "tool: exit status 3; stderr: oops",
		},
		{
			name:   "destination fails",
			script: "cat",
			out:    failingWriter{full},
			want:   "tool output: disk full",
			wantIs: full,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := tt.out
			if out == nil {
				out = &bytes.Buffer{}
			}
			s := mustStream(t, t.Context(), tt.script, out)
			err := writeUntilError(s, bytes.Repeat([]byte("x"), 8192), 1000)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error = %v, want it to match %v", err, tt.wantIs)
			}
			if again := s.Close(); again != err {
				t.Errorf("second Close = %v, want the same error %v", again, err)
			}
		})
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestStreamStart(t *testing.T) {
	t.Parallel()
	if _, err := proc.StartStream(t.Context(), "tool", exec.Command("/nonexistent/tool"), &bytes.Buffer{}, nil); err == nil || !strings.HasPrefix(err.Error(), "start tool: ") {
		t.Errorf("missing program: err = %v, want start tool: …", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := proc.StartStream(ctx, "tool", exec.Command("cat"), &bytes.Buffer{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("ended context: err = %v, want context.Canceled", err)
	}
}

// TestStreamCancel checks that when ctx ends, a Write blocked on a process that reads nothing
// returns promptly with ctx's error, and that the whole process group was killed: a child that
// holds the process's stdout would otherwise keep Close waiting.
func TestStreamCancel(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	s := mustStream(t, ctx, "sleep 100 & echo $! > "+pidFile+"; exec sleep 100", &out)
	pid := proctest.PID(t, pidFile)
	start := time.Now()
	err := writeUntilError(s, bytes.Repeat([]byte("x"), 8192), 1000)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %s, want soon after the deadline", d)
	}
	proctest.Exited(t, pid, "child of a cancelled stream")
}

// TestStreamLowersPriority checks that a started process's group runs at
// proc.Nice: the shell waits for a line, so that the child it then starts
// is forked only after StartStream has returned, and the child prints its
// own niceness (field 19 of /proc/self/stat).
func TestStreamLowersPriority(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "sh", "apt-get install dash")
	var out bytes.Buffer
	s, err := proc.StartStream(t.Context(), "tool", exec.Command("sh", "-c", "read x; cut -d' ' -f19 /proc/self/stat"), &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), strconv.Itoa(proc.Nice); got != want {
		t.Errorf("niceness of the started process's child = %q, want %q", got, want)
	}
}
