//go:build e2e

package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/narrator/narrator/client"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/proctest"
)

// wordsTolerance is how far a word's start may lie from where its phonemes start in the MP3.
const wordsTolerance = 0.025

// timedPiper writes a tiny Piper voice NAME (such as en_US-tone-medium) into a new directory:
// a model made by onnxtest.PiperTimed with ceils Ceil nodes, whose every phoneme ID sounds
// for exactly onnxtest.Frames × 256 samples, and its config, at length scale ls. It returns
// the model's path and the config.
func timedPiper(t *testing.T, name string, ceils int, ls float64) (string, *phonemize.PiperConfig) {
	t.Helper()
	model, raw := writePiper(t, name, onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: ceils}), func(cfg map[string]any) {
		cfg["inference"].(map[string]any)["length_scale"] = ls
	})
	c, err := phonemize.ParsePiperConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	return model, c
}

// TestNeuralWordTimings installs tone voices with Piper's signature through the CLI and
// narrates prose with a title: the transcript's words and the WebVTT cue timestamps give
// every word, in order, each starting within 25 ms of where its phonemes start in the
// decoded MP3 (the start of its sentence's sound, plus the frames × 256 samples of the IDs
// before it), for the title and the body, after an edit of one sentence, and at a length
// scale of 0.8 (a rate of 1.25). A model without a Ceil node keeps sentence timings and
// says so; installed again with one, the same text is timed, not served from the cache.
func TestNeuralWordTimings(t *testing.T) {
	t.Parallel()
	lib, phon := toneParts(t)
	data, acct, _ := fixture(t)

	tone, toneCfg := timedPiper(t, "en_US-tone-medium", 1, 1)
	quick, quickCfg := timedPiper(t, "en_US-quick-medium", 1, 0.8)
	plain, plainCfg := timedPiper(t, "en_US-plain-medium", 0, 1)
	for _, m := range []string{tone, quick} {
		if out, errOut, err := runCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", m); err != nil || errOut != "" || !strings.Contains(out, "yes") {
			t.Fatalf("install %s: %v\n%s%s", m, err, out, errOut)
		}
	}
	if out, errOut, err := runCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", plain); err != nil || !strings.Contains(errOut, "keeps sentence timings") || !strings.Contains(out, "sentence only") {
		t.Fatalf("install %s without a Ceil node: %v\n%s%s; want a note that it keeps sentence timings", plain, err, out, errOut)
	}
	list := mustCLI(t, "voices", "list", "--data", data, "--language", "en_US")
	for name, want := range map[string]string{"Tone": "yes", "Quick": "yes", "Plain": "sentence only"} {
		if !regexp.MustCompile(`(?m)^en_US +` + name + ` .* ` + want + ` `).MatchString(list) {
			t.Errorf("voices list says of %s\n%s\nwant word timings %q", name, list, want)
		}
	}
	project := func(voice string) int64 {
		p := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", voice, "--language", "en_US", "--title-voice", voice, "--body-voice", voice))
		return p.ID
	}
	toneProj, quickProj, plainProj := project("Tone"), project("Quick"), project("Plain")

	s := startServer(t, data, freeAddr(t), "--onnxruntime", lib)
	c := s.client(t, acct.APIKey)
	check := func(label string, proj int64, ref string, cfg *phonemize.PiperConfig) {
		t.Helper()
		tr, mp3, vtt := rendering(t, c, proj, ref)
		checkWords(t, label, piperTones(phon, cfg), tr, mp3, vtt)
	}

	narrateHarbour(t, c, toneProj, "tone")
	check("tone", toneProj, "tone", toneCfg)
	editHarbour(t, c, toneProj, "tone")
	tr, _, _ := rendering(t, c, toneProj, "tone")
	if n := len(tr.Sentences); n != 4 || tr.Sentences[3].Text != harbourEdit {
		t.Fatalf("after the edit, the transcript has %+v", tr.Sentences)
	}
	check("tone, edited", toneProj, "tone", toneCfg)

	narrateHarbour(t, c, quickProj, "quick")
	check("length scale 0.8", quickProj, "quick", quickCfg)

	// Without a Ceil node: sentences only, in the JSON and the WebVTT.
	narrateHarbour(t, c, plainProj, "plain")
	tr, _, vtt := rendering(t, c, plainProj, "plain")
	if len(tr.Sentences) != 4 {
		t.Errorf("plain: %d sentences, want 4", len(tr.Sentences))
	}
	for _, sen := range tr.Sentences {
		if len(sen.Words) != 0 {
			t.Errorf("plain: sentence %q has words %+v; a model without a Ceil node times sentences only", sen.Text, sen.Words)
		}
	}
	if strings.Contains(vtt, "<") {
		t.Errorf("plain: the WebVTT has word timestamps:\n%s", vtt)
	}
	// Installed again with a Ceil node, under the same ID: the same units are spoken again
	// and timed, not taken from the cache without their words.
	if out := mustCLI(t, "voices", "remove", "--data", data, "piper-en_us-plain-medium"); !strings.Contains(out, "removed") {
		t.Fatalf("remove: %s", out)
	}
	if err := os.WriteFile(plain, onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: 1}), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", plain)
	narrateHarbour(t, c, plainProj, "plain-timed")
	check("plain, installed again with a Ceil node", plainProj, "plain-timed", plainCfg)
}

