// Package flite speaks text with CMU flite.
//
// flite has no server mode, and it does not need one: its voices are compiled into the binary,
// so a process starts in about 7 ms (slt; 5 ms kal16), against 70–80 ms to synthesise a
// typical 20-word sentence. The engine therefore runs one short-lived process per unit, at most
// Options.Procs at a time. A unit that hangs past its time limit is killed with its whole
// process group and retried once on a fresh process; so is one whose process crashes. Text is
// always passed with -t, never in SSML mode (flite's SSML parser can spin forever).
package flite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/narrator/narrator/internal/wav"
)

// Voices returns the voices compiled into Debian's flite, the only ones Synthesize accepts
// (flite would also take a path or URL to a voice file).
func Voices() []string { return []string{"slt", "rms", "awb", "kal16", "kal", "awb_time"} }

// ErrClosed is returned by Synthesize after Close.
var ErrClosed = errors.New("flite: engine closed")

// Options configures an Engine. The zero value is usable.
type Options struct {
	// Procs is the number of flite processes that may run at once. Zero means one per CPU.
	Procs int
	// Logger receives warnings about killed processes. Nil discards them.
	Logger *slog.Logger
	// UnitTimeout is the fixed part of one unit's time limit. Zero means 5 s.
	UnitTimeout time.Duration
	// CharTimeout is added to a unit's time limit per character of text. Zero means 200 ms.
	CharTimeout time.Duration
	// Command is the flite binary. Empty means "flite". Tests substitute programs that hang or
	// crash.
	Command string
	// TempDir is where the scratch directory for wave files is made. Empty means os.TempDir().
	TempDir string
}

// Engine synthesises speech with flite. It is safe for concurrent use.
type Engine struct {
	opts Options
	log  *slog.Logger
	dir  string
	sem  chan struct{}

	mu      sync.Mutex
	running map[*exec.Cmd]struct{}
	closed  bool

	next atomic.Int64
}

// New returns an Engine. It checks that the flite binary exists.
func New(opts Options) (*Engine, error) {
	if opts.Command == "" {
		opts.Command = "flite"
	}
	if _, err := exec.LookPath(opts.Command); err != nil {
		return nil, fmt.Errorf("flite: new: %w", err)
	}
	if opts.Procs <= 0 {
		opts.Procs = runtime.NumCPU()
	}
	if opts.UnitTimeout <= 0 {
		opts.UnitTimeout = 5 * time.Second
	}
	if opts.CharTimeout <= 0 {
		opts.CharTimeout = 200 * time.Millisecond
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := os.MkdirTemp(opts.TempDir, "narrator-flite-")
	if err != nil {
		return nil, fmt.Errorf("flite: new: %w", err)
	}
	return &Engine{
		opts:    opts,
		log:     log.With("engine", "flite"),
		dir:     dir,
		sem:     make(chan struct{}, opts.Procs),
		running: make(map[*exec.Cmd]struct{}),
	}, nil
}

// Synthesize speaks plain text (never markup) in the flite voice (one of Voices()) and returns
// mono 16-bit PCM samples and their sample rate (16000 Hz; 8000 for "kal"). rate is a
// speaking-rate factor: 1 is normal, 2 twice as fast; zero means 1. It returns ctx.Err() if ctx
// ends first, and ErrClosed after Close.
func (e *Engine) Synthesize(ctx context.Context, voice string, text string, rate float64) (samples []int16, sampleRate int, err error) {
	if !isVoice(voice) {
		return nil, 0, fmt.Errorf("flite: unknown voice %q", voice)
	}
	if rate == 0 {
		rate = 1
	}
	if rate < 0.25 || rate > 4 {
		return nil, 0, fmt.Errorf("flite: synthesize: rate %g out of range [0.25, 4]", rate)
	}
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-e.sem }()

	text = Clean(text)
	limit := e.opts.UnitTimeout + time.Duration(len(text))*e.opts.CharTimeout
	var errs []error
	for attempt := range 2 {
		samples, sampleRate, err = e.run(ctx, voice, text, rate, limit)
		if err == nil {
			return samples, sampleRate, nil
		}
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		if errors.Is(err, ErrClosed) {
			return nil, 0, err
		}
		e.log.WarnContext(ctx, "flite unit failed", "attempt", attempt+1, "voice", voice, "chars", len(text), "err", err)
		errs = append(errs, err)
	}
	return nil, 0, fmt.Errorf("flite: synthesize %q in %s: %w", abbrev(text), voice, errors.Join(errs...))
}

// run runs one flite process for one unit.
func (e *Engine) run(ctx context.Context, voice, text string, rate float64, limit time.Duration) ([]int16, int, error) {
	out := filepath.Join(e.dir, fmt.Sprintf("u%d.wav", e.next.Add(1)))
	defer os.Remove(out)
	cmd := exec.Command(e.opts.Command,
		"-voice", voice,
		"--setf", "duration_stretch="+strconv.FormatFloat(1/rate, 'f', 4, 64),
		"-t", text,
		"-o", out)
	// A process group of its own, so that a kill reaches anything it started; and death with
	// us, so that a crashed narrator leaves nothing behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Should a child escape the group kill and hold our pipes, stop waiting for it.
	cmd.WaitDelay = time.Second
	stderr := &tail{}
	cmd.Stderr = stderr
	if err := e.start(cmd); err != nil {
		return nil, 0, err
	}
	defer e.forget(cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return nil, 0, fmt.Errorf("flite: %w%s", err, stderr.suffix())
		}
	case <-timer.C:
		kill(cmd)
		<-exited
		return nil, 0, fmt.Errorf("flite hung: no result within %s, killed%s", limit, stderr.suffix())
	case <-ctx.Done():
		kill(cmd)
		<-exited
		return nil, 0, ctx.Err()
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, 0, fmt.Errorf("read flite output: %w%s", err, stderr.suffix())
	}
	samples, sampleRate, err := wav.Decode(data)
	if err != nil {
		return nil, 0, fmt.Errorf("flite output: %w%s", err, stderr.suffix())
	}
	return samples, sampleRate, nil
}

// start starts cmd unless the engine is closed, and remembers it for Close.
func (e *Engine) start(cmd *exec.Cmd) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start flite: %w", err)
	}
	e.running[cmd] = struct{}{}
	return nil
}

func (e *Engine) forget(cmd *exec.Cmd) {
	e.mu.Lock()
	delete(e.running, cmd)
	e.mu.Unlock()
}

// Close kills every running flite process (their callers get an error) and removes the scratch
// directory. Later calls to Synthesize return ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for cmd := range e.running {
		kill(cmd)
	}
	e.mu.Unlock()
	if err := os.RemoveAll(e.dir); err != nil {
		return fmt.Errorf("flite: close: %w", err)
	}
	return nil
}

// kill kills cmd's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func isVoice(v string) bool {
	for _, known := range Voices() {
		if v == known {
			return true
		}
	}
	return false
}

// tail keeps the last bytes written to it: a process's stderr, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 1024

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(b), nil
}

// suffix returns "; stderr: ..." with the tail, or "" if nothing was written.
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "?"))
	if s == "" {
		return ""
	}
	return "; stderr: " + s
}

// abbrev shortens text for error messages.
func abbrev(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}
