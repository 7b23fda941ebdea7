package phonemize

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
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/narrator/narrator/internal/proc"
)

// ErrClosed is returned by Phonemize and Kokoro after Close.
var ErrClosed = errors.New("phonemize: closed")

// Options configures a Phonemizer. The zero value is usable. Procs is the number of
// espeak-ng processes kept, over all voices; a sandboxed one reads its stdin, writes its
// stdout and is given nowhere to write. Logger also hears of texts whose clauses espeak-ng
// counted otherwise than splitClauses. A text's limit is UnitTimeout plus CharTimeout per
// byte, and zero CharTimeout here means 1 ms, some twenty times what espeak-ng needs.
type Options struct {
	proc.Options
	// Command is the helper program narrator-espeak, built from helper/narrator-espeak.c by
	// scripts/deps.sh into bin/, beside narrator. Empty means DefaultCommand beside the
	// running executable if it is there, else in PATH. Tests substitute programs that hang
	// or crash.
	Command string
}

// DefaultCommand is the helper program that runs the eSpeak NG library for the Phonemizer.
const DefaultCommand = "narrator-espeak"

// sandboxLimits bounds a sandboxed helper process. It lives for many texts and needs a few
// tens of MB. It writes no file, but the PulseAudio library that libespeak-ng loads sizes a
// 64 MiB shared-memory file at start-up, which the file size limit must allow (else it dies
// of SIGXFSZ). Its CPU limit ends it only in a long run, and the pool
// replaces it as one that died.
func sandboxLimits() proc.Limits {
	return proc.Limits{Memory: 512 << 20, CPU: 4 * time.Hour, FileSize: 128 << 20, Procs: proc.SandboxProcs}
}

// errNoVoice means the helper has no such voice; the process lives on.
var errNoVoice = errors.New("no such espeak-ng voice")

// Phonemizer turns text into IPA with the eSpeak NG library, run by warm helper processes
// (narrator-espeak), at most Options.Procs of them. It is safe for concurrent use.
type Phonemizer struct {
	opts Options
	log  *slog.Logger
	sem  chan struct{} // one token per process that may work at once

	mu     sync.Mutex
	idle   []*worker // the most recently used last
	live   map[*worker]struct{}
	closed bool
}

