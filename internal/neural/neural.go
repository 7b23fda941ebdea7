// Package neural speaks with the neural voices the operator installs: Piper voices (VITS
// models with a NAME.onnx.json) and Kokoro models with their voices file, both run with
// onnxruntime.
//
// Nothing of a voice runs in the server process. Text becomes phoneme IDs or tokens in warm
// espeak-ng processes (internal/phonemize), and the model runs in warm worker processes of
// the narrator binary itself (narrator onnx-worker, internal/onnx/worker), both in the
// sandbox: a crash, hang or runaway allocation in onnxruntime or espeak-ng kills a process
// and never the server, whose memory holds no model. A run whose worker dies is retried once
// on a fresh one.
//
// A voice's files come from the media store, so that every node of a cluster offers the same
// voices; each node fetches a file once, checks its SHA-256, and keeps it on local disk under
// its checksum (Options.CacheDir).
package neural

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/proc"
)

// ErrClosed is returned by Synthesize after Close.
var ErrClosed = errors.New("neural: engine closed")

// ErrNoRuntime is returned for every neural voice when no onnxruntime library is set.
var ErrNoRuntime = errors.New("neural voices need the onnxruntime library: give its path with --onnxruntime (or NARRATOR_ONNXRUNTIME); scripts/deps.sh onnxruntime fetches one")

// VoiceSource finds installed voices by their ID.
type VoiceSource interface {
	// Installed returns ENOTFOUND if no installed voice has the ID.
	Installed(ctx context.Context, id string) (*narrator.InstalledVoice, error)
}

// Options configures an Engine.
type Options struct {
	// Voices finds the installed voices; Files reads their files.
	Voices VoiceSource
	Files  FileSource
	// CacheDir keeps the voices' files on local disk, named by their SHA-256.
	CacheDir string
	// Phonemizer turns text into phonemes. The Engine does not close it.
	Phonemizer *phonemize.Phonemizer
	// Command is the worker's command line before its flags: the narrator binary and
	// "onnx-worker".
	Command []string
	// Library is the onnxruntime shared library; "" refuses every neural voice with
	// ErrNoRuntime.
	Library string
	// Workers is how many worker processes a model may have; zero means 1. Runs is how many
	// runs one worker makes at once, on its one copy of the model; zero means 1. Threads is
	// how many threads one run uses; zero means 1. docs/figures.md gives the measurements
	// behind the server's choices.
	Workers, Runs, Threads int
	// Sandbox runs the workers with less power than the server; nil runs them as they are.
	Sandbox *proc.Sandbox
	// Memory is a sandboxed worker's address-space limit; zero means worker.DefaultMemory.
	Memory int64
	// UnitTimeout is the fixed part of one run's time limit, CharTimeout the part per byte
	// of text. Zero means 60 s and 100 ms: Kokoro on one core is about as slow as real time.
	UnitTimeout, CharTimeout time.Duration
	// Fault makes every worker fail on purpose: for tests only.
	Fault worker.Fault
	// Logger receives warnings about workers killed and voices that fail to load. Nil
	// discards them.
	Logger *slog.Logger
	// Metrics is told of busy, killed and hung workers. Nil records nothing.
	Metrics proc.Recorder
}

// Engine speaks with installed neural voices. Its voice names (narrator.Voice.EngineVoice)
// are the installed voices' IDs. It is safe for concurrent use.
type Engine struct {
	opts  Options
	files *fileCache
	log   *slog.Logger

	loading chan struct{} // a token held while a voice loads

	mu     sync.Mutex // guards the fields below
	closed bool
	voices map[string]*voice       // by voice ID
	pools  map[string]*worker.Pool // by model SHA-256: voices of one model share its workers
}

// voice is an installed voice ready to speak.
type voice struct {
	inst *narrator.InstalledVoice
	pool *worker.Pool
	// Piper
	piper   *phonemize.PiperConfig
	speaker int64
	// timed is true if the model gives its durations; pad, space and punct are then the IDs
	// or tokens that are no word's phonemes (phonemize.PiperConfig.Symbols,
	// phonemize.KokoroSymbols).
	timed             bool
	pad, space, punct map[int64]bool
	// Kokoro
	espeak string
	styles Styles
}

