// Package flite speaks text with CMU flite.
//
// flite has no server mode, and it does not need one: its voices are compiled into the binary,
// so a process starts in a small fraction of the time it takes to synthesise a typical sentence
// (docs/figures.md, "Engine starts"). The engine therefore runs one short-lived process per unit, at most
// Options.Procs at a time. A unit that hangs past its time limit is killed with its whole
// process group and retried once on a fresh process; so is one whose process crashes. Text is
// always passed with -t, never in SSML mode (flite's SSML parser can spin forever).
//
// SynthesizeWords, which the pipeline uses for transcripts, runs a second, silent process per
// unit to find the words' boundaries: it costs about as much CPU as the synthesis itself, and
// runs beside it, so that a unit waits for the longer of the two, not their sum.
package flite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/proc"
)

// Voices returns the voices compiled into Debian's flite, the only ones Synthesize accepts
// (flite would also take a path or URL to a voice file).
func Voices() []string { return []string{"slt", "rms", "awb", "kal16", "kal", "awb_time"} }

// ErrClosed is returned by Synthesize after Close.
var ErrClosed = errors.New("flite: engine closed")

// Options configures an Engine. The zero value is usable. Procs bounds the flite processes
// that run at once; a sandboxed unit's process can write only a directory of its own in the
// scratch directory.
type Options struct {
	proc.Options
	// Command is the flite binary. Empty means "flite". Tests substitute programs that hang or
	// crash.
	Command string
	// TempDir is where the scratch directory for wave files is made. Empty means os.TempDir().
	TempDir string
}

// sandboxLimits bounds a sandboxed flite process, which speaks one unit: its voices are
// compiled in, and it needs a few tens of MB; a unit takes well under a second of CPU, and
// its wave is a few MB.
func sandboxLimits() proc.Limits {
	return proc.Limits{Memory: 512 << 20, CPU: 2 * time.Minute, FileSize: 64 << 20, Procs: proc.SandboxProcs}
}

// Engine synthesises speech with flite. It is safe for concurrent use.
type Engine struct {
	opts   Options
	dir    string
	runner *proc.Runner
	close  sync.Once
	closed atomic.Bool
	next   atomic.Int64
}

// New returns an Engine. It checks that the flite binary exists.
func New(opts Options) (*Engine, error) {
	if opts.Command == "" {
		opts.Command = "flite"
	}
	if _, err := exec.LookPath(opts.Command); err != nil {
		return nil, fmt.Errorf("flite: new: %w", err)
	}
	dir, err := proc.MkdirScratch(opts.TempDir, "narrator-flite-")
	if err != nil {
		return nil, fmt.Errorf("flite: new: %w", err)
	}
	return &Engine{
		opts:   opts,
		dir:    dir,
		runner: opts.Runner("flite", "flite"),
	}, nil
}

// Synthesize speaks plain text (never markup) in the flite voice (one of Voices()) and returns
// mono 16-bit PCM samples and their sample rate (16000 Hz; 8000 for "kal"). rate is a
// speaking-rate factor: 1 is normal, 2 twice as fast; zero means 1. It returns ctx.Err() if ctx
// ends first, and ErrClosed after Close.
func (e *Engine) Synthesize(ctx context.Context, voice string, text string, rate float64) (samples []int16, sampleRate int, err error) {
	samples, sampleRate, _, err = e.synthesize(ctx, voice, text, rate)
	return samples, sampleRate, err
}

// SynthesizeWords is Synthesize that also returns the words of the text with their spans in
// seconds from the start of the samples, at the speaking rate. flite prints the end time of
// every segment (phone) it spoke, but not which word each belongs to; a second, silent run
// reads the words apart (" -- " between them makes flite pause after each, where a period
// does not after short words), and the first run's segments are shared out in order by the
// number each word has. Where that does not add up (flite read some symbol as words, say),
// there are no words, and no error.
func (e *Engine) SynthesizeWords(ctx context.Context, voice string, text string, rate float64) (samples []int16, sampleRate int, words []narrator.TranscriptWord, err error) {
	tokens := narrator.WordTokens(Clean(text))
	if !isVoice(voice) || len(tokens) == 0 {
		samples, sampleRate, err = e.Synthesize(ctx, voice, text, rate)
		return samples, sampleRate, nil, err
	}
	// The two runs are independent: the silent one runs beside the
	// synthesis, so that the words cost no time on a unit's way, only CPU.
	countCtx, stopCount := context.WithCancel(ctx)
	defer stopCount()
	var (
		counts   []int
		countErr error
		counted  = make(chan struct{})
	)
	go func() {
		defer close(counted)
		counts, countErr = e.countPhones(countCtx, voice, text, tokens)
	}()
	samples, sampleRate, segs, err := e.synthesize(ctx, voice, text, rate)
	if err != nil {
		stopCount()
		<-counted
		return nil, 0, nil, err
	}
	<-counted
	switch {
	case errors.Is(countErr, proc.ErrClosed):
		return nil, 0, nil, ErrClosed
	case ctx.Err() != nil:
		return nil, 0, nil, ctx.Err()
	case countErr != nil || len(segs) == 0:
		return samples, sampleRate, nil, nil // the speech stands without its words
	}
	return samples, sampleRate, assignWords(tokens, counts, segs, float64(len(samples))/float64(sampleRate)), nil
}