// New returns a Phonemizer. It checks that the helper program exists but starts processes on
// first use.
func New(opts Options) (*Phonemizer, error) {
	if opts.Command == "" {
		opts.Command = DefaultCommand
		if exe, err := os.Executable(); err == nil {
			if beside := filepath.Join(filepath.Dir(exe), DefaultCommand); isExecutable(beside) {
				opts.Command = beside
			}
		}
	}
	if _, err := exec.LookPath(opts.Command); err != nil {
		return nil, fmt.Errorf("phonemize: new: %w", err)
	}
	if opts.Procs <= 0 {
		opts.Procs = runtime.NumCPU()
	}
	if opts.CharTimeout <= 0 {
		opts.CharTimeout = time.Millisecond
	}
	if opts.Metrics == nil {
		opts.Metrics = proc.Discard
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Phonemizer{
		opts: opts,
		log:  log.With("component", "phonemize"),
		sem:  make(chan struct{}, opts.Procs),
		live: make(map[*worker]struct{}),
	}, nil
}

// isExecutable reports whether path is a regular file someone may execute.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Clause is one clause of a text as espeak-ng read it.
type Clause struct {
	// Phonemes is the clause's IPA exactly as espeak_TextToPhonemes wrote it: words separated
	// by spaces, with stress marks, and language-switch flags such as "(en)" where espeak-ng
	// read a word in another language; without the clause's punctuation.
	Phonemes string
	// Punct is the punctuation piper-phonemize keeps after the clause: ".", "?", "!", ",",
	// ":", ";" (also for a dash between spaces), or "" (after an ellipsis, a clause cut for
	// length, or text without final punctuation). See splitClauses.
	Punct string
	// SentenceEnd reports whether the clause ends a sentence: it ended with ".", "?", "!", or
	// is the text's last.
	SentenceEnd bool
}

// Phonemize reads text with the espeak-ng voice (a language with an optional variant, such as
// "en-us", "de" or "en-gb") and returns its clauses in order, at least one. Invalid UTF-8, NUL
// and line breaks are read as spaces. A process that hangs or dies is killed and the text
// retried once on a fresh process. It returns ctx.Err() if ctx ends first, and ErrClosed after
// Close.
func (p *Phonemizer) Phonemize(ctx context.Context, voice, text string) ([]Clause, error) {
	if err := checkVoice(voice); err != nil {
		return nil, err
	}
	text = clean(text)
	answers, err := p.run(ctx, voice, []string{text})
	if err != nil {
		return nil, err
	}
	ends := splitClauses(lang(voice), text)
	raw := answers[0]
	clauses := make([]Clause, len(raw))
	matched, k := 0, 0 // ends[k] is the first end not yet passed
	for i, rc := range raw {
		clauses[i] = Clause{Phonemes: rc.ipa, SentenceEnd: i == len(raw)-1}
		// espeak-ng read up to rc.end, one character into the next clause: the clause's
		// punctuation, if any, ends where only spaces and that character follow.
		for ; k < len(ends) && ends[k].end <= rc.end; k++ {
			if e := ends[k]; lookahead(text[e.end:rc.end]) {
				clauses[i].Punct, clauses[i].SentenceEnd = terminator(e.ctype)
				clauses[i].SentenceEnd = clauses[i].SentenceEnd || i == len(raw)-1
				matched++
			}
		}
	}
	if matched < len(ends) {
		p.log.WarnContext(ctx, "espeak-ng ended fewer clauses at punctuation than expected; some punctuation is not kept",
			"voice", voice, "expected", len(ends), "matched", matched, "text", proc.Abbrev(text))
	}
	return clauses, nil
}

// lookahead reports whether s is what espeak-ng reads past a clause's end before it stops:
// spaces, then at most one other character.
func lookahead(s string) bool {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	return utf8.RuneCountInString(s) <= 1
}

// clean makes text safe to send as one line: valid UTF-8 without NUL or line breaks.
func clean(text string) string {
	text = strings.ToValidUTF8(text, " ")
	return strings.Map(func(r rune) rune {
		switch r {
		case 0, '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
			return ' '
		}
		return r
	}, text)
}

// lang returns the language of an espeak-ng voice name: "de" for "de+f3", "en" for "en-us".
func lang(voice string) string {
	if i := strings.IndexAny(voice, "-+"); i >= 0 {
		return voice[:i]
	}
	return voice
}

// rawClause is one clause of the helper's answer.
type rawClause struct {
	ipa string
	end int // how far into the text espeak-ng read for it
}

// run reads each text with voice on one process and returns the clauses of each, retrying
// once on a fresh process.
func (p *Phonemizer) run(ctx context.Context, voice string, texts []string) ([][]rawClause, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.sem }()

	chars := 0
	for _, t := range texts {
		chars += len(t)
	}
	limit := p.opts.UnitTimeout
	if limit <= 0 {
		limit = proc.DefaultUnitTimeout
	}
	limit += time.Duration(chars) * p.opts.CharTimeout
	var errs []error
	for attempt := range 2 {
		w, err := p.get(voice)
		if err == nil {
			var answers [][]rawClause
			p.opts.Metrics.Busy(1)
			answers, err = w.read(ctx, voice, texts, limit)
			p.opts.Metrics.Busy(-1)
			if err == nil || errors.Is(err, errNoVoice) {
				p.put(w)
			} else {
				p.discard(w)
			}
			if err == nil {
				return answers, nil
			}
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, ErrClosed) || p.isClosed():
			return nil, ErrClosed
		case errors.Is(err, errNoVoice):
			return nil, fmt.Errorf("phonemize: %w: %q", err, voice)
		}
		p.log.WarnContext(ctx, "espeak-ng helper killed and replaced", "attempt", attempt+1, "voice", voice, "chars", chars, "err", err)
		if errors.Is(err, proc.ErrHung) {
			p.opts.Metrics.TimedOut()
		}
		p.opts.Metrics.Restarted()
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("phonemize %q in %s: %w", proc.Abbrev(strings.Join(texts, " ")), voice, errors.Join(errs...))
}