// New returns an Engine. It starts nothing: a voice's files are fetched and its workers
// started when it first speaks.
func New(opts Options) (*Engine, error) {
	if opts.Phonemizer == nil || opts.Voices == nil {
		return nil, errors.New("neural: new: a phonemizer and a voice source are required")
	}
	if opts.Library != "" && len(opts.Command) == 0 {
		return nil, errors.New("neural: new: the worker command is required")
	}
	if opts.UnitTimeout <= 0 {
		opts.UnitTimeout = time.Minute
	}
	if opts.CharTimeout <= 0 {
		opts.CharTimeout = 100 * time.Millisecond
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		opts:    opts,
		files:   newFileCache(opts.CacheDir, opts.Files),
		log:     log.With("engine", "neural"),
		loading: make(chan struct{}, 1),
		voices:  map[string]*voice{},
		pools:   map[string]*worker.Pool{},
	}, nil
}

// sentencePause is the silence between the sentences of one text, which Piper speaks one at
// a time.
const sentencePause = 150 * time.Millisecond

// Synthesize speaks plain text in the installed voice whose ID is voiceID and returns mono
// 16-bit PCM and its sample rate (the Piper voice's, or 24 kHz for Kokoro). rate is a
// speaking-rate factor: 1 is normal, 2 twice as fast; zero means 1. It returns ctx.Err() if
// ctx ends first, ErrClosed after Close, and ErrNoRuntime without a library. A model that
// onnxruntime cannot run gives an error marked narrator.VoiceFailed, naming the voice.
func (e *Engine) Synthesize(ctx context.Context, voiceID, text string, rate float64) ([]int16, int, error) {
	samples, sampleRate, _, err := e.SynthesizeWords(ctx, voiceID, text, rate)
	return samples, sampleRate, err
}

// SynthesizeWords is Synthesize that also returns the words of text, with their spans in
// seconds from the start of the samples, where the voice says how long each phoneme lasts: a
// Piper voice whose model gives its durations (see MarkDurations), where each phoneme ID lasts
// its frames times the config's hop length in samples, and a Kokoro voice whose model does (a
// timestamped export, worker.KokoroSignature.Durations), where each token lasts its frames
// times worker.KokoroFrameSamples. The words are the text's, timed through the spaces between
// the phonemes of its words. Other voices give no words.
func (e *Engine) SynthesizeWords(ctx context.Context, voiceID, text string, rate float64) ([]int16, int, []narrator.TranscriptWord, error) {
	if rate == 0 {
		rate = 1
	}
	if rate < narrator.MinSpeechSpeed || rate > narrator.MaxSpeechSpeed {
		return nil, 0, nil, fmt.Errorf("neural: synthesize: rate %g out of range [%g, %g]", rate, narrator.MinSpeechSpeed, narrator.MaxSpeechSpeed)
	}
	v, err := e.voice(ctx, voiceID)
	if err != nil {
		return nil, 0, nil, err
	}
	limit := proc.Limit(e.opts.UnitTimeout, e.opts.CharTimeout, text)
	var (
		samples    []int16
		sampleRate int
		words      []narrator.TranscriptWord
	)
	if v.piper != nil {
		samples, sampleRate, words, err = e.piper(ctx, v, text, float32(rate), limit)
	} else {
		samples, sampleRate, words, err = e.kokoro(ctx, v, text, float32(rate), limit)
	}
	switch {
	case err == nil:
		return samples, sampleRate, words, nil
	case errors.Is(err, worker.ErrClosed) || errors.Is(err, phonemize.ErrClosed):
		return nil, 0, nil, ErrClosed
	case ctx.Err() != nil:
		return nil, 0, nil, ctx.Err()
	case errors.Is(err, worker.ErrRun):
		// onnxruntime refused the run: the model fails on what it was given, which the same
		// text, tried again, gives it again. The voice is at fault, not the text.
		err = narrator.VoiceFailed(v.inst.Label(), err)
	}
	return nil, 0, nil, fmt.Errorf("neural: synthesize %q with %s: %w", proc.Abbrev(text), voiceID, err)
}