// countPhones runs flite silently on the words of text apart and returns how many segments
// each word has.
func (e *Engine) countPhones(ctx context.Context, voice, text string, tokens []string) ([]int, error) {
	var counts []int
	build := func() *exec.Cmd {
		return e.opts.Sandbox.Command(sandboxLimits(), "", e.opts.Command, "-voice", voice, "-ps", "-t", strings.Join(tokens, " -- "), "-o", "none")
	}
	parse := func(stdout []byte) error {
		counts = phoneCounts(string(stdout))
		return nil
	}
	limit := e.opts.Limit(text)
	if err := e.runner.Run(ctx, limit, build, parse, "voice", voice, "chars", len(text), "words", true); err != nil {
		return nil, err
	}
	return counts, nil
}

// synthesize runs flite on text and returns the speech and the segments flite printed.
func (e *Engine) synthesize(ctx context.Context, voice string, text string, rate float64) (samples []int16, sampleRate int, segs []segment, err error) {
	if !isVoice(voice) {
		return nil, 0, nil, fmt.Errorf("flite: unknown voice %q", voice)
	}
	if rate == 0 {
		rate = 1
	}
	if rate < 0.25 || rate > 4 {
		return nil, 0, nil, fmt.Errorf("flite: synthesize: rate %g out of range [0.25, 4]", rate)
	}
	text = Clean(text)
	// Each unit has a directory of its own, the one its process may write in a sandbox.
	dir := filepath.Join(e.dir, fmt.Sprintf("u%d", e.next.Add(1)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		if e.closed.Load() {
			return nil, 0, nil, ErrClosed // Close removed the scratch directory
		}
		return nil, 0, nil, fmt.Errorf("flite: synthesize: %w", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "unit.wav")
	build := func() *exec.Cmd {
		// No wave from an attempt that failed may pass for this one's.
		_ = os.Remove(out)
		return e.opts.Sandbox.Command(sandboxLimits(), dir, e.opts.Command,
			"-voice", voice,
			"--setf", "duration_stretch="+strconv.FormatFloat(1/rate, 'f', 4, 64),
			"-psdur",
			"-t", text,
			"-o", out)
	}
	parse := func(stdout []byte) error {
		samples, sampleRate, err = pcm.DecodeWAVFile(out)
		segs = parseSegments(string(stdout))
		return err
	}
	limit := e.opts.Limit(text)
	err = e.runner.Run(ctx, limit, build, parse, "voice", voice, "chars", len(text))
	switch {
	case err == nil:
		return samples, sampleRate, segs, nil
	case errors.Is(err, proc.ErrClosed):
		return nil, 0, nil, ErrClosed
	case ctx.Err() != nil:
		return nil, 0, nil, err
	}
	return nil, 0, nil, fmt.Errorf("flite: synthesize %q in %s: %w", proc.Abbrev(text), voice, err)
}

// Ping reports whether the engine can run units: ErrClosed after Close,
// and an error if the flite binary is gone.
func (e *Engine) Ping(ctx context.Context) error {
	if err := e.runner.Ping(e.opts.Command); errors.Is(err, proc.ErrClosed) {
		return ErrClosed
	} else if err != nil {
		return fmt.Errorf("flite: ping: %w", err)
	}
	return nil
}

// Close kills every running flite process (their callers get an error) and removes the scratch
// directory. Later calls to Synthesize return ErrClosed.
func (e *Engine) Close() error {
	var err error
	e.close.Do(func() {
		e.closed.Store(true)
		e.runner.Close()
		if rerr := os.RemoveAll(e.dir); rerr != nil {
			err = fmt.Errorf("flite: close: %w", rerr)
		}
	})
	return err
}

func isVoice(v string) bool {
	for _, known := range Voices() {
		if v == known {
			return true
		}
	}
	return false
}
