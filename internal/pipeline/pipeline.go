// Package pipeline is one audio's journey: article → sentences → speech →
// MP3 + HLS → published media files.
//
// Sentences are independent synthesis units. A pool of workers, sized to
// the machine's cores, synthesises them in parallel; a single writer takes
// them back in order and hands them to the MP3 encoder, which encodes the
// audio in chunks cut in pauses, on the pipeline's warm lame workers (one
// per core, shared by every rendering), reusing the chunks an earlier
// rendering encoded (chunkEncoder). The chunks' frames
// are cut into HLS segments as they arrive in order. Only a bounded window
// of units and chunks is in memory at a time, so memory stays flat however
// long the article is.
package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/hls"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/speak"
)

// Output format of every audio.
const (
	// SampleRate is festival's: the default voice (cmu_us_slt_arctic_hts)
	// speaks at 32 kHz, so most units need no resampling, and a 64 kbps
	// MP3 keeps nothing above about 15 kHz at any rate. lame encodes it
	// about a quarter faster than 44.1 kHz.
	SampleRate    = 32000 // Hz, mono
	Bitrate       = 64    // kbps, constant
	SegmentTarget = 6 * time.Second
	// EncoderQuality is lame's -q. The fastest settings cost
	// intelligibility: on the project's samples the recognizer's mean
	// accuracy was 0.804 at 3 (lame's default), 0.808 at 5 and 0.769 at 7,
	// which halves encoding time (docs/figures.md).
	EncoderQuality = 3
)

// File names inside an audio's media folder.
const (
	MP3Name      = narrator.MediaMP3Name
	PlaylistName = "audio.m3u8"
)

// Synthesizer is a speech engine.
type Synthesizer interface {
	// Synthesize speaks plain text in an engine voice and returns mono PCM
	// and its sample rate.
	Synthesize(ctx context.Context, voice, text string, rate float64) ([]int16, int, error)
}

// WordSynthesizer is a Synthesizer that also says when each word is
// spoken. Where an engine is one, the transcript has word timings.
type WordSynthesizer interface {
	Synthesizer
	// SynthesizeWords is Synthesize that also returns the spoken words in
	// order, with their spans in seconds from the start of the returned
	// samples.
	SynthesizeWords(ctx context.Context, voice, text string, rate float64) ([]int16, int, []narrator.TranscriptWord, error)
}

// MediaWriter stores published media.
type MediaWriter interface {
	Put(ctx context.Context, key string, r io.Reader) error
	DeletePrefix(ctx context.Context, prefix string) error
}

// CatalogSource gives the current voice catalog.
type CatalogSource interface {
	Catalog(ctx context.Context) *narrator.Catalog
	// Fresh reads the catalog again at once: each rendering starts with it.
	Fresh(ctx context.Context) *narrator.Catalog
}

// RuleSource gives a project's pronunciation rules.
type RuleSource interface {
	ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error)
}

// Config configures a Pipeline.
type Config struct {
	// Engines maps an engine name (narrator.Voice.Engine) to the engine.
	Engines map[string]Synthesizer
	// Voices gives the voice catalog; nil means the built-in voices.
	Voices CatalogSource
	Media  MediaWriter
	// Rules gives the pronunciation rules; nil means none.
	Rules RuleSource
	// Clips gives the projects' intros and outros; nil means none.
	Clips ClipSource
	// RuleCache keeps the rule sets compiled; a cache of its own when nil.
	RuleCache *speak.RuleCache
	// Workers is how many units are synthesised at once, and how many
	// chunks of MP3 encoded at once by all renderings together; 0 means
	// one per core.
	Workers int
	// ScratchDir holds temporary files; "" means the system default.
	ScratchDir string
	// Cache keeps synthesised units between renderings; nil means none.
	Cache  *UnitCache
	Logger *slog.Logger
	// Sandbox runs the MP3 encoder with less power than the server; nil
	// runs it as it is. (The engines get theirs when they are made.)
	Sandbox *proc.Sandbox
	// MaxDuration caps an audio's length, pauses included; 0 means
	// narrator.MaxAudioDuration. An article whose estimate is over it fails
	// before any synthesis, and one whose speech turns out longer fails as
	// soon as it passes it, with nothing stored.
	MaxDuration time.Duration
}