// piper speaks text with a Piper voice, one sentence per run, rate dividing the length scale.
// If the model gives its durations, it times the words of text.
func (e *Engine) piper(ctx context.Context, v *voice, text string, rate float32, limit time.Duration) ([]int16, int, []narrator.TranscriptWord, error) {
	c := v.piper
	sentences, err := e.opts.Phonemizer.Piper(ctx, c, text)
	if err != nil {
		return nil, 0, nil, err
	}
	pause := int(sentencePause.Seconds() * float64(c.SampleRate))
	runs := make([][]float32, len(sentences))
	var spoken []phonemeWord
	timed := v.timed
	at := 0
	for i, ids := range sentences {
		in := worker.PiperInput{IDs: ids, NoiseScale: c.NoiseScale, LengthScale: c.LengthScale / rate, NoiseW: c.NoiseW, Speaker: v.speaker}
		var frames []float32
		if runs[i], frames, err = v.pool.PiperFrames(ctx, in, limit); err != nil {
			return nil, 0, nil, err
		}
		if timed && len(frames) == len(ids) {
			spoken = append(spoken, phonemeWords(ids, frameSamples(frames, c.HopLength), at, v.pad, v.space, v.punct)...)
		} else {
			timed = false
		}
		at += len(runs[i]) + pause
	}
	var words []narrator.TranscriptWord
	if timed {
		words = alignWords(narrator.WordTokens(text), spoken, c.SampleRate)
	}
	return toPCM(runs, pause), c.SampleRate, words, nil
}

// kokoro speaks text with a Kokoro voice, in chunks of at most 510 tokens, each with the
// style row of its length. If the model gives its durations, it times the words of text: a
// chunk's start at the end of the samples of those before it.
func (e *Engine) kokoro(ctx context.Context, v *voice, text string, rate float32, limit time.Duration) ([]int16, int, []narrator.TranscriptWord, error) {
	phonemes, err := e.opts.Phonemizer.Kokoro(ctx, v.espeak, text, nil)
	if err != nil {
		return nil, 0, nil, err
	}
	chunks := phonemize.KokoroTokens(phonemes, nil)
	runs := make([][]float32, len(chunks))
	var spoken []phonemeWord
	timed := v.timed
	at := 0
	for i, tokens := range chunks {
		style, _ := v.styles.Row(v.inst.Speaker, len(tokens)-2)
		var frames []float32
		if runs[i], frames, err = v.pool.KokoroFrames(ctx, worker.KokoroInput{Tokens: tokens, Style: style, Speed: rate}, limit); err != nil {
			return nil, 0, nil, err
		}
		if timed && len(frames) == len(tokens) {
			spoken = append(spoken, phonemeWords(tokens, frameSamples(frames, worker.KokoroFrameSamples), at, v.pad, v.space, v.punct)...)
		} else {
			timed = false
		}
		at += len(runs[i])
	}
	var words []narrator.TranscriptWord
	if timed {
		words = alignWords(narrator.WordTokens(text), spoken, phonemize.KokoroSampleRate)
	}
	return toPCM(runs, 0), phonemize.KokoroSampleRate, words, nil
}

// frameSamples returns how many samples each phoneme lasts, from its frames, whole numbers
// as a model gives them, of hop samples each.
func frameSamples(frames []float32, hop int) []int {
	lengths := make([]int, len(frames))
	for k, f := range frames {
		lengths[k] = int(math.Round(float64(max(f, 0)))) * hop
	}
	return lengths
}

// toPCM joins runs' float samples in [-1, 1] as 16-bit PCM, clipping what is beyond, with
// pause samples of silence between runs. It allocates the result once.
func toPCM(runs [][]float32, pause int) []int16 {
	n := pause * max(len(runs)-1, 0)
	for _, f := range runs {
		n += len(f)
	}
	out := make([]int16, 0, n)
	for i, f := range runs {
		if i > 0 {
			out = out[:len(out)+pause] // zeros: make cleared them
		}
		for _, s := range f {
			x := math.Round(float64(s) * math.MaxInt16)
			out = append(out, int16(min(max(x, math.MinInt16), math.MaxInt16)))
		}
	}
	return out
}

