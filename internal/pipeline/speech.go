package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/speak"
)

// Speak speaks s and writes it to w in s.Format, sentence by sentence as
// a rendering does: the same units, engines, unit cache and, for MP3, the
// same chunked encoder, whose first chunks end at every pause, as the
// live stream's do. Each sentence is written as soon as it and those
// before it are spoken, so w sees the first bytes before the rest is
// synthesised; nothing is written before the first sentence, or the
// first piece of a long one (speak.SplitLead), is spoken.
// It returns EINVALID, before writing anything, for a format it does not
// make, a voice whose engine is not running here, or a text with nothing
// to read or too long to speak; any error after the first write leaves w
// with a partial stream.
func (p *Pipeline) Speak(ctx context.Context, s narrator.Speech, w io.Writer) error {
	if !slices.Contains(narrator.SpeechFormats(), s.Format) {
		return narrator.Errorf(narrator.EINVALID, "format %q is not offered", s.Format)
	}
	if p.engines[s.Voice.Engine] == nil {
		return narrator.Errorf(narrator.EINVALID, "voice %s needs engine %s, which is not running on this server", s.Voice.Name, s.Voice.Engine)
	}
	speed := s.Speed
	if speed == 0 {
		speed = 1
	}
	rules, err := p.projectRules(ctx, s.ProjectID)
	if err != nil {
		return err
	}
	if err := p.length.Text("", "", s.Text); err != nil {
		return err
	}
	// A long first sentence is spoken in two pieces, where it has a
	// natural pause, so that the first bytes wait for its first piece
	// only: the MP3's first chunk ends there.
	units := speak.SplitLead(speak.Script(s.Voice.Language, "", "", s.Text, rules))
	if len(units) == 0 {
		return narrator.Errorf(narrator.EINVALID, "the input has no text that can be read aloud")
	}
	voices := make([]narrator.Voice, len(units))
	for i := range units {
		voices[i] = s.Voice
	}
	scaleRates(units, speed)
	switch s.Format {
	case narrator.SpeechMP3:
		enc := p.newChunkEncoder(ctx, w)
		if _, err := p.speak(ctx, units, voices, enc); err != nil {
			enc.Abort()
			return err
		}
		if err := enc.Close(); err != nil {
			return fmt.Errorf("encode mp3: %w", err)
		}
		return nil
	case narrator.SpeechWAV:
		_, err := p.speak(ctx, units, voices, &rawWriter{w: w, header: streamingWAVHeader(SampleRate)})
		return err
	default:
		rs, err := pcm.NewResampler(SampleRate, narrator.SpeechPCMRate)
		if err != nil {
			return fmt.Errorf("speak pcm: %w", err)
		}
		raw := &rawWriter{w: w, resample: rs}
		if _, err := p.speak(ctx, units, voices, raw); err != nil {
			return err
		}
		return raw.flush()
	}
}

// projectRules returns the compiled pronunciation rules of a project, or
// nil for project 0 or if the pipeline has no rule source.
func (p *Pipeline) projectRules(ctx context.Context, projectID int64) (*speak.Rules, error) {
	if p.rules == nil || projectID == 0 {
		return nil, nil
	}
	prons, err := p.rules.ListPronunciations(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("load pronunciation rules: %w", err)
	}
	set := make([]speak.Rule, len(prons))
	for i, r := range prons {
		set[i] = speak.Rule{Phrase: r.Phrase, Say: r.Say}
	}
	return p.compile.Rules(projectID, set), nil
}

// rawWriter writes units as 16-bit little-endian samples, after header,
// resampled if resample is set.
type rawWriter struct {
	w        io.Writer
	header   []byte // written with the first unit
	resample *pcm.Resampler
	out      []int16
	buf      []byte
}

func (r *rawWriter) Write(speech []int16, pause int) (int, error) {
	samples := appendSilence(append(r.out[:0], speech...), pause)
	if r.resample != nil {
		in := samples
		samples = r.resample.Process(make([]int16, 0, len(in)*narrator.SpeechPCMRate/SampleRate+1), in)
	}
	r.out = samples[:0]
	return 0, r.write(samples)
}

// flush writes what the resampler still holds.
func (r *rawWriter) flush() error {
	if r.resample == nil {
		return nil
	}
	return r.write(r.resample.Flush(nil))
}

func (r *rawWriter) write(samples []int16) error {
	r.buf = append(r.buf[:0], r.header...)
	r.header = nil
	for _, s := range samples {
		r.buf = binary.LittleEndian.AppendUint16(r.buf, uint16(s))
	}
	if _, err := r.w.Write(r.buf); err != nil {
		return fmt.Errorf("write speech: %w", err)
	}
	return nil
}

// scaleRates multiplies the rate of every unit (1 where its markup sets
// none) by factor, within the rates every engine takes.
func scaleRates(units []speak.Unit, factor float64) {
	for i := range units {
		rate := units[i].Rate
		if rate <= 0 {
			rate = 1
		}
		units[i].Rate = min(max(rate*factor, narrator.MinSpeechSpeed), narrator.MaxSpeechSpeed)
	}
}

// streamingWAVHeader is the header of a mono 16-bit WAV stream at rate
// whose length is not known when it starts: its RIFF and data sizes are
// the largest there are, as OpenAI's streamed WAV has them, which readers
// take to mean "up to the end".
func streamingWAVHeader(rate int) []byte {
	h := make([]byte, 0, 44)
	h = append(h, "RIFF"...)
	h = binary.LittleEndian.AppendUint32(h, math.MaxUint32)
	h = append(h, "WAVEfmt "...)
	h = binary.LittleEndian.AppendUint32(h, 16)
	h = binary.LittleEndian.AppendUint16(h, 1) // PCM
	h = binary.LittleEndian.AppendUint16(h, 1) // mono
	h = binary.LittleEndian.AppendUint32(h, uint32(rate))
	h = binary.LittleEndian.AppendUint32(h, uint32(rate*2))
	h = binary.LittleEndian.AppendUint16(h, 2)
	h = binary.LittleEndian.AppendUint16(h, 16)
	h = append(h, "data"...)
	h = binary.LittleEndian.AppendUint32(h, math.MaxUint32)
	return h
}