// Pipeline renders audios. It is safe for concurrent use.
type Pipeline struct {
	engines map[string]Synthesizer
	voices  CatalogSource
	media   MediaWriter
	rules   RuleSource
	clips   ClipSource
	compile *speak.RuleCache
	workers int
	scratch string
	cache   *UnitCache
	length  narrator.LengthCheck
	logger  *slog.Logger
	sandbox *proc.Sandbox
	lame    *mp3.ChunkPool // encodes the chunks of every rendering
}

// New returns a pipeline.
func New(cfg Config) *Pipeline {
	p := &Pipeline{
		engines: cfg.Engines,
		voices:  cfg.Voices,
		media:   cfg.Media,
		rules:   cfg.Rules,
		clips:   cfg.Clips,
		compile: cfg.RuleCache,
		workers: cfg.Workers,
		scratch: cfg.ScratchDir,
		cache:   cfg.Cache,
		length:  speak.LengthCheck(cfg.MaxDuration),
		logger:  cfg.Logger,
		sandbox: cfg.Sandbox,
	}
	if p.workers <= 0 {
		p.workers = runtime.NumCPU()
	}
	if p.compile == nil {
		p.compile = speak.NewRuleCache(0)
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.lame = mp3.NewChunkPool(p.encodeOptions(), p.workers, p.scratch)
	return p
}

// Close stops the pipeline's lame workers; renderings still running fail.
// The caller closes the engines.
func (p *Pipeline) Close() error {
	return p.lame.Close()
}

// Render synthesises an audio and stores its MP3, its HLS playlist and the
// playlist's segments in a new folder named by a random token, and beside
// them the transcript (narrator.TranscriptKeys). It returns the keys of the
// MP3 and the playlist by content type with their sizes, which a podcast
// feed announces, and the duration. On error it removes whatever it stored.
func (p *Pipeline) Render(ctx context.Context, a *narrator.Audio, proj *narrator.Project) (narrator.Rendering, error) {
	return p.RenderLive(ctx, a, proj, nil)
}

// RenderLive is Render that reports its progress to progress (nil for
// none). While it works, the audio plays from the live playlist
// (narrator.LivePlaylistName) in the same folder, published after every
// segment from the first, which is cut short (FirstSegmentTarget); the
// first report that carries its key comes once it plays.
//
// progress is called after each unit is written and when the live
// playlist is first published, from the rendering's goroutines, one call
// at a time. It must return at once: a caller that stores progress keeps
// the latest report and writes it from a goroutine of its own.
func (p *Pipeline) RenderLive(ctx context.Context, a *narrator.Audio, proj *narrator.Project, progress func(narrator.RenderProgress)) (_ narrator.Rendering, err error) {
	units, voices, err := p.script(ctx, a, proj)
	if err != nil {
		return narrator.Rendering{}, err
	}
	frame, err := p.projectClips(ctx, proj.ID)
	if err != nil {
		return narrator.Rendering{}, err
	}
	folder, err := narrator.NewMediaFolder()
	if err != nil {
		return narrator.Rendering{}, err
	}
	prefix := folder + "/"
	defer func() {
		if err != nil {
			if derr := p.media.DeletePrefix(context.WithoutCancel(ctx), prefix); derr != nil {
				p.logger.Warn("remove partial media", "prefix", prefix, "err", derr)
			}
		}
	}()

	tmp, err := os.CreateTemp(p.scratch, "narrator-*.mp3")
	if err != nil {
		return narrator.Rendering{}, fmt.Errorf("create scratch file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()

	seg := hls.NewSegmenter(SegmentTarget, func(name string, data []byte) error {
		return p.media.Put(ctx, prefix+name, bytes.NewReader(data))
	})
	live := newLiveStream(p.media, prefix, len(units), progress)
	seg.Live(FirstSegmentTarget, func(segments []hls.Segment) error { return live.stored(ctx, segments) })
	enc := p.newChunkEncoder(ctx, io.MultiWriter(tmp, seg))
	spans, err := p.speakFramed(ctx, units, voices, frame, enc, live)
	if err != nil {
		enc.Abort()
		return narrator.Rendering{}, err
	}
	if err := enc.Close(); err != nil {
		return narrator.Rendering{}, fmt.Errorf("encode mp3: %w", err)
	}
	playlist, err := seg.Close()
	if err != nil {
		return narrator.Rendering{}, fmt.Errorf("package hls: %w", err)
	}
	// Summed in samples: segment durations each round down.
	var samples int64
	for _, s := range seg.Segments() {
		samples += s.Samples
	}
	d := time.Duration(samples * int64(time.Second) / SampleRate)
	if err := p.media.Put(ctx, prefix+PlaylistName, bytes.NewReader(playlist)); err != nil {
		return narrator.Rendering{}, fmt.Errorf("store playlist: %w", err)
	}
	if err := live.end(ctx, seg.Segments()); err != nil {
		return narrator.Rendering{}, err
	}
	size, err := p.storeScratch(ctx, prefix+MP3Name, tmp)
	if err != nil {
		return narrator.Rendering{}, err
	}
	if err := p.storeTranscript(ctx, prefix+MP3Name, a, transcriptOf(units, spans, d)); err != nil {
		return narrator.Rendering{}, err
	}
	return narrator.Rendering{
		Keys: map[string]string{
			narrator.ContentTypeMP3:  prefix + MP3Name,
			narrator.ContentTypeM3U8: prefix + PlaylistName,
		},
		Bytes: map[string]int64{
			narrator.ContentTypeMP3:  size,
			narrator.ContentTypeM3U8: int64(len(playlist)),
		},
		Duration: d,
	}, nil
}

// script turns the article into the units to speak, at the project's rate and with its
// pronunciation rules, and picks their voices.
func (p *Pipeline) script(ctx context.Context, a *narrator.Audio, proj *narrator.Project) ([]speak.Unit, []narrator.Voice, error) {
	rules, err := p.projectRules(ctx, proj.ID)
	if err != nil {
		return nil, nil, err
	}
	// Audios stored before the API checked their length, or made longer
	// by pronunciation rules, are caught here before any speech is made.
	if err := p.length.Text(a.Title, a.Author, a.Body); err != nil {
		return nil, nil, err
	}
	units := speak.Script(proj.Language, a.Title, a.Author, a.Body, rules)
	if len(units) == 0 {
		return nil, nil, narrator.Errorf(narrator.EINVALID, "the article has no text that can be read aloud.")
	}
	// The project's rate is in each unit's rate, so the unit cache keeps
	// the speech of each rate apart.
	scaleRates(units, proj.Rate())
	voices, err := p.voicesFor(ctx, proj, units)
	if err != nil {
		return nil, nil, err
	}
	return units, voices, nil
}

// storeScratch stores the scratch mp3 written so far under key and returns its size.
func (p *Pipeline) storeScratch(ctx context.Context, key string, tmp *os.File) (int64, error) {
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, fmt.Errorf("size scratch mp3: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("rewind scratch mp3: %w", err)
	}
	if err := p.media.Put(ctx, key, tmp); err != nil {
		return 0, fmt.Errorf("store mp3: %w", err)
	}
	return size, nil
}

// speakFramed writes the intro, the units as speak does, counting them
// for live, then the outro, to enc, and returns where each unit's speech
// lies in what it wrote.
func (p *Pipeline) speakFramed(ctx context.Context, units []speak.Unit, voices []narrator.Voice, frame clips, enc *chunkEncoder, live *liveStream) ([]span, error) {
	lead, err := frame.writeIntro(enc)
	if err != nil {
		return nil, err
	}
	spans, err := p.speak(ctx, units, voices, countingWriter{enc, live})
	if err != nil {
		return nil, err
	}
	shiftSpans(spans, lead)
	return spans, frame.writeOutro(enc)
}

// pcmWriter takes PCM in reading order, one unit at a time.
type pcmWriter interface {
	// Write writes a unit: its speech, then pause samples of silence. It
	// returns how many samples of silence it added at the end of the
	// pause (chunkEncoder).
	Write(speech []int16, pause int) (int, error)
}

// spoken is one unit ready to be written.
type spoken struct {
	// speech is the unit's speech, and pause the samples of silence
	// after it.
	speech []int16
	pause  int
	// onset is where sound begins in speech.
	onset int
	// words are the spoken words, in seconds from the start of samples,
	// or nil if the engine does not report them.
	words []narrator.TranscriptWord
}

// span is where a unit's speech lies in the output, in samples from the
// start of the PCM written to the encoder.
type span struct {
	start, end int64
	words      []narrator.TranscriptWord // in seconds from the unit's first sample
	unitStart  int64                     // the unit's first sample
}

// speak synthesises units on the worker pool and writes them to w in order.
// At most a window of units waits in memory for its turn. It returns where
// each unit's speech lies in what it wrote.
func (p *Pipeline) speak(ctx context.Context, units []speak.Unit, voices []narrator.Voice, w pcmWriter) ([]span, error) {
	g, gctx := errgroup.WithContext(ctx)
	slots := make([]chan spoken, len(units))
	for i := range slots {
		slots[i] = make(chan spoken, 1)
	}
	window := make(chan struct{}, 4*p.workers)
	todo := make(chan int)
	g.Go(func() error {
		defer close(todo)
		for i := range units {
			select {
			case window <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			select {
			case todo <- i:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	// Twice as many hands as units synthesised at once: while one unit is
	// resampled and levelled here, the engine process that made it is
	// already speaking the next one. The engines' own pools bound how many
	// units they speak at once.
	for range 2 * p.workers {
		g.Go(func() error {
			rs := resamplers{}
			for i := range todo {
				sp, err := p.unit(gctx, units[i], voices[i], rs)
				if err != nil {
					return err
				}
				slots[i] <- sp
			}
			return nil
		})
	}
	spans := make([]span, len(units))
	g.Go(func() error {
		var pos int64
		for i := range units {
			select {
			case sp := <-slots[i]:
				// The speech may run longer than the estimate: stop at the cap.
				n := len(sp.speech) + sp.pause
				end := time.Duration(pos+int64(n)) * time.Second / SampleRate
				if err := p.length.Speech(end); err != nil {
					return err
				}
				pad, err := w.Write(sp.speech, sp.pause)
				if err != nil {
					return fmt.Errorf("encode unit %d: %w", i, err)
				}
				spans[i] = span{start: pos + int64(sp.onset), end: pos + int64(len(sp.speech)), words: sp.words, unitStart: pos}
				pos += int64(n + pad)
				<-window
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return spans, nil
}

// unit synthesises one unit, or takes it from the cache, and adds its pause.
func (p *Pipeline) unit(ctx context.Context, u speak.Unit, v narrator.Voice, rs resamplers) (spoken, error) {
	rate := u.Rate
	if rate <= 0 {
		rate = 1
	}
	key := cacheKey(v.Engine, v.EngineVoice, v.Build, rate, u.Text)
	e, ok := p.cache.get(key)
	if !ok {
		var err error
		if e, err = p.synthesize(ctx, u.Text, v, rate, rs); err != nil {
			return spoken{}, err
		}
		if err := p.cache.put(key, e); err != nil {
			p.logger.Warn("cache unit", "err", err)
		}
	}
	return spoken{
		speech: e.samples,
		pause:  pcm.Samples(u.Pause, SampleRate),
		onset:  speechOnset(e.samples),
		words:  e.words,
	}, nil
}

// Levels between which speech is taken to begin (RMS over 10 ms): the
// silence thresholds that onset detectors commonly use. Soft onsets (f, s,
// h) take up to about 100 ms to rise from the one to the other.
const (
	onsetLowDBFS  = -55.0
	onsetHighDBFS = -35.0
)

// speechOnset returns where a unit's speech begins, for its cue: midway
// between where its level reaches onsetLowDBFS and onsetHighDBFS, so that
// the cue is within 50 ms of the start that either threshold finds. The
// samples are normalised to pcm.DefaultTargetDBFS, so the levels are
// absolute.
func speechOnset(samples []int16) int {
	low := pcm.Onset(samples, SampleRate, onsetLowDBFS)
	if low < 0 {
		return 0
	}
	high := pcm.Onset(samples, SampleRate, onsetHighDBFS)
	if high < 0 {
		return low
	}
	return (low + high) / 2
}

// resamplers keeps one resampler to SampleRate per engine rate, for the
// units of one goroutine: building a filter costs a few milliseconds, a
// cost short units would otherwise pay each time.
type resamplers map[int]*pcm.Resampler

// resample converts samples at rate to SampleRate, as pcm.Resample does.
func (rs resamplers) resample(samples []int16, rate int) ([]int16, error) {
	r, ok := rs[rate]
	if ok {
		r.Reset()
	} else {
		var err error
		if r, err = pcm.NewResampler(rate, SampleRate); err != nil {
			return nil, err
		}
		rs[rate] = r
	}
	out := make([]int16, 0, len(samples)*SampleRate/rate+1)
	return r.Flush(r.Process(out, samples)), nil
}

// synthesize speaks text and brings it to the output format: one rate, no
// ragged silence at the ends, even loudness. Word spans, where the engine
// gives them, follow the trimming. rs resamples.
func (p *Pipeline) synthesize(ctx context.Context, text string, v narrator.Voice, rate float64, rs resamplers) (cacheEntry, error) {
	var (
		samples []int16
		sr      int
		words   []narrator.TranscriptWord
		err     error
	)
	switch eng := p.engines[v.Engine].(type) {
	case WordSynthesizer:
		samples, sr, words, err = eng.SynthesizeWords(ctx, v.EngineVoice, text, rate)
	default:
		samples, sr, err = eng.Synthesize(ctx, v.EngineVoice, text, rate)
	}
	if err != nil {
		return cacheEntry{}, fmt.Errorf("synthesize %q with %s/%s: %w", abbreviate(text), v.Engine, v.EngineVoice, err)
	}
	if sr != SampleRate {
		if samples, err = rs.resample(samples, sr); err != nil {
			return cacheEntry{}, fmt.Errorf("synthesize %q with %s/%s: %w", abbreviate(text), v.Engine, v.EngineVoice, err)
		}
	}
	start, end := pcm.TrimBounds(samples, SampleRate)
	samples = pcm.Normalize(samples[start:end], SampleRate, pcm.DefaultTargetDBFS)
	cut := leadIn(samples)
	samples = samples[cut:]
	return cacheEntry{
		samples: samples,
		words:   shiftWords(words, float64(start+cut)/SampleRate, float64(len(samples))/SampleRate),
	}, nil
}

// leadMargin is the sound kept before the level at which speech begins.
const leadMargin = 20 * time.Millisecond

// leadIn returns how many samples of faint sound come before a unit's
// speech, beyond leadMargin: a click or breath far quieter than speech
// (flite's voices start with one, 150 ms before the words) that silence
// trimming keeps. Cutting it puts the unit's first sound where its speech
// begins, which is where its cue starts.
func leadIn(samples []int16) int {
	on := pcm.Onset(samples, SampleRate, onsetLowDBFS)
	if on < 0 {
		return 0
	}
	// Onset is the middle of a 10 ms window; keep the window and the margin.
	return max(0, on-SampleRate/200-int(leadMargin.Seconds()*SampleRate))
}

// shiftWords moves word spans back by off seconds, as the samples before
// off were cut, and keeps them within [0, length]. Words wholly cut are
// dropped.
func shiftWords(words []narrator.TranscriptWord, off, length float64) []narrator.TranscriptWord {
	var out []narrator.TranscriptWord
	for _, w := range words {
		if w.End <= off || w.Start-off >= length {
			continue
		}
		w.Start = min(max(w.Start-off, 0), length)
		w.End = min(max(w.End-off, w.Start), length)
		out = append(out, w)
	}
	return out
}

// PreviewVoice speaks text in one voice, processed like every unit of an
// audio, and writes it to w as an MP3: the dashboard's voice previews.
func (p *Pipeline) PreviewVoice(ctx context.Context, v narrator.Voice, text string, w io.Writer) error {
	if p.engines[v.Engine] == nil {
		return fmt.Errorf("preview %s: engine %s is not running", v.Name, v.Engine)
	}
	e, err := p.synthesize(ctx, text, v, 1, resamplers{})
	if err != nil {
		return fmt.Errorf("preview %s: %w", v.Name, err)
	}
	samples := e.samples
	enc, err := mp3.NewEncoder(ctx, w, p.encodeOptions())
	if err != nil {
		return fmt.Errorf("preview %s: start encoder: %w", v.Name, err)
	}
	if err := enc.Write(samples); err != nil {
		_ = enc.Close()
		return fmt.Errorf("preview %s: encode: %w", v.Name, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("preview %s: encode: %w", v.Name, err)
	}
	return nil
}

// voicesFor resolves the voice of every unit: a unit's own voice where the
// project's language has it, else the project's voice for the unit's role.
// A project voice the catalog no longer has (the operator removed it) is
// replaced by its language's default, and the rendering goes on.
//
// The catalog is read afresh for each rendering, not taken from the
// source's cache: a voice removed on any node a moment ago, whose files
// are already gone from the media store, speaks no new rendering, and one
// installed a moment ago does.
func (p *Pipeline) voicesFor(ctx context.Context, proj *narrator.Project, units []speak.Unit) ([]narrator.Voice, error) {
	cat := narrator.BuiltinCatalog()
	if p.voices != nil {
		cat = p.voices.Fresh(ctx)
	}
	voices, missing, err := p.resolveVoices(cat, proj, units)
	if err != nil {
		return nil, err
	}
	if missing {
		p.logger.Warn("a voice the project or the article names is not in the catalog; its language's default speaks", "project_id", proj.ID,
			"title_voice", proj.TitleVoice, "body_voice", proj.BodyVoice)
	}
	return voices, nil
}

// resolveVoices resolves the units' voices in cat; missing is true if a voice the project
// or a unit names is not there, and a default stands in for it.
func (p *Pipeline) resolveVoices(cat *narrator.Catalog, proj *narrator.Project, units []speak.Unit) (_ []narrator.Voice, missing bool, _ error) {
	title, fellTitle, ok := cat.Resolve(proj.Language, proj.TitleVoice, true)
	if !ok {
		return nil, false, narrator.Errorf(narrator.EINVALID, "the project's language %s is not supported.", proj.Language)
	}
	body, fellBody, _ := cat.Resolve(proj.Language, proj.BodyVoice, false)
	missing = fellTitle || fellBody
	out := make([]narrator.Voice, len(units))
	for i, u := range units {
		v := body
		if u.Role == speak.RoleTitle {
			v = title
		}
		if u.Voice != "" {
			if own, ok := cat.Lookup(proj.Language, u.Voice); ok {
				v = own
			} else {
				missing = true
			}
		}
		if p.engines[v.Engine] == nil {
			return nil, missing, fmt.Errorf("voice %s needs engine %s, which is not running", v.Name, v.Engine)
		}
		out[i] = v
	}
	return out, missing, nil
}

// Catalog returns the voice catalog the pipeline speaks from.
func (p *Pipeline) Catalog(ctx context.Context) *narrator.Catalog {
	if p.voices == nil {
		return narrator.BuiltinCatalog()
	}
	return p.voices.Catalog(ctx)
}

// abbreviate shortens text for error messages.
func abbreviate(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
