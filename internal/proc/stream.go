package proc

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// Stream is a long-lived process that transforms a stream, such as an encoder: what is written
// to the Stream goes to the process's stdin, and the process's stdout is copied to a writer as
// it comes, so memory stays flat however long the stream. It is not safe for concurrent use.
//
// Streams have no concurrency cap: unlike a Runner's units, which many goroutines run at once,
// each Stream serves one stream of work (an audio being encoded) from start to end, and the
// owner of that work caps how many run at once.
type Stream struct {
	name   string
	ctx    context.Context
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *Tail
	out    *recordingWriter
	stop   func() bool // stops the kill on ctx's end
	closed bool
	err    error
}

// StartStream starts cmd, not yet started, as a Stream. name is the program's name in errors.
// The process's stdout is written to stdout, from another goroutine, until Close returns; the
// tail of its stderr is kept in stderr, nil meaning a new Tail. StartStream sets cmd's Stdin,
// Stdout, Stderr, SysProcAttr and WaitDelay.
//
// The process runs in a process group of its own (Isolate), which is killed when ctx ends. It
// returns ctx.Err() if ctx has already ended. The caller must call Close.
func StartStream(ctx context.Context, name string, cmd *exec.Cmd, stdout io.Writer, stderr *Tail) (*Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if stderr == nil {
		stderr = &Tail{}
	}
	Isolate(cmd)
	// Should a child escape the group kill and hold our pipes, stop waiting for it.
	cmd.WaitDelay = time.Second
	out := &recordingWriter{w: stdout}
	cmd.Stdout = out
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	Lower(cmd)
	return &Stream{
		name:   name,
		ctx:    ctx,
		cmd:    cmd,
		stdin:  stdin,
		stderr: stderr,
		out:    out,
		stop:   context.AfterFunc(ctx, func() { Kill(cmd) }),
	}, nil
}

// Write writes p to the process's stdin, blocking while the process catches up. If ctx has
// ended, or the process no longer reads its input, Write ends the Stream as Close does and
// returns Close's error (which explains more than a broken pipe); so do later calls.
func (s *Stream) Write(p []byte) (int, error) {
	if s.closed {
		if s.err != nil {
			return 0, s.err
		}
		return 0, fmt.Errorf("write to %s after Close", s.name)
	}
	if err := s.ctx.Err(); err != nil {
		s.end(err)
		return 0, s.err
	}
	n, err := s.stdin.Write(p)
	if err != nil {
		s.end(fmt.Errorf("write to %s: %w", s.name, err))
		return n, s.err
	}
	return n, nil
}

// Close closes the process's stdin, waits for the process to exit and for its stdout to be
// written, and returns nil if it exited cleanly. Otherwise it returns ctx.Err() if ctx ended
// first (the process group was killed), the error of stdout's Write if that failed (the
// process then dies of a broken pipe), or the process's exit status with the tail of its
// stderr. Close may be called more than once, and returns the same error every time.
func (s *Stream) Close() error {
	if !s.closed {
		s.end(nil)
	}
	return s.err
}

// end closes the process's stdin, waits for it, and records its error or else cause.
func (s *Stream) end(cause error) {
	s.closed = true
	closeErr := s.stdin.Close()
	err := s.wait()
	s.stop()
	switch {
	case err != nil:
		s.err = err
	case cause != nil:
		s.err = cause
	case closeErr != nil:
		s.err = fmt.Errorf("close %s input: %w", s.name, closeErr)
	}
}

// wait waits for the process and describes a failure, preferring its cause when that was the
// context or the destination writer: the process then dies of a signal, which says little.
func (s *Stream) wait() error {
	err := s.cmd.Wait()
	if err == nil {
		return nil
	}
	if cerr := s.ctx.Err(); cerr != nil {
		return cerr
	}
	if werr := s.out.error(); werr != nil {
		return fmt.Errorf("%s output: %w", s.name, werr)
	}
	return fmt.Errorf("%s: %w%s", s.name, err, s.stderr.Suffix())
}

// recordingWriter passes writes on to w and remembers the first error.
type recordingWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
	return n, err
}

func (r *recordingWriter) error() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
