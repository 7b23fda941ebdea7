// Package festival speaks text with the Festival speech synthesis system, running a pool of
// long-lived festival processes so that start-up and voice loading are paid once per process,
// not once per sentence.
//
// Each process is started as "festival --pipe", selects its voice once, and then receives
// one Scheme command per unit that synthesises the text and saves a RIFF wave to a scratch
// file, followed by a marker printed on stdout. A unit that hangs past its time limit, or a
// process that dies, is killed with its whole process group, replaced, and the unit is retried
// once on the fresh process.
//
// Starting festival and loading the HTS voice costs more than speaking a sentence on a warm
// process, which is why processes live across units (docs/figures.md, "Engine starts"). The
// HTS voice writes 32000 Hz.
package festival

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/proc"
)

// DefaultVoice is the festival voice of the default English body voice: the HTS statistical
// parametric voice from Debian's festvox-us-slt-hts.
const DefaultVoice = "cmu_us_slt_arctic_hts"

// MemoryPerProc is the resident memory one festival process needs with the HTS voice loaded
// (docs/figures.md, "Engine starts"), rounded up. Zero Options.Procs never starts more processes than
// available memory holds at this size.
const MemoryPerProc = 400 << 20

// errScheme means festival reported an error evaluating our command; the process lives on.
var errScheme = errors.New("festival scheme error")

// ErrClosed is returned by Synthesize after Close.
var ErrClosed = errors.New("festival: engine closed")

// Options configures an Engine. The zero value is usable. Procs is the number of festival
// worker processes; zero means one per CPU, bounded by available memory at MemoryPerProc each,
// and at least one. A sandboxed process can write only a directory of its own in the scratch
// directory.
type Options struct {
	proc.Options
	// StartTimeout bounds starting a process, and selecting a voice. Zero means 30 s.
	StartTimeout time.Duration
	// Command is the command line of one worker process. Nil means {"festival", "--pipe"}.
	// Tests substitute programs that hang or crash.
	Command []string
	// TempDir is where the scratch directory for wave files is made. Empty means os.TempDir().
	TempDir string
}

// sandboxLimits bounds a sandboxed festival process. 2 GiB of address space is several times
// what a process with the HTS voice loaded reaches speaking a long article in units of up to
// speak.MaxUnitChars (docs/figures.md, "festival's address space"), room for odd text. A process lives for many
// units: its CPU limit (about 100,000 units) ends it only in a long run, and the pool replaces
// it as one that died, retrying its unit. A unit's wave is a few MB.
func sandboxLimits() proc.Limits {
	return proc.Limits{Memory: 2 << 30, CPU: 4 * time.Hour, FileSize: 64 << 20, Procs: proc.SandboxProcs}
}

// Engine synthesises speech with a pool of festival processes. It is safe for concurrent use.
type Engine struct {
	opts  Options
	log   *slog.Logger
	dir   string
	slots chan *worker // one entry per process slot; nil means not started yet

	mu     sync.Mutex
	live   map[*worker]struct{}
	closed bool

	nextID atomic.Int64
}