// voice returns the voice whose ID is id, ready to speak: its files fetched, its config or
// styles read, its model's pool made.
func (e *Engine) voice(ctx context.Context, id string) (*voice, error) {
	if e.opts.Library == "" {
		return nil, ErrNoRuntime
	}
	inst, err := e.opts.Voices.Installed(ctx, id)
	if narrator.ErrorCode(err) == narrator.ENOTFOUND {
		e.forget(id) // removed: its workers and files go
	}
	if err != nil {
		return nil, fmt.Errorf("neural: voice %s: %w", id, err)
	}
	if v, err := e.loaded(id, inst); v != nil || err != nil {
		return v, err
	}
	// Voices load one at a time, without e.mu: a voice whose files are being fetched holds
	// up no other voice's units, and a unit waiting for the load gives up with its context.
	select {
	case e.loading <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-e.loading }()
	if v, err := e.loaded(id, inst); v != nil || err != nil {
		return v, err // loaded meanwhile
	}
	v, err := e.load(ctx, inst)
	if err != nil {
		e.log.Warn("voice failed to load", "voice", id, "err", err)
		return nil, fmt.Errorf("neural: voice %s: %w", id, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	old, reinstalled := e.voices[id]
	e.voices[id] = v
	if reinstalled {
		e.release(id, old) // installed again with other files: what only they used goes
	}
	return v, nil
}

// forget drops the voice id, if it is loaded: it was removed.
func (e *Engine) forget(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.voices[id]; ok {
		delete(e.voices, id)
		e.release(id, old)
	}
}

// release closes the workers of old's model and deletes its cached files, unless a loaded
// voice uses them. e.mu is held.
func (e *Engine) release(id string, old *voice) {
	used := map[string]bool{}
	for _, v := range e.voices {
		for _, f := range v.inst.Files {
			used[f.SHA256] = true
		}
	}
	for _, f := range old.inst.Files {
		if used[f.SHA256] {
			continue
		}
		if p, ok := e.pools[f.SHA256]; ok {
			delete(e.pools, f.SHA256)
			if err := p.Close(); err != nil && !errors.Is(err, worker.ErrClosed) {
				e.log.Warn("close the workers of a removed voice", "voice", id, "err", err)
			}
		}
		e.files.remove(f)
	}
}

// loaded returns the voice id if it is ready with inst's files, ErrClosed after Close, or
// neither.
func (e *Engine) loaded(id string, inst *narrator.InstalledVoice) (*voice, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if v, ok := e.voices[id]; ok && sameFiles(v.inst, inst) {
		return v, nil
	}
	return nil, nil
}

// sameFiles reports whether two entries of a voice name the same files.
func sameFiles(a, b *narrator.InstalledVoice) bool {
	if len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		if a.Files[i] != b.Files[i] {
			return false
		}
	}
	return a.Speaker == b.Speaker
}

// load readies an installed voice. The loading token is held: voices load one at a time,
// and a model's pool is made once.
func (e *Engine) load(ctx context.Context, inst *narrator.InstalledVoice) (*voice, error) {
	model, ok := inst.File(narrator.VoiceFileModel)
	if !ok {
		return nil, errors.New("no model file")
	}
	modelPath, err := e.files.path(ctx, model)
	if err != nil {
		return nil, err
	}
	pool, err := e.pool(ctx, model.SHA256, modelPath)
	if err != nil {
		return nil, err
	}
	kind, info, err := pool.Info(ctx)
	if err != nil {
		return nil, err
	}
	v := &voice{inst: inst, pool: pool}
	switch {
	case inst.Engine == narrator.EnginePiper && kind == worker.Piper:
		sig, err := info.Piper()
		if err != nil {
			return nil, err
		}
		cfgFile, _ := inst.File(narrator.VoiceFileConfig)
		p, err := e.files.path(ctx, cfgFile)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if v.piper, err = phonemize.ParsePiperConfig(b); err != nil {
			return nil, err
		}
		if v.speaker, err = PiperSpeaker(v.piper, sig, inst.Speaker); err != nil {
			return nil, err
		}
		if sig.Durations != "" {
			v.timed = true
			v.pad, v.space, v.punct = v.piper.Symbols()
		}
	case inst.Engine == narrator.EngineKokoro && kind == worker.Kokoro:
		if err := e.loadKokoro(ctx, v, info); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("the model is a %s model, but the voice is installed as a %s voice", kind, inst.Engine)
	}
	return v, nil
}

// loadKokoro readies a Kokoro voice v, whose model's signature is info: its phonemiser, its
// style table, and whether it times its words.
func (e *Engine) loadKokoro(ctx context.Context, v *voice, info worker.Info) error {
	sig, err := info.Kokoro()
	if err != nil {
		return err
	}
	if sig.Durations != "" {
		v.timed = true
		v.pad, v.space, v.punct = phonemize.KokoroSymbols(nil)
	}
	kv, err := phonemize.ParseKokoroVoice(v.inst.Speaker)
	if err != nil {
		return err
	}
	if kv.EspeakVoice == "" {
		return fmt.Errorf("the Kokoro voice %s needs a phonemiser Narrator does not have", v.inst.Speaker)
	}
	v.espeak = kv.EspeakVoice
	stylesFile, _ := v.inst.File(narrator.VoiceFileStyles)
	p, err := e.files.path(ctx, stylesFile)
	if err != nil {
		return err
	}
	all, err := ReadStyles(p, stylesFile.Name)
	if err != nil {
		return err
	}
	// Only this voice's table stays in memory: a voices file holds 54 of 522 KB each.
	table, ok := all[v.inst.Speaker]
	if !ok {
		return fmt.Errorf("the voices file %s has no voice %s", stylesFile.Name, v.inst.Speaker)
	}
	v.styles = Styles{v.inst.Speaker: table}
	return nil
}

// PiperSpeaker returns the speaker ID that a Piper voice's runs give the model: 0 for a
// one-speaker model, else the named speaker's, or speaker 0 when none is named.
func PiperSpeaker(c *phonemize.PiperConfig, sig worker.PiperSignature, speaker string) (int64, error) {
	switch {
	case !sig.MultiSpeaker && c.NumSpeakers > 1:
		return 0, fmt.Errorf("the config has %d speakers but the model takes no speaker ID (sid)", c.NumSpeakers)
	case sig.MultiSpeaker && c.NumSpeakers <= 1:
		return 0, errors.New("the model takes a speaker ID (sid) but the config has one speaker")
	case speaker == "":
		return 0, nil
	case !sig.MultiSpeaker:
		return 0, fmt.Errorf("speaker %q given for a one-speaker voice", speaker)
	}
	id, ok := c.SpeakerIDs[speaker]
	if !ok || id < 0 || id >= int64(c.NumSpeakers) {
		return 0, fmt.Errorf("the voice has no speaker %q", speaker)
	}
	return id, nil
}

// pool returns the worker pool of a model, making it on first use (it starts no worker).
func (e *Engine) pool(_ context.Context, sha, path string) (*worker.Pool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if p, ok := e.pools[sha]; ok {
		return p, nil
	}
	p, err := worker.New(worker.Config{
		Command: e.opts.Command, Library: e.opts.Library, Model: path,
		Threads: e.opts.Threads, Runs: e.opts.Runs, Workers: e.opts.Workers,
		Sandbox: e.opts.Sandbox, Memory: e.opts.Memory, Fault: e.opts.Fault,
		Logger: e.log, Metrics: e.opts.Metrics,
	})
	if err != nil {
		return nil, err
	}
	e.pools[sha] = p
	return p, nil
}

// Ping reports whether the engine can run: ErrClosed after Close, and the phonemiser's error
// if espeak-ng is gone. Without a library it is up: it refuses every voice, with
// ErrNoRuntime, and a node with no neural voice to speak is as ready as one with them.
func (e *Engine) Ping(ctx context.Context) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := e.opts.Phonemizer.Ping(ctx); err != nil {
		return fmt.Errorf("neural: ping: %w", err)
	}
	return nil
}

// Close kills every worker (runs under way fail). Later calls to Synthesize return ErrClosed.
// It may be called more than once.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, p := range e.pools {
		if err := p.Close(); err != nil && !errors.Is(err, worker.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
