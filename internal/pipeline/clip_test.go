package pipeline_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proctest"
)

// clipMap is a ClipSource of one project's clips.
type clipMap map[narrator.ClipKind]*narrator.Clip

func (m clipMap) Clip(ctx context.Context, projectID int64, kind narrator.ClipKind) (*narrator.Clip, error) {
	if c, ok := m[kind]; ok {
		return c, nil
	}
	return nil, narrator.Errorf(narrator.ENOTFOUND, "no %s", kind)
}

// chirp returns a sweep from f0 to f1 Hz: unlike a tone or speech, it
// matches itself at one offset only.
func chirp(f0, f1 float64, d time.Duration, rate int) []int16 {
	n := int(d.Seconds() * float64(rate))
	out := make([]int16, n)
	for i := range out {
		x := float64(i) / float64(rate)
		phase := 2 * math.Pi * (f0*x + (f1-f0)*x*x/(2*d.Seconds()))
		out[i] = int16(9000 * math.Sin(phase))
	}
	return out
}

// mp3Of encodes samples with lame.
func mp3Of(t *testing.T, samples []int16, rate int) []byte {
	t.Helper()
	var out bytes.Buffer
	enc, err := mp3.NewEncoder(t.Context(), &out, mp3.Options{SampleRate: rate, Bitrate: 128})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(samples); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// correlation returns the normalised correlation of a and b over their
// common length: 1 when they are the same up to a gain.
func correlation(a, b []int16) float64 {
	n := min(len(a), len(b))
	var ab, aa, bb float64
	for i := range n {
		x, y := float64(a[i]), float64(b[i])
		ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// bestMatch returns the offset in [from, to) at which clip correlates
// best with audio, and the correlation there.
func bestMatch(audio, clip []int16, from, to int) (int, float64) {
	at, best := -1, math.Inf(-1)
	for off := max(from, 0); off < to && off+len(clip) <= len(audio); off++ {
		if c := correlation(audio[off:off+len(clip)], clip); c > best {
			at, best = off, c
		}
	}
	return at, best
}

// TestRenderIntroOutro renders an article with an intro (sent as WAV at
// 44.1 kHz) and an outro (sent as MP3) and checks the decoded MP3: the
// intro plays from the first sample, the outro ends the audio, and every
// sentence, and its words, start where the transcript says, within 25 ms,
// shifted past the intro. The HLS and live streams begin with the intro
// too, and an edit re-renders with the clips unchanged.
func TestRenderIntroOutro(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "lame", "scripts/deps.sh test")
	root := t.TempDir()
	media, err := localfs.New(filepath.Join(root, "media"))
	if err != nil {
		t.Fatal(err)
	}
	eng := &wordEngine{}
	engines := map[string]pipeline.Synthesizer{}
	for _, v := range narrator.Voices() {
		engines[v.Engine] = eng
	}
	newPipe := func(clips pipeline.ClipSource, cache *pipeline.UnitCache) *pipeline.Pipeline {
		p := pipeline.New(pipeline.Config{Engines: engines, Media: media, Clips: clips, Cache: cache, ScratchDir: t.TempDir(), Workers: 2})
		t.Cleanup(func() { p.Close() })
		return p
	}
	plain := newPipe(nil, nil)
	intro, err := pipeline.ClipDecoder{}.DecodeClip(t.Context(), narrator.ClipIntro, pipeline.ClipWAV, pcmtest.WAV(chirp(300, 3000, 1500*time.Millisecond, 44100), 44100))
	if err != nil {
		t.Fatal(err)
	}
	outro, err := pipeline.ClipDecoder{}.DecodeClip(t.Context(), narrator.ClipOutro, pipeline.ClipMP3, mp3Of(t, chirp(2500, 400, time.Second, 44100), 44100))
	if err != nil {
		t.Fatal(err)
	}
	if intro.SampleRate != pipeline.SampleRate || intro.Duration() != 1500*time.Millisecond || outro.Duration() < 990*time.Millisecond {
		t.Fatalf("decoded intro %s at %d Hz, outro %s", intro.Duration(), intro.SampleRate, outro.Duration())
	}
	cache, err := pipeline.OpenUnitCache(filepath.Join(root, "cache"), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	framed := newPipe(clipMap{narrator.ClipIntro: intro, narrator.ClipOutro: outro}, cache)
	title, bodyVoice, _ := narrator.DefaultVoices("en_US")
	proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: bodyVoice.Name}
	article := &narrator.Audio{Title: "Branded news", Body: body}

	bare, err := plain.Render(t.Context(), article, proj)
	if err != nil {
		t.Fatal(err)
	}
	r, err := framed.Render(t.Context(), article, proj)
	if err != nil {
		t.Fatal(err)
	}
	mp3Key := r.Keys[narrator.ContentTypeMP3]
	decoded := decodeMP3(t, media, mp3Key)

	// The intro plays from the first sample, as the encoder delays it.
	if c := correlation(decoded[mp3.Delay:], intro.Samples); c < 0.95 {
		t.Errorf("the MP3's first %s correlate %.3f with the intro, want the intro", intro.Duration(), c)
	}
	// The outro ends the audio: what follows it is the encoder's padding.
	tail := len(decoded) - len(outro.Samples)
	at, c := bestMatch(decoded, outro.Samples, tail-3*mp3.FrameSamples, tail+1)
	if c < 0.95 {
		t.Errorf("the MP3's end correlates at most %.3f with the outro, want the outro", c)
	}

	tr := readTranscript(t, media, mp3Key)
	plainTr := readTranscript(t, media, bare.Keys[narrator.ContentTypeMP3])
	if len(tr.Sentences) != len(plainTr.Sentences) {
		t.Fatalf("%d sentences with clips, %d without", len(tr.Sentences), len(plainTr.Sentences))
	}
	// The article starts after the intro and its pause, on the next MP3
	// frame, and ends before the outro.
	lead := (intro.Duration() + pipeline.ClipPause).Seconds()
	if first := tr.Sentences[0].Start; first < lead || first > lead+float64(mp3.FrameSamples+mp3.Delay)/pipeline.SampleRate+0.01 {
		t.Errorf("the first sentence starts at %.3f s; the intro and its pause last %.3f s", first, lead)
	}
	if last := tr.Sentences[len(tr.Sentences)-1].End; last > float64(at)/pipeline.SampleRate {
		t.Errorf("the last sentence ends at %.3f s, after the outro starts at %.3f s", last, float64(at)/pipeline.SampleRate)
	}
	checkSync(t, tr, onsets(decoded, 100*time.Millisecond, -40), 0.025)
	for i, s := range tr.Sentences {
		p := plainTr.Sentences[i]
		if len(s.Words) == 0 || len(s.Words) != len(p.Words) {
			t.Fatalf("sentence %d has %d words with clips, %d without", i, len(s.Words), len(p.Words))
		}
		if d := s.Words[0].Start - s.Start; math.Abs(d) > 0.025 {
			t.Errorf("sentence %d starts at %.3f, its first word at %.3f", i, s.Start, s.Words[0].Start)
		}
		// Each word moves with its sentence.
		for j, w := range s.Words {
			if d := (w.Start - s.Start) - (p.Words[j].Start - p.Start); math.Abs(d) > 0.002 {
				t.Errorf("word %d.%d %q lies %.3f s into its sentence, %.3f s without clips", i, j, w.Text, w.Start-s.Start, p.Words[j].Start-p.Start)
			}
		}
	}
	// Give or take the frames that chunks are rounded to.
	if extra, want := r.Duration-bare.Duration, intro.Duration()+pipeline.ClipPause+outro.Duration(); (extra - want).Abs() > 100*time.Millisecond {
		t.Errorf("the clips add %s to the audio, want the intro, its pause and the outro: %s", extra, want)
	}

	// The HLS stream and the live stream start with the intro.
	proctest.NeedProgram(t, "ffmpeg", "scripts/deps.sh test")
	for _, name := range []string{pipeline.PlaylistName, narrator.LivePlaylistName} {
		playlist := filepath.Join(media.Root(), filepath.FromSlash(path.Dir(mp3Key)), name)
		raw, err := exec.CommandContext(t.Context(), "ffmpeg", "-v", "error", "-i", playlist, "-f", "s16le", "-ac", "1", "-").Output()
		if err != nil {
			t.Fatalf("ffmpeg %s: %v", name, err)
		}
		pcm := make([]int16, len(raw)/2)
		for i := range pcm {
			pcm[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		if at, c := bestMatch(pcm, intro.Samples, 0, 2*mp3.Delay); c < 0.95 {
			t.Errorf("%s: its start correlates at most %.3f with the intro (at %d)", name, c, at)
		}
	}

	// An edit re-renders with the same clips, from the cache, to what a
	// rendering from scratch makes.
	edited := &narrator.Audio{Title: article.Title, Body: strings.Replace(body, "second one", "second one, now longer", 1)}
	again, err := framed.Render(t.Context(), edited, proj)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := newPipe(clipMap{narrator.ClipIntro: intro, narrator.ClipOutro: outro}, nil).Render(t.Context(), edited, proj)
	if err != nil {
		t.Fatal(err)
	}
	read := func(key string) []byte {
		data, err := os.ReadFile(filepath.Join(media.Root(), filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if !bytes.Equal(read(again.Keys[narrator.ContentTypeMP3]), read(fresh.Keys[narrator.ContentTypeMP3])) {
		t.Error("the edited MP3 differs from a rendering from scratch")
	}
}

// TestDecodeClip checks that an upload is refused, as EINVALID, when it
// is not audio, too long, too short, or of another content type.
func TestDecodeClip(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "lame", "scripts/deps.sh test")
	long := chirp(200, 400, narrator.MaxClipDuration+time.Second, 22050)
	cases := []struct {
		name, contentType string
		data              []byte
		ok                bool
	}{
		{"wav", pipeline.ClipWAV, pcmtest.WAV(chirp(200, 400, time.Second, 16000), 16000), true},
		{"mp3", pipeline.ClipMP3, mp3Of(t, chirp(200, 400, time.Second, 32000), 32000), true},
		{"wav too long", pipeline.ClipWAV, pcmtest.WAV(long, 22050), false},
		{"mp3 too long", pipeline.ClipMP3, mp3Of(t, long, 22050), false},
		{"wav too short", pipeline.ClipWAV, pcmtest.WAV(make([]int16, 100), 16000), false},
		{"text as mp3", pipeline.ClipMP3, []byte("not audio at all"), false},
		{"text as wav", pipeline.ClipWAV, []byte("RIFF....WAVEjunk"), false},
		{"mp3 as wav", pipeline.ClipWAV, mp3Of(t, chirp(200, 400, time.Second, 32000), 32000), false},
		{"ogg", "audio/ogg", []byte("OggS"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clip, err := pipeline.ClipDecoder{}.DecodeClip(t.Context(), narrator.ClipIntro, c.contentType, c.data)
			switch {
			case c.ok && err != nil:
				t.Fatalf("DecodeClip: %v", err)
			// An MP3 without a LAME tag keeps lame's padding, up to a frame.
			case c.ok && (clip.SampleRate != pipeline.SampleRate || clip.Duration() < time.Second || clip.Duration() > time.Second+50*time.Millisecond):
				t.Errorf("decoded %s at %d Hz, want 1 s at %d", clip.Duration(), clip.SampleRate, pipeline.SampleRate)
			case !c.ok && narrator.ErrorCode(err) != narrator.EINVALID:
				t.Errorf("DecodeClip = %v, want EINVALID", err)
			}
		})
	}
}

// TestSpeakClip checks that a spoken clip is the speech of its text with
// the project's rules at the speed asked for, keeps its text and voice,
// and is refused when its text is blank or it speaks for too long (the
// synthesis stopping there).
func TestSpeakClip(t *testing.T) {
	t.Parallel()
	kevin, _ := narrator.LookupVoice("en_US", "Kevin")
	eng := &gateEngine{gate: make(chan struct{})}
	close(eng.gate)
	p := newPipe(t, pipeline.Config{Engines: map[string]pipeline.Synthesizer{narrator.EngineFlite: eng},
		Rules: ruleList{{Phrase: "nginx", Say: "engine x"}}, Workers: 1})
	const text = "Welcome to the nginx podcast."
	clip, err := p.SpeakClip(t.Context(), narrator.ClipIntro, narrator.Speech{ProjectID: 7, Voice: kevin, Text: text, Speed: 1.25})
	if err != nil {
		t.Fatal(err)
	}
	if clip.ProjectID != 7 || clip.Kind != narrator.ClipIntro || clip.Text != text || clip.Voice != "en_US/Kevin" || clip.SampleRate != pipeline.SampleRate {
		t.Errorf("clip = %d %s %q %q at %d Hz", clip.ProjectID, clip.Kind, clip.Text, clip.Voice, clip.SampleRate)
	}
	// The tone engine speaks about 15 characters a second.
	if calls := eng.calls(); len(calls) != 1 || !strings.Contains(calls[0], "engine x") {
		t.Errorf("engine got %q, want the text with the rule applied", calls)
	} else if d, want := clip.Duration().Seconds(), float64(len(calls[0]))/15; d < want || d > want+1.5 {
		t.Errorf("clip of %.2f s, want %.2f s of speech and a pause", d, want)
	}
	if len(eng.rates) != 1 || eng.rates[0] != 1.25 {
		t.Errorf("rates %v, want 1.25", eng.rates)
	}

	_, err = p.SpeakClip(t.Context(), narrator.ClipOutro, narrator.Speech{Voice: kevin, Text: " "})
	if narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), "empty") {
		t.Errorf("blank text: %v, want EINVALID", err)
	}
	// 17 sentences of nearly 4 s each, spoken one at a time: the clip is
	// refused once it passes 30 s, without speaking the rest.
	long := strings.Repeat("This sentence takes the tone engine some four seconds. ", 17)
	before := len(eng.calls())
	_, err = p.SpeakClip(t.Context(), narrator.ClipOutro, narrator.Speech{Voice: kevin, Text: long})
	if narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), "longer than 30 s") {
		t.Errorf("long text: %v, want EINVALID", err)
	}
	if n := len(eng.calls()) - before; n >= 17 {
		t.Errorf("%d of 17 sentences spoken, want the synthesis stopped once too long", n)
	}
}