// New returns an Engine. It checks that the festival binary exists but starts processes
// lazily, on first use or in Start.
func New(opts Options) (*Engine, error) {
	if len(opts.Command) == 0 {
		opts.Command = []string{"festival", "--pipe"}
	}
	if _, err := exec.LookPath(opts.Command[0]); err != nil {
		return nil, fmt.Errorf("festival: new: %w", err)
	}
	if opts.Procs <= 0 {
		opts.Procs = defaultProcs()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.Metrics == nil {
		opts.Metrics = proc.Discard
	}
	dir, err := proc.MkdirScratch(opts.TempDir, "narrator-festival-")
	if err != nil {
		return nil, fmt.Errorf("festival: new: %w", err)
	}
	if strings.ContainsFunc(dir, unicode.IsControl) {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("festival: new: scratch directory %q has a control character", dir)
	}
	e := &Engine{
		opts:  opts,
		log:   opts.Log("festival"),
		dir:   dir,
		slots: make(chan *worker, opts.Procs),
		live:  make(map[*worker]struct{}),
	}
	for range opts.Procs {
		e.slots <- nil
	}
	return e, nil
}

// Procs returns the number of worker processes the engine runs at most.
func (e *Engine) Procs() int { return e.opts.Procs }

// defaultProcs is one process per CPU, bounded by available memory.
func defaultProcs() int {
	n := runtime.NumCPU()
	if avail := memAvailable(); avail > 0 {
		n = min(n, int(avail/MemoryPerProc))
	}
	return max(n, 1)
}

// memAvailable reads MemAvailable from /proc/meminfo, or returns 0 if it cannot.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// Start starts every worker process and selects voice in each, so that the first units do not
// pay for it. It is optional.
func (e *Engine) Start(ctx context.Context, voice string) error {
	if err := checkVoice(voice); err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		errs = make([]error, e.opts.Procs)
	)
	for i := range e.opts.Procs {
		wg.Go(func() {
			var p *worker
			select {
			case p = <-e.slots:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			var err error
			p, err = e.ready(ctx, p, voice)
			e.slots <- p
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("festival: start: %w", err)
	}
	return nil
}

// Synthesize speaks plain text (never markup) in the festival voice (for example
// "cmu_us_slt_arctic_hts") and returns mono 16-bit PCM samples and their sample rate. rate is a
// speaking-rate factor: 1 is normal, 2 twice as fast; zero means 1. It returns ctx.Err() if ctx
// ends first, and ErrClosed after Close.
func (e *Engine) Synthesize(ctx context.Context, voice string, text string, rate float64) (samples []int16, sampleRate int, err error) {
	samples, sampleRate, _, err = e.SynthesizeWords(ctx, voice, text, rate)
	return samples, sampleRate, err
}

// SynthesizeWords is Synthesize that also returns the words festival spoke (its Word
// relation: the text's tokens as read, numbers and abbreviations expanded), with their spans
// in seconds from the start of the samples, at the speaking rate. The spans come from
// festival's segment timings, which the HTS engine sets from the speech it made.
func (e *Engine) SynthesizeWords(ctx context.Context, voice string, text string, rate float64) (samples []int16, sampleRate int, words []narrator.TranscriptWord, err error) {
	if err := checkVoice(voice); err != nil {
		return nil, 0, nil, err
	}
	if rate == 0 {
		rate = 1
	}
	if rate < 0.25 || rate > 4 {
		return nil, 0, nil, fmt.Errorf("festival: synthesize: rate %g out of range [0.25, 4]", rate)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, nil, err
	}
	var p *worker
	select {
	case p = <-e.slots:
	case <-ctx.Done():
		return nil, 0, nil, ctx.Err()
	}
	defer func() { e.slots <- p }()

	limit := e.opts.Limit(text)
	var errs []error
	for attempt := range 2 {
		if p, err = e.ready(ctx, p, voice); err != nil {
			if ctx.Err() != nil {
				return nil, 0, nil, ctx.Err()
			}
			if errors.Is(err, errScheme) {
				return nil, 0, nil, fmt.Errorf("festival: synthesize in %s: %w", voice, err)
			}
			errs = append(errs, err)
			continue
		}
		e.opts.Metrics.Busy(1)
		samples, sampleRate, words, err = p.synth(ctx, text, rate, limit)
		e.opts.Metrics.Busy(-1)
		if err == nil {
			return samples, sampleRate, words, nil
		}
		e.discard(p)
		p = nil
		if ctx.Err() != nil {
			return nil, 0, nil, ctx.Err()
		}
		if e.isClosed() {
			return nil, 0, nil, ErrClosed
		}
		e.log.WarnContext(ctx, "festival process killed and replaced", "attempt", attempt+1, "voice", voice, "chars", len(text), "err", err)
		if errors.Is(err, proc.ErrHung) {
			e.opts.Metrics.TimedOut()
		}
		e.opts.Metrics.Restarted()
		errs = append(errs, err)
	}
	return nil, 0, nil, fmt.Errorf("festival: synthesize %q in %s: %w", proc.Abbrev(text), voice, errors.Join(errs...))
}

// ready returns a live process with voice selected, starting one if p is nil.
func (e *Engine) ready(ctx context.Context, p *worker, voice string) (*worker, error) {
	if p == nil {
		var err error
		if p, err = e.start(ctx); err != nil {
			return nil, err
		}
	}
	if p.voice == voice {
		return p, nil
	}
	if err := p.selectVoice(ctx, voice, e.opts.StartTimeout); err != nil {
		if errors.Is(err, errScheme) {
			// Most likely an unknown voice. The process is fine, but its voice is undefined now.
			p.voice = ""
			return p, err
		}
		e.discard(p)
		return nil, err
	}
	return p, nil
}

// start starts one worker process and waits until it answers.
func (e *Engine) start(ctx context.Context) (*worker, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	// Each process has a directory of its own, the one it may write in a sandbox.
	dir := filepath.Join(e.dir, fmt.Sprintf("w%d", e.nextID.Add(1)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start festival: %w", err)
	}
	cmd := e.opts.Sandbox.Command(sandboxLimits(), dir, e.opts.Command[0], e.opts.Command[1:]...)
	p, err := startWorker(ctx, cmd, strings.Join(e.opts.Command, " "), dir, e.opts.StartTimeout)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	e.live[p] = struct{}{}
	return p, nil
}

// discard kills p and forgets it.
func (e *Engine) discard(p *worker) {
	if p == nil {
		return
	}
	p.Kill()
	e.mu.Lock()
	delete(e.live, p)
	e.mu.Unlock()
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Ping reports whether the engine can run units: ErrClosed after Close,
// and an error if the festival binary is gone. Its processes start, or are
// replaced, when a unit needs them.
func (e *Engine) Ping(ctx context.Context) error {
	if e.isClosed() {
		return ErrClosed
	}
	if _, err := exec.LookPath(e.opts.Command[0]); err != nil {
		return fmt.Errorf("festival: ping: %w", err)
	}
	return nil
}

// Close kills every festival process, including those synthesising a unit (their callers get
// an error), and removes the scratch directory. Later calls to Synthesize return ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	live := e.live
	e.live = make(map[*worker]struct{})
	e.mu.Unlock()
	for p := range live {
		p.Kill()
	}
	if err := os.RemoveAll(e.dir); err != nil {
		return fmt.Errorf("festival: close: %w", err)
	}
	return nil
}

// worker is one festival process. It is used by one goroutine at a time.
type worker struct {
	*proc.Warm
	wavPath string

	voice string  // selected voice, "" before the first
	rate  float64 // rate last set, 0 after a voice change
	seq   int
}

// startWorker starts cmd, the command line name, which writes its waves in dir, and waits
// until it echoes a marker.
func startWorker(ctx context.Context, cmd *exec.Cmd, name, dir string, limit time.Duration) (*worker, error) {
	w, err := proc.StartWarm("festival", cmd, dir, nil)
	if err != nil {
		return nil, err
	}
	p := &worker{Warm: w, wavPath: filepath.Join(dir, "unit.wav")}
	if _, err := p.exchange(ctx, "", limit); err != nil {
		p.Kill()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

// selectVoice selects voice and remembers the voice's HTS engine parameters, to which synth
// adds the speaking rate.
func (p *worker) selectVoice(ctx context.Context, voice string, limit time.Duration) error {
	script := fmt.Sprintf("(voice_%s)\n"+
		"(set! narrator_hts (if (equal? (Parameter.get 'Synth_Method) 'HTS) hts_engine_params nil))\n", voice)
	if _, err := p.exchange(ctx, script, limit); err != nil {
		return fmt.Errorf("select voice %s: %w", voice, err)
	}
	p.voice, p.rate = voice, 0
	return nil
}

// wordPrefix marks the lines on which synth has festival print a word and its span.
const wordPrefix = "NARRATOR_WORD "

// synthScript has festival synthesise the utterance, save it, and print each word of its
// Word relation with its span: from the end of the segment before its first segment to the
// end of its last segment.
const synthScript = `(set! narrator_utt (utt.synth (Utterance Text %s)))
(utt.save.wave narrator_utt %s 'riff)
(mapcar (lambda (w) (format t "` + wordPrefix + `%%s %%s %%s\n"
  (item.feat w "R:SylStructure.daughter1.daughter1.R:Segment.p.end")
  (item.feat w "R:SylStructure.daughtern.daughtern.R:Segment.end")
  (item.name w)))
  (utt.relation.items narrator_utt 'Word))
`

// synth synthesises one unit.
func (p *worker) synth(ctx context.Context, text string, rate float64, limit time.Duration) ([]int16, int, []narrator.TranscriptWord, error) {
	var b strings.Builder
	if rate != p.rate {
		// HTS voices ignore Duration_Stretch; the HTS engine takes a speed factor "-r".
		fmt.Fprintf(&b, "(Parameter.set 'Duration_Stretch %s)\n", formatFloat(1/rate))
		fmt.Fprintf(&b, "(if narrator_hts (set! hts_engine_params (append narrator_hts (list (list \"-r\" %s)))))\n", formatFloat(rate))
	}
	_ = os.Remove(p.wavPath)
	fmt.Fprintf(&b, synthScript, Quote(text), quotePath(p.wavPath))
	lines, err := p.exchange(ctx, b.String(), limit)
	if err != nil {
		return nil, 0, nil, err
	}
	p.rate = rate
	samples, sampleRate, err := pcm.DecodeWAVFile(p.wavPath)
	_ = os.Remove(p.wavPath)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("festival output: %w%s", err, p.Stderr().Suffix())
	}
	return samples, sampleRate, parseWords(lines, float64(len(samples))/float64(sampleRate)), nil
}

// parseWords reads the word lines of synthScript. A line festival printed oddly is skipped
// rather than failing the unit: the words only time the transcript. Spans are kept within
// [0, length], in order and apart.
func parseWords(lines []string, length float64) []narrator.TranscriptWord {
	var words []narrator.TranscriptWord
	prev := 0.0
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, wordPrefix)
		if !ok {
			continue
		}
		f := strings.SplitN(rest, " ", 3)
		if len(f) != 3 || strings.TrimSpace(f[2]) == "" {
			continue
		}
		start, err1 := strconv.ParseFloat(f[0], 64)
		end, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || math.IsNaN(start) || math.IsNaN(end) {
			continue // NaN would pass through min and max
		}
		start = min(max(start, prev), length)
		end = min(max(end, start), length)
		words = append(words, narrator.TranscriptWord{Start: start, End: end, Text: strings.TrimSpace(f[2])})
		prev = end
	}
	return words
}

// exchange sends script wrapped so that festival prints "NARRATOR_OK n" if every form of it
// succeeded and then "NARRATOR_DONE n", waits for the DONE marker, and returns the lines
// printed before it that start with wordPrefix. It fails if the process dies, if limit passes
// (the process is then killed), if ctx ends (likewise), or if the OK marker is missing, which
// means a Scheme error.
func (p *worker) exchange(ctx context.Context, script string, limit time.Duration) ([]string, error) {
	p.seq++
	ok, done := fmt.Sprintf("NARRATOR_OK %d", p.seq), fmt.Sprintf("NARRATOR_DONE %d", p.seq)
	msg := fmt.Sprintf("(begin\n%s(format t \"%s\\n\"))\n(format t \"%s\\n\")\n(fflush nil)\n", script, ok, done)
	var lines []string
	sawOK := false
	err := p.Exchange(ctx, msg, limit, func(line string) (bool, error) {
		if strings.HasPrefix(line, wordPrefix) {
			lines = append(lines, strings.TrimRight(line, "\r"))
			return false, nil
		}
		switch strings.TrimSpace(line) {
		case ok:
			sawOK = true
		case done:
			if !sawOK {
				return true, fmt.Errorf("%w%s", errScheme, p.Stderr().Suffix())
			}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return lines, nil
}

func checkVoice(voice string) error {
	if voice == "" {
		return errors.New("festival: empty voice name")
	}
	for _, r := range voice {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return fmt.Errorf("festival: invalid voice name %q", voice)
		}
	}
	return nil
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) }
