package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/proc"
)

// ClipSource gives a project's intro and outro.
type ClipSource interface {
	// Clip returns the project's clip of that kind, or an ENOTFOUND
	// error if it has none.
	Clip(ctx context.Context, projectID int64, kind narrator.ClipKind) (*narrator.Clip, error)
}

// ClipPause is the silence between the intro and the article. The outro
// follows the article's last pause.
const ClipPause = 500 * time.Millisecond

// The content types DecodeClip reads.
const (
	ClipMP3 = "audio/mpeg"
	ClipWAV = "audio/wav"
)

// maxDecodedClip bounds the WAV an MP3 clip decodes to: a little over
// narrator.MaxClipDuration at the most an MP3 holds (48 kHz stereo), so
// that whatever decodes to more is too long at any rate.
const maxDecodedClip = int64(narrator.MaxClipDuration/time.Second+1) * 48000 * 2 * 2

// ClipDecoder decodes uploaded intros and outros. Any node may run one:
// it needs lame, not the engines.
type ClipDecoder struct {
	// Sandbox runs lame with less power than the server; nil runs it as
	// it is.
	Sandbox *proc.Sandbox
}

// DecodeClip decodes an uploaded intro or outro, an MP3 (ClipMP3) or a WAV
// file (ClipWAV, or another of WAV's names), to the pipeline's format (mono, SampleRate), as every
// rendering plays it. It returns an EINVALID *Error for another content
// type, audio it cannot decode, or a clip too long or too short
// (narrator.Clip.Validate). The clip's ProjectID is left 0.
func (d ClipDecoder) DecodeClip(ctx context.Context, kind narrator.ClipKind, contentType string, data []byte) (*narrator.Clip, error) {
	var (
		wav []byte
		err error
	)
	switch contentType {
	case ClipWAV, "audio/x-wav", "audio/wave", "audio/vnd.wave":
		wav = data
	case ClipMP3, "audio/mp3":
		wav, err = mp3.Decode(ctx, data, maxDecodedClip, mp3.Options{Sandbox: d.Sandbox})
		if errors.Is(err, mp3.ErrDecodedTooLarge) {
			return nil, narrator.Errorf(narrator.EINVALID, "the %s is longer than %.0f s", kind, narrator.MaxClipDuration.Seconds())
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, narrator.Errorf(narrator.EINVALID, "the %s is not an MP3 file that can be decoded", kind)
		}
	default:
		return nil, narrator.Errorf(narrator.EINVALID, "the %s must be sent as %s or %s, not %q", kind, ClipMP3, ClipWAV, contentType)
	}
	samples, rate, err := pcm.DecodeWAV(bytes.NewReader(wav))
	if err != nil {
		return nil, narrator.Errorf(narrator.EINVALID, "the %s is not audio that can be decoded: %s", kind, err)
	}
	clip := &narrator.Clip{Kind: kind, Samples: samples, SampleRate: rate}
	if err := clip.Validate(); err != nil {
		return nil, err
	}
	if rate != SampleRate {
		clip.Samples, clip.SampleRate = pcm.Resample(samples, rate, SampleRate), SampleRate
	}
	return clip, nil
}

// clips holds the samples, at SampleRate, of the intro and outro a
// rendering plays; nil where the project has none.
type clips struct {
	intro, outro []int16
}

// projectClips reads a project's intro and outro.
func (p *Pipeline) projectClips(ctx context.Context, projectID int64) (clips, error) {
	var c clips
	if p.clips == nil {
		return c, nil
	}
	for _, k := range narrator.ClipKinds() {
		clip, err := p.clips.Clip(ctx, projectID, k)
		if narrator.ErrorCode(err) == narrator.ENOTFOUND {
			continue
		}
		if err != nil {
			return clips{}, fmt.Errorf("load the project's %s: %w", k, err)
		}
		samples := clip.Samples
		if clip.SampleRate != SampleRate {
			samples = pcm.Resample(samples, clip.SampleRate, SampleRate)
		}
		if k == narrator.ClipIntro {
			c.intro = samples
		} else {
			c.outro = samples
		}
	}
	return c, nil
}

// writeIntro writes the intro, if any, and ClipPause after it to w, and
// returns how many samples it wrote: where the article starts.
func (c clips) writeIntro(w pcmWriter) (int64, error) {
	if c.intro == nil {
		return 0, nil
	}
	pause := pcm.Samples(ClipPause, SampleRate)
	pad, err := w.Write(c.intro, pause)
	if err != nil {
		return 0, fmt.Errorf("encode intro: %w", err)
	}
	return int64(len(c.intro) + pause + pad), nil
}

// writeOutro writes the outro, if any, to w.
func (c clips) writeOutro(w pcmWriter) error {
	if c.outro == nil {
		return nil
	}
	if _, err := w.Write(c.outro, 0); err != nil {
		return fmt.Errorf("encode outro: %w", err)
	}
	return nil
}

// shiftSpans moves spans later by n samples, as the intro's n samples
// come before them.
func shiftSpans(spans []span, n int64) {
	for i := range spans {
		spans[i].start += n
		spans[i].end += n
		spans[i].unitStart += n
	}
}

// SpeakClip makes a spoken intro or outro: s.Text spoken once with
// s.Voice, through Speak as a speech request is, with the project's
// pronunciation rules (s.ProjectID) at s.Speed. The clip comes back with
// its Text and Voice (narrator.SpeechVoiceID) set and its ProjectID left
// as s.ProjectID. It returns an EINVALID *Error for a text
// narrator.CheckClipText refuses, speech longer than
// narrator.MaxClipDuration (synthesis stops there) or shorter than
// narrator.MinClipDuration, and what Speak refuses.
func (p *Pipeline) SpeakClip(ctx context.Context, kind narrator.ClipKind, s narrator.Speech) (*narrator.Clip, error) {
	if err := narrator.CheckClipText(kind, s.Text); err != nil {
		return nil, err
	}
	s.Format = narrator.SpeechWAV
	// The WAV header, then a sample more than the longest clip holds.
	out := &cappedBuffer{max: 44 + 2*(pcm.Samples(narrator.MaxClipDuration, SampleRate)+1)}
	err := p.Speak(ctx, s, out)
	if out.over {
		return nil, narrator.Errorf(narrator.EINVALID, "the %s is longer than %.0f s once spoken; shorten its text", kind, narrator.MaxClipDuration.Seconds())
	}
	if err != nil {
		return nil, err
	}
	samples, rate, err := pcm.DecodeWAV(bytes.NewReader(out.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("decode the spoken %s: %w", kind, err)
	}
	clip := &narrator.Clip{ProjectID: s.ProjectID, Kind: kind, Samples: samples, SampleRate: rate,
		Text: s.Text, Voice: narrator.SpeechVoiceID(s.Voice)}
	if err := clip.Validate(); err != nil {
		return nil, err
	}
	return clip, nil
}

// errClipTooLong stops a spoken clip's synthesis once it is longer than
// a clip may be.
var errClipTooLong = errors.New("spoken clip too long")

// cappedBuffer is a buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		return 0, errClipTooLong
	}
	return b.Buffer.Write(p)
}
