package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// ErrClosed is returned by Runner.Run after Close.
var ErrClosed = errors.New("proc: runner closed")

// Runner runs units of work, one short-lived process each, at most a fixed number at a time. It
// is safe for concurrent use.
type Runner struct {
	name string
	log  *slog.Logger
	rec  Recorder
	sem  chan struct{}

	mu      sync.Mutex
	running map[*exec.Cmd]struct{}
	closed  bool
}

// NewRunner returns a Runner that runs at most procs processes at once (zero or less means one
// per CPU). name is the program's name in errors and log records; log receives a warning for
// every failed attempt, and nil discards them. rec is told of busy, failed and hung processes;
// nil means Discard.
func NewRunner(name string, procs int, log *slog.Logger, rec Recorder) *Runner {
	if procs <= 0 {
		procs = runtime.NumCPU()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if rec == nil {
		rec = Discard
	}
	return &Runner{
		name:    name,
		log:     log,
		rec:     rec,
		sem:     make(chan struct{}, procs),
		running: make(map[*exec.Cmd]struct{}),
	}
}

// Run runs one unit of work. It waits for a free slot, then for each attempt calls build for a
// fresh, unstarted command (Run sets its Stdout, Stderr, SysProcAttr and WaitDelay), runs it,
// and, if it exits cleanly within limit, passes its stdout to parse (if not nil), which reads
// the result. A process that exits with an error or overruns limit is killed with its process
// group; it, or an error from parse, fails the attempt, which is logged with logArgs (slog
// key-value pairs) and retried once.
//
// Run returns ctx.Err() if ctx ends first (the process is killed), ErrClosed if the Runner is
// closed, and otherwise the errors of both attempts, joined, each with the tail of the
// process's stderr.
func (r *Runner) Run(ctx context.Context, limit time.Duration, build func() *exec.Cmd, parse func(stdout []byte) error, logArgs ...any) error {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.sem }()

	var errs []error
	for attempt := range 2 {
		err := r.once(ctx, limit, build, parse)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrClosed) {
			return err
		}
		args := append([]any{"attempt", attempt + 1}, logArgs...)
		r.log.WarnContext(ctx, r.name+" unit failed", append(args, "err", err)...)
		r.rec.Restarted()
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// once makes one attempt at a unit.
func (r *Runner) once(ctx context.Context, limit time.Duration, build func() *exec.Cmd, parse func(stdout []byte) error) error {
	cmd := build()
	Isolate(cmd)
	// Should a child escape the group kill and hold our pipes, stop waiting for it.
	cmd.WaitDelay = time.Second
	var stdout bytes.Buffer
	stderr := &Tail{}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if err := r.start(cmd); err != nil {
		return err
	}
	defer r.forget(cmd)
	r.rec.Busy(1)
	defer r.rec.Busy(-1)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("%s: %w%s", r.name, err, stderr.Suffix())
		}
	case <-timer.C:
		Kill(cmd)
		<-exited
		r.rec.TimedOut()
		return fmt.Errorf("%s hung: no result within %s, killed%s", r.name, limit, stderr.Suffix())
	case <-ctx.Done():
		Kill(cmd)
		<-exited
		return ctx.Err()
	}
	if parse == nil {
		return nil
	}
	if err := parse(stdout.Bytes()); err != nil {
		return fmt.Errorf("%s output: %w%s", r.name, err, stderr.Suffix())
	}
	return nil
}

// start starts cmd unless the Runner is closed, and remembers it for Close.
func (r *Runner) start(cmd *exec.Cmd) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", r.name, err)
	}
	Lower(cmd)
	r.running[cmd] = struct{}{}
	return nil
}

// forget drops cmd, which has exited, from the running set.
func (r *Runner) forget(cmd *exec.Cmd) {
	r.mu.Lock()
	delete(r.running, cmd)
	r.mu.Unlock()
}

// Ping reports whether the Runner can still run program: ErrClosed after
// Close, and an error if program is no longer installed.
func (r *Runner) Ping(program string) error {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if _, err := exec.LookPath(program); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	return nil
}

// Close kills every running process with its group (their callers get an error). Later calls
// to Run return ErrClosed. Close may be called more than once.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for cmd := range r.running {
		Kill(cmd)
	}
}