// TestNeuralKokoroWordTimings installs a Kokoro-signature tone model with a durations output
// (onnxtest.KokoroTimed: each token sounds for exactly its frames × 600 samples) through the
// CLI, as a timestamped export, and narrates prose with a title: every word is in the
// transcript and the WebVTT, in order, each starting within 25 ms of where its phonemes start
// in the decoded MP3, for the title and the body. A Kokoro model without durations installs
// with a note and its voice says "sentence only".
func TestNeuralKokoroWordTimings(t *testing.T) {
	t.Parallel()
	lib, phon := toneParts(t)
	data, acct, _ := fixture(t)
	dir := t.TempDir()
	install := func(model []byte, voice string) (string, string) {
		t.Helper()
		m, styles := filepath.Join(dir, voice+".onnx"), filepath.Join(dir, voice+".bin")
		if err := os.WriteFile(m, model, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(styles, make([]byte, 510*256*4), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := runCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, m, styles)
		if err != nil {
			t.Fatalf("install %s: %v\n%s", voice, err, errOut)
		}
		return out, errOut
	}
	if out, errOut := install(onnxtest.KokoroTimed(onnxtest.KokoroTimedOptions{InputIDs: true}), "af_heart"); errOut != "" || !strings.Contains(out, "yes") || !strings.Contains(out, "af_heart.timed.onnx") {
		t.Fatalf("install a timestamped export:\n%s%s", out, errOut)
	}
	if out, errOut := install(onnxtest.Kokoro(onnxtest.KokoroOptions{Repeat: 100}), "am_adam"); !strings.Contains(errOut, "keep sentence timings") || !strings.Contains(out, "sentence only") {
		t.Fatalf("install an export without durations:\n%s%s; want a note that it keeps sentence timings", out, errOut)
	}
	list := mustCLI(t, "voices", "list", "--data", data, "--language", "en_US")
	for name, want := range map[string]string{"Heart": "yes", "Adam": "sentence only"} {
		if !regexp.MustCompile(`(?m)^en_US +` + name + ` .* ` + want + ` `).MatchString(list) {
			t.Errorf("voices list says of %s\n%s\nwant word timings %q", name, list, want)
		}
	}
	p := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Heart", "--language", "en_US", "--title-voice", "Heart", "--body-voice", "Heart"))
	s := startServer(t, data, freeAddr(t), "--onnxruntime", lib)
	c := s.client(t, acct.APIKey)
	narrateHarbour(t, c, p.ID, "heart")
	tr, mp3, vtt := rendering(t, c, p.ID, "heart")
	if len(tr.Sentences) != 4 {
		t.Errorf("%d sentences, want 4: %+v", len(tr.Sentences), tr.Sentences)
	}
	checkWords(t, "kokoro", kokoroTones(phon), tr, mp3, vtt)
}

// The tone-voice tests narrate the harbour article: a title and four sentences, the last
// of which harbourEdit replaces.
const (
	harbourTitle = "Harbour morning"
	harbourBody  = `<p>Bright kites drifted above the quiet harbour. Fishermen mended their nets before dawn.</p>
<p>Children laughed while gulls circled overhead.</p>`
	harbourLast = "Children laughed while gulls circled overhead."
	harbourEdit = "Old sailors told stories about distant islands."
)

// narrateHarbour narrates the harbour article as ref in a project and waits until it is
// processed.
func narrateHarbour(t *testing.T, c *client.Client, proj int64, ref string) {
	t.Helper()
	if _, err := c.CreateAudio(t.Context(), proj, client.NewAudio{Title: harbourTitle, Body: harbourBody, ExternalID: ref}); err != nil {
		t.Fatal(err)
	}
	waitProcessed(t, c, proj, ref, 2*time.Minute)
}

// editHarbour replaces the last sentence of the harbour article ref with harbourEdit and
// waits until the audio is processed again.
func editHarbour(t *testing.T, c *client.Client, proj int64, ref string) {
	t.Helper()
	edited := strings.Replace(harbourBody, harbourLast, harbourEdit, 1)
	if u, err := c.UpdateAudio(t.Context(), proj, ref, client.AudioUpdate{Body: &edited}); err != nil || u.State != client.StateUnprocessed {
		t.Fatalf("update: %+v, %v", u, err)
	}
	waitProcessed(t, c, proj, ref, 2*time.Minute)
}

// rendering returns a processed audio's transcript, MP3 and WebVTT.
func rendering(t *testing.T, c *client.Client, proj int64, ref string) (*client.Transcript, []byte, string) {
	t.Helper()
	a, err := c.GetAudio(t.Context(), proj, ref)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Transcript(t.Context(), proj, ref)
	if err != nil {
		t.Fatal(err)
	}
	res, mp3 := fetch(t, a.MediaURL(client.ContentTypeMP3))
	if res.StatusCode != 200 {
		t.Fatalf("%s: mp3 %d", ref, res.StatusCode)
	}
	res, vtt := fetch(t, tr.VTTURL)
	if res.StatusCode != 200 {
		t.Fatalf("%s: vtt %d", ref, res.StatusCode)
	}
	return tr, mp3, string(vtt)
}

// phonemeSpan is where a run of phonemes between spaces starts and ends, in seconds.
type phonemeSpan struct{ start, end float64 }

// toneParts gives what the tone-voice tests need: onnxruntime's library and
// the phonemizer the server uses, closed when t ends.
func toneParts(t *testing.T) (lib string, phon *phonemize.Phonemizer) {
	t.Helper()
	lib = onnxtest.Library(t)
	if helperErr != nil {
		proctest.Missing(t, helperErr.Error(), "apt-get install gcc libespeak-ng-dev")
	}
	phon, err := phonemize.New(phonemize.Options{Command: filepath.Join(filepath.Dir(binary), phonemize.DefaultCommand)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { phon.Close() })
	return lib, phon
}

// toneVoice is how a tone voice made by onnxtest speaks: the runs of IDs or tokens a
// sentence becomes, each run sounding without a pause; how many samples each ID lasts, at
// rate; and the IDs that are no word's phonemes.
type toneVoice struct {
	runs              func(t *testing.T, sentence string) [][]int64
	samples           func(id int64) int
	rate              int
	pad, space, punct map[int64]bool
}

// piperTones is a Piper tone voice (onnxtest.PiperTimed) of config cfg: a run per sentence
// of a unit's text, each ID lasting Frames × hop samples.
func piperTones(phon *phonemize.Phonemizer, cfg *phonemize.PiperConfig) toneVoice {
	v := toneVoice{rate: cfg.SampleRate}
	v.pad, v.space, v.punct = cfg.Symbols()
	v.runs = func(t *testing.T, sentence string) [][]int64 {
		runs, err := phon.Piper(t.Context(), cfg, sentence)
		if err != nil {
			t.Fatal(err)
		}
		return runs
	}
	v.samples = func(id int64) int { return int(onnxtest.Frames(id, cfg.LengthScale)) * cfg.HopLength }
	return v
}

// kokoroTones is a Kokoro tone voice (onnxtest.KokoroTimed, at speed 1) of an en-us voice:
// one run per sentence, which must be one chunk, each token lasting KokoroFrames × 600
// samples.
func kokoroTones(phon *phonemize.Phonemizer) toneVoice {
	v := toneVoice{rate: phonemize.KokoroSampleRate}
	v.pad, v.space, v.punct = phonemize.KokoroSymbols(nil)
	v.runs = func(t *testing.T, sentence string) [][]int64 {
		phonemes, err := phon.Kokoro(t.Context(), "en-us", sentence, nil)
		if err != nil {
			t.Fatal(err)
		}
		chunks := phonemize.KokoroTokens(phonemes, nil)
		if len(chunks) != 1 {
			t.Fatalf("%q is %d chunks, want one", sentence, len(chunks))
		}
		return chunks
	}
	v.samples = func(id int64) int { return int(onnxtest.KokoroFrames(id, 1)) * worker.KokoroFrameSamples }
	return v
}

// checkWords checks a rendering's word timings against its MP3: each sentence's text,
// phonemised as the voice does, gives its runs of IDs, each ID sounding for v.samples from
// where its run's sound starts in the MP3. Every word of the text is in the transcript, in
// order; the first word of each run of phonemes between spaces starts within wordsTolerance
// of the run, and a word espeak-ng spoke in the same run as the one before lies within that
// run. Each word's WebVTT cue timestamp is its transcript start.
func checkWords(t *testing.T, label string, v toneVoice, tr *client.Transcript, raw []byte, vtt string) {
	t.Helper()
	onsets := soundOnsets(t, raw)
	sec := func(samples int) float64 { return float64(samples) / float64(v.rate) }
	vttWords := cueTimestamps(t, vtt)
	if len(vttWords) != len(tr.Sentences) {
		t.Fatalf("%s: %d cues for %d sentences", label, len(vttWords), len(tr.Sentences))
	}
	run := 0
	for i, sen := range tr.Sentences {
		var spans []phonemeSpan
		for _, ids := range v.runs(t, sen.Text) {
			if run >= len(onsets) {
				t.Fatalf("%s: the MP3 has %d runs of sound, fewer than the sentences' %d", label, len(onsets), run+1)
			}
			at, inWord := 0, false
			for _, id := range ids {
				n := v.samples(id)
				switch {
				case v.space[id]:
					inWord = false
				case v.pad[id] || v.punct[id]:
				case !inWord:
					inWord = true
					spans = append(spans, phonemeSpan{onsets[run] + sec(at), onsets[run] + sec(at+n)})
				default:
					spans[len(spans)-1].end = onsets[run] + sec(at+n)
				}
				at += n
			}
			run++
		}
		var got []string
		for _, w := range sen.Words {
			got = append(got, w.Text)
		}
		if want := writtenTokens(sen.Text); !slices.Equal(got, want) {
			t.Errorf("%s: sentence %q has words %q, want %q", label, sen.Text, got, want)
			continue
		}
		k := 0
		for _, w := range sen.Words {
			switch {
			case k < len(spans) && math.Abs(w.Start-spans[k].start) <= wordsTolerance:
				k++
			case k > 0 && w.Start > spans[k-1].start-wordsTolerance && w.Start < spans[k-1].end+wordsTolerance:
				// spoken with the word before, in one run of phonemes
			default:
				t.Errorf("%s: %q starts at %.3f s; its phonemes start at %v", label, w.Text, w.Start, spans)
			}
		}
		if k != len(spans) {
			t.Errorf("%s: sentence %q: %d of %d runs of phonemes start a word (words %+v, runs %v)", label, sen.Text, k, len(spans), sen.Words, spans)
		}
		if cue := vttWords[i]; len(cue) != len(sen.Words) {
			t.Errorf("%s: cue %d has %d word timestamps %v, want one for each of %d words", label, i+1, len(cue), cue, len(sen.Words))
		} else {
			for j, w := range sen.Words {
				if math.Abs(cue[j]-w.Start) > 0.0015 {
					t.Errorf("%s: cue %d times %q at %.3f s, the transcript at %.3f s", label, i+1, w.Text, cue[j], w.Start)
				}
			}
		}
	}
	if run != len(onsets) {
		t.Errorf("%s: the MP3 has %d runs of sound, the sentences %d", label, len(onsets), run)
	}
}

// writtenTokens returns a sentence's words as written: its tokens without the punctuation
// around them.
func writtenTokens(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if f = strings.TrimFunc(f, unicode.IsPunct); f != "" {
			out = append(out, f)
		}
	}
	return out
}

var reCueTimestamp = regexp.MustCompile(`<(\d{2}):(\d{2}):(\d{2})\.(\d{3})>`)

// cueTimestamps returns the word timestamps of each cue of a WebVTT document.
func cueTimestamps(t *testing.T, vtt string) [][]float64 {
	t.Helper()
	blocks := strings.Split(strings.TrimRight(vtt, "\n"), "\n\n")
	if blocks[0] != "WEBVTT" {
		t.Fatalf("WebVTT header %q", blocks[0])
	}
	var out [][]float64
	for _, b := range blocks[1:] {
		lines := strings.Split(b, "\n")
		if len(lines) != 3 {
			t.Fatalf("malformed cue %q", b)
		}
		var ts []float64
		for _, m := range reCueTimestamp.FindAllStringSubmatch(lines[2], -1) {
			var parts [4]float64
			for i := range parts {
				parts[i], _ = strconv.ParseFloat(m[i+1], 64)
			}
			ts = append(ts, parts[0]*3600+parts[1]*60+parts[2]+parts[3]/1000)
		}
		out = append(out, ts)
	}
	return out
}

// soundOnsets decodes an MP3 and returns where each run of sound starts, in seconds: the
// first sample above -34 dBFS after at least 40 ms below it (the tone voices are never
// silent while they speak; the pipeline's pauses are).
func soundOnsets(t *testing.T, raw []byte) []float64 {
	t.Helper()
	pcm, sampleRate := decodePCM(t, raw)
	rate := float64(sampleRate)
	const level = 0.02
	gap := int(0.04 * rate)
	var onsets []float64
	quiet := gap                         // samples since the last sound
	for i := 0; i+1 < len(pcm); i += 4 { // 16-bit stereo: the left channel
		v := math.Abs(float64(int16(uint16(pcm[i])|uint16(pcm[i+1])<<8))) / 32768
		if v < level {
			quiet++
			continue
		}
		if quiet >= gap {
			onsets = append(onsets, float64(i/4)/rate)
		}
		quiet = 0
	}
	return onsets
}