// get returns an idle process, one whose voice is voice if there is one, or starts one.
func (p *Phonemizer) get(voice string) (*worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		i := n - 1
		for j := n - 1; j >= 0; j-- {
			if p.idle[j].voice == voice {
				i = j
				break
			}
		}
		w := p.idle[i]
		p.idle = append(p.idle[:i], p.idle[i+1:]...)
		return w, nil
	}
	cmd := p.opts.Sandbox.Command(sandboxLimits(), "", p.opts.Command)
	w, err := proc.StartWarm(p.opts.Command, cmd, "", nil)
	if err != nil {
		return nil, err
	}
	wk := &worker{Warm: w}
	p.live[wk] = struct{}{}
	return wk, nil
}

// put returns a process to the idle pool.
func (p *Phonemizer) put(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		w.Kill()
		return
	}
	p.idle = append(p.idle, w)
}

// discard kills w and forgets it.
func (p *Phonemizer) discard(w *worker) {
	w.Kill()
	p.mu.Lock()
	delete(p.live, w)
	p.mu.Unlock()
}

func (p *Phonemizer) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Ping reports whether the Phonemizer can phonemise: ErrClosed after Close, and an error if
// the helper program is gone.
func (p *Phonemizer) Ping(ctx context.Context) error {
	if p.isClosed() {
		return ErrClosed
	}
	if _, err := exec.LookPath(p.opts.Command); err != nil {
		return fmt.Errorf("phonemize: ping: %w", err)
	}
	return nil
}

// Close kills every helper process, including those at work (their callers get ErrClosed).
// Later calls to Phonemize return ErrClosed. It may be called more than once.
func (p *Phonemizer) Close() error {
	p.mu.Lock()
	p.closed = true
	live := p.live
	p.live = make(map[*worker]struct{})
	p.idle = nil
	p.mu.Unlock()
	for w := range live {
		w.Kill()
	}
	return nil
}

// worker is one warm helper process (see helper/narrator-espeak.c for its protocol). It is
// used by one goroutine at a time.
type worker struct {
	*proc.Warm
	voice string // the voice of its last request
}

// read sends each text as a request in voice and returns the clauses of each.
func (w *worker) read(ctx context.Context, voice string, texts []string, limit time.Duration) ([][]rawClause, error) {
	deadline := time.Now().Add(limit)
	answers := make([][]rawClause, 0, len(texts))
	for _, text := range texts {
		var clauses []rawClause
		var failed error
		err := w.Exchange(ctx, voice+"\t"+text+"\n", time.Until(deadline), func(line string) (bool, error) {
			switch {
			case line == "D":
				return true, nil
			case strings.HasPrefix(line, "E "):
				failed = errNoVoice
				return true, nil
			case strings.HasPrefix(line, "C "):
				n, ipa, ok := strings.Cut(line[2:], " ")
				end, err := strconv.Atoi(n)
				if !ok || err != nil || end < -1 || end > len(text) {
					return false, fmt.Errorf("odd answer %q", proc.Abbrev(line))
				}
				if end == -1 {
					end = len(text)
				}
				clauses = append(clauses, rawClause{ipa: ipa, end: end})
				return false, nil
			}
			return false, fmt.Errorf("odd answer %q", proc.Abbrev(line))
		})
		if err != nil {
			return nil, err
		}
		w.voice = voice
		if failed != nil {
			w.voice = ""
			return nil, failed
		}
		answers = append(answers, clauses)
	}
	return answers, nil
}

// checkVoice accepts espeak-ng voice names: letters, digits, '-', '_' and '+' (before a
// variant), not starting with '-' or '+', which the espeak-ng program would read as an
// option, and at most 64 bytes.
func checkVoice(voice string) error {
	if voice == "" || voice[0] == '-' || voice[0] == '+' || len(voice) > 64 {
		return fmt.Errorf("phonemize: invalid espeak-ng voice name %q", voice)
	}
	for _, r := range voice {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+') {
			return fmt.Errorf("phonemize: invalid espeak-ng voice name %q", voice)
		}
	}
	return nil
}
