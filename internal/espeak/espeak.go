// Package espeak speaks text with eSpeak NG, the engine for every language other than
// English that Narrator offers.
//
// espeak-ng starts in about 5 ms, against 10–15 ms to synthesise a typical sentence, and it has
// no mode that marks where one utterance's audio ends in a stream, so the engine runs one
// short-lived process per unit, at most Options.Procs at a time. Text goes in on stdin, never
// as an argument (a leading "-" would be read as an option) and never in markup mode (-m is not
// given, so "<" is read as text); the wave comes back on stdout. A unit that hangs past its
// time limit is killed with its whole process group and retried once on a fresh process; so is
// one whose process crashes.
package espeak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/narrator/narrator/internal/wav"
)

// NormalWPM is espeak-ng's default speaking rate in words per minute, rate factor 1.
const NormalWPM = 175

// ErrClosed is returned by Synthesize after Close.
var ErrClosed = errors.New("espeak: engine closed")

// Options configures an Engine. The zero value is usable.
type Options struct {
	// Procs is the number of espeak-ng processes that may run at once. Zero means one per CPU.
	Procs int
	// Logger receives warnings about killed processes. Nil discards them.
	Logger *slog.Logger
	// UnitTimeout is the fixed part of one unit's time limit. Zero means 5 s.
	UnitTimeout time.Duration
	// CharTimeout is added to a unit's time limit per character of text. Zero means 200 ms.
	CharTimeout time.Duration
	// Command is the espeak-ng binary. Empty means "espeak-ng". Tests substitute programs that
	// hang or crash.
	Command string
}

// Engine synthesises speech with espeak-ng. It is safe for concurrent use.
type Engine struct {
	opts Options
	log  *slog.Logger
	sem  chan struct{}

	mu      sync.Mutex
	running map[*exec.Cmd]struct{}
	closed  bool
}

// New returns an Engine. It checks that the espeak-ng binary exists.
func New(opts Options) (*Engine, error) {
	if opts.Command == "" {
		opts.Command = "espeak-ng"
	}
	if _, err := exec.LookPath(opts.Command); err != nil {
		return nil, fmt.Errorf("espeak: new: %w", err)
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
	return &Engine{
		opts:    opts,
		log:     log.With("engine", "espeak"),
		sem:     make(chan struct{}, opts.Procs),
		running: make(map[*exec.Cmd]struct{}),
	}, nil
}

// Synthesize speaks plain UTF-8 text (never markup) in the espeak-ng voice, a language with an
// optional variant such as "de", "en-us+f3" or "fr-fr+m3", and returns mono 16-bit PCM samples
// and their sample rate (22050 Hz). rate is a speaking-rate factor: 1 is NormalWPM, 2 twice as
// fast; zero means 1. It returns ctx.Err() if ctx ends first, and ErrClosed after Close.
func (e *Engine) Synthesize(ctx context.Context, voice string, text string, rate float64) (samples []int16, sampleRate int, err error) {
	if err := checkVoice(voice); err != nil {
		return nil, 0, err
	}
	if rate == 0 {
		rate = 1
	}
	if rate < 0.25 || rate > 4 {
		return nil, 0, fmt.Errorf("espeak: synthesize: rate %g out of range [0.25, 4]", rate)
	}
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-e.sem }()

	text = strings.ToValidUTF8(text, " ")
	limit := e.opts.UnitTimeout + time.Duration(len(text))*e.opts.CharTimeout
	// espeak-ng accepts 80 to 450 words per minute.
	wpm := min(max(int(math.Round(NormalWPM*rate)), 80), 450)
	var errs []error
	for attempt := range 2 {
		samples, sampleRate, err = e.run(ctx, voice, text, wpm, limit)
		if err == nil {
			return samples, sampleRate, nil
		}
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		if errors.Is(err, ErrClosed) {
			return nil, 0, err
		}
		e.log.WarnContext(ctx, "espeak-ng unit failed", "attempt", attempt+1, "voice", voice, "chars", len(text), "err", err)
		errs = append(errs, err)
	}
	return nil, 0, fmt.Errorf("espeak: synthesize %q in %s: %w", abbrev(text), voice, errors.Join(errs...))
}

// run runs one espeak-ng process for one unit.
func (e *Engine) run(ctx context.Context, voice, text string, wpm int, limit time.Duration) ([]int16, int, error) {
	// -b 1: the input is UTF-8. --stdin: the text comes on stdin. No -m: it is not markup.
	cmd := exec.Command(e.opts.Command, "-v", voice, "-s", strconv.Itoa(wpm), "-b", "1", "--stdin", "--stdout")
	// A process group of its own, so that a kill reaches anything it started; and death with
	// us, so that a crashed narrator leaves nothing behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Should a child escape the group kill and hold our pipes, stop waiting for it.
	cmd.WaitDelay = time.Second
	var stdout bytes.Buffer
	stderr := &tail{}
	cmd.Stdin = strings.NewReader(text)
	cmd.Stdout = &stdout
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
			return nil, 0, fmt.Errorf("espeak-ng: %w%s", err, stderr.suffix())
		}
	case <-timer.C:
		kill(cmd)
		<-exited
		return nil, 0, fmt.Errorf("espeak-ng hung: no result within %s, killed%s", limit, stderr.suffix())
	case <-ctx.Done():
		kill(cmd)
		<-exited
		return nil, 0, ctx.Err()
	}
	samples, sampleRate, err := wav.Decode(stdout.Bytes())
	if err != nil {
		return nil, 0, fmt.Errorf("espeak-ng output: %w%s", err, stderr.suffix())
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
		return fmt.Errorf("start espeak-ng: %w", err)
	}
	e.running[cmd] = struct{}{}
	return nil
}

func (e *Engine) forget(cmd *exec.Cmd) {
	e.mu.Lock()
	delete(e.running, cmd)
	e.mu.Unlock()
}

// Close kills every running espeak-ng process (their callers get an error). Later calls to
// Synthesize return ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for cmd := range e.running {
		kill(cmd)
	}
	return nil
}

// kill kills cmd's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// checkVoice accepts espeak-ng voice names: letters, digits, '-', '_' and '+' (before a
// variant), not starting with '-'.
func checkVoice(voice string) error {
	if voice == "" || voice[0] == '-' || voice[0] == '+' {
		return fmt.Errorf("espeak: invalid voice name %q", voice)
	}
	for _, r := range voice {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+') {
			return fmt.Errorf("espeak: invalid voice name %q", voice)
		}
	}
	return nil
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
