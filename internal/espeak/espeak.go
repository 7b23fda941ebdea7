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
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/proc"
)

// NormalWPM is espeak-ng's default speaking rate in words per minute, rate factor 1.
const NormalWPM = 175

// ErrClosed is returned by Synthesize after Close.
var ErrClosed = errors.New("espeak: engine closed")

// Options configures an Engine. The zero value is usable. Procs bounds the espeak-ng
// processes that run at once; a sandboxed one reads its stdin and writes its stdout, and is
// given nowhere to write.
type Options struct {
	proc.Options
	// Command is the espeak-ng binary. Empty means "espeak-ng". Tests substitute programs that
	// hang or crash.
	Command string
}

// sandboxLimits bounds a sandboxed espeak-ng process, which speaks one unit: it needs a few
// tens of MB and well under a second of CPU. It writes no file, but the PulseAudio library it
// loads sizes a 64 MiB shared-memory file at start-up, which the file size limit must allow.
func sandboxLimits() proc.Limits {
	return proc.Limits{Memory: 512 << 20, CPU: 2 * time.Minute, FileSize: 128 << 20, Procs: proc.SandboxProcs}
}

// Engine synthesises speech with espeak-ng. It is safe for concurrent use.
type Engine struct {
	opts   Options
	runner *proc.Runner
}

// New returns an Engine. It checks that the espeak-ng binary exists.
func New(opts Options) (*Engine, error) {
	if opts.Command == "" {
		opts.Command = "espeak-ng"
	}
	if _, err := exec.LookPath(opts.Command); err != nil {
		return nil, fmt.Errorf("espeak: new: %w", err)
	}
	return &Engine{
		opts:   opts,
		runner: opts.Runner("espeak-ng", "espeak"),
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
	text = strings.ToValidUTF8(text, " ")
	if text == "" {
		// Given no input at all, espeak-ng writes no wave; given a space, a wave of silence.
		text = " "
	}
	// espeak-ng accepts 80 to 450 words per minute.
	wpm := min(max(int(math.Round(NormalWPM*rate)), 80), 450)
	build := func() *exec.Cmd {
		// -b 1: the input is UTF-8. --stdin: the text comes on stdin. No -m: it is not markup.
		cmd := e.opts.Sandbox.Command(sandboxLimits(), "", e.opts.Command, "-v", voice, "-s", strconv.Itoa(wpm), "-b", "1", "--stdin", "--stdout")
		cmd.Stdin = strings.NewReader(text)
		return cmd
	}
	parse := func(stdout []byte) (err error) {
		samples, sampleRate, err = pcm.DecodeWAV(bytes.NewReader(stdout))
		return err
	}
	limit := e.opts.Limit(text)
	err = e.runner.Run(ctx, limit, build, parse, "voice", voice, "chars", len(text))
	switch {
	case err == nil:
		return samples, sampleRate, nil
	case errors.Is(err, proc.ErrClosed):
		return nil, 0, ErrClosed
	case ctx.Err() != nil:
		return nil, 0, err
	}
	return nil, 0, fmt.Errorf("espeak: synthesize %q in %s: %w", proc.Abbrev(text), voice, err)
}

// Ping reports whether the engine can run units: ErrClosed after Close,
// and an error if the espeak-ng binary is gone.
func (e *Engine) Ping(ctx context.Context) error {
	if err := e.runner.Ping(e.opts.Command); errors.Is(err, proc.ErrClosed) {
		return ErrClosed
	} else if err != nil {
		return fmt.Errorf("espeak: ping: %w", err)
	}
	return nil
}

// Close kills every running espeak-ng process (their callers get an error). Later calls to
// Synthesize return ErrClosed.
func (e *Engine) Close() error {
	e.runner.Close()
	return nil
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
