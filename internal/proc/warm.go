package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// ErrHung marks a warm process killed for overrunning an exchange's time limit.
var ErrHung = errors.New("hung")

// A Warm is a long-lived process that takes commands on its stdin and answers in lines on
// its stdout, one exchange at a time: festival's workers, and the shells that run lame for
// each chunk. It lives in a process group of its own (Isolate) at niceness Nice, and has a
// scratch directory, removed when it is killed. A Warm is used by one goroutine at a time;
// Kill may be called from any.
type Warm struct {
	name     string
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out      *bufio.Reader
	stderr   *Tail
	exited   chan struct{} // closed once the process has been waited for
	killOnce sync.Once
	dir      string
}

// StartWarm starts cmd, named name in errors, whose scratch directory is dir ("" for none),
// with its stderr kept in stderr (nil for a Tail of the default size).
func StartWarm(name string, cmd *exec.Cmd, dir string, stderr *Tail) (*Warm, error) {
	if stderr == nil {
		stderr = &Tail{}
	}
	Isolate(cmd)
	// Should a child escape the group kill and hold our pipes, stop waiting for it.
	cmd.WaitDelay = time.Second
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	Lower(cmd)
	w := &Warm{name: name, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), stderr: stderr, exited: make(chan struct{}), dir: dir}
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// Dir is the process's scratch directory.
func (w *Warm) Dir() string { return w.dir }

// Stderr is the tail of what the process wrote on stderr since the last exchange began.
func (w *Warm) Stderr() *Tail { return w.stderr }

// Exchange writes msg to the process and passes each line it answers, without its line end,
// to line, until line reports the answer done or returns an error, which Exchange returns as
// it is. The process is taken to live on if line fails on the answer's last line (done);
// failing before it, line leaves the rest of the answer unread, so the process is killed,
// lest the next exchange read it. Exchange also kills the process if limit passes first
// (the error then matches ErrHung) or ctx ends (the error is ctx.Err()). If the process
// stops reading or answering, the error says how it exited, with the tail of its stderr.
func (w *Warm) Exchange(ctx context.Context, msg string, limit time.Duration, line func(string) (done bool, err error)) error {
	// A process that died since the last exchange said why on stderr before this one began.
	before := w.stderr.String()
	w.stderr.Reset()
	type reply struct {
		err error
		io  bool // the pipe broke, rather than line failing
	}
	replies := make(chan reply, 1)
	go func() {
		if _, err := io.WriteString(w.stdin, msg); err != nil {
			replies <- reply{fmt.Errorf("write command: %w", err), true}
			return
		}
		for {
			s, err := w.out.ReadString('\n')
			if err != nil {
				replies <- reply{fmt.Errorf("read reply: %w", err), true}
				return
			}
			done, err := line(s[:len(s)-1])
			if err != nil && !done {
				w.Kill()
			}
			if err != nil || done {
				replies <- reply{err, false}
				return
			}
		}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-replies:
		if !r.io {
			return r.err
		}
		// The process died, or is dying. Wait for its exit status.
		select {
		case <-w.exited:
			return fmt.Errorf("%s %s: %w%s", w.name, w.cmd.ProcessState, r.err, w.lastWords(before))
		case <-time.After(time.Second):
			return fmt.Errorf("%s: %w%s", w.name, r.err, w.lastWords(before))
		}
	case <-timer.C:
		w.Kill()
		<-replies
		return fmt.Errorf("%s: %w: no reply within %s, killed%s", w.name, ErrHung, limit, w.stderr.Suffix())
	case <-ctx.Done():
		w.Kill()
		<-replies
		return ctx.Err()
	}
}

// lastWords is the Suffix of what the process wrote on stderr during the exchange or, if it
// wrote nothing then, of what it wrote before (before): a process that dies between two
// exchanges writes why before the second begins.
func (w *Warm) lastWords(before string) string {
	if s := w.stderr.Suffix(); s != "" {
		return s
	}
	t := &Tail{Size: w.stderr.Size, SkipFunc: w.stderr.SkipFunc}
	_, _ = t.Write([]byte(before))
	return t.Suffix()
}

// Kill kills the process group, waits until the process is reaped and removes its scratch
// directory. It may be called more than once, and concurrently.
func (w *Warm) Kill() {
	w.killOnce.Do(func() {
		// Even if the process itself has died, children may be left in its group.
		Kill(w.cmd)
		_ = w.stdin.Close()
	})
	<-w.exited
	if w.dir != "" {
		_ = os.RemoveAll(w.dir)
	}
}
