package neural_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/phonemize"
)

// kokoroRun is one run of a model made by onnxtest.KokoroTimed, read back from the engine's
// samples: its tokens, the sample where each starts, the style row and speed it got.
type kokoroRun struct {
	tokens []int64
	starts []int
	row    int
	speed  float64
}

// decodeKokoroTimed reads the runs of a model made by onnxtest.KokoroTimed from 16-bit PCM:
// each token lasts onnxtest.KokoroFrames(token, speed) frames of 600 samples, at amplitude
// 0.25 + token/1024; a run is a 0, its tokens and a 0, then onnxtest.KokoroTail samples of
// style and speed. voice is the style table's index in kokoroStyles, whose row r holds
// r/8 + voice.
func decodeKokoroTimed(t *testing.T, samples []int16, speed float32, voice int) []kokoroRun {
	t.Helper()
	var runs []kokoroRun
	at := 0
	for at < len(samples) {
		var run kokoroRun
		for {
			if at >= len(samples) {
				t.Fatalf("run %d: samples end inside it, at %d", len(runs), at)
			}
			amp := math.Abs(float64(samples[at])) / math.MaxInt16
			tok := int64(math.Round((amp - 0.25) * 1024))
			n := int(onnxtest.KokoroFrames(tok, speed)) * worker.KokoroFrameSamples
			if at+n > len(samples) {
				t.Fatalf("run %d: token %d at %d lasts past the end", len(runs), tok, at)
			}
			for k := at; k < at+n; k++ {
				if samples[k] != samples[at] && samples[k] != -samples[at] {
					t.Fatalf("run %d: token %d from sample %d: sample %d is %d, not ±%d", len(runs), tok, at, k, samples[k], samples[at])
				}
			}
			run.tokens, run.starts = append(run.tokens, tok), append(run.starts, at)
			at += n
			if tok == 0 && len(run.tokens) > 1 {
				break
			}
		}
		if at+onnxtest.KokoroTail > len(samples) {
			t.Fatalf("run %d: no tail after sample %d", len(runs), at)
		}
		tail := samples[at : at+onnxtest.KokoroTail]
		value := func(s int16) float64 { return float64(s) / math.MaxInt16 / onnxtest.DefaultScale }
		run.row = int(math.Round((value(tail[0]) - float64(voice)) * 8))
		for k, s := range tail[:worker.StyleSize] {
			if s != tail[0] {
				t.Fatalf("run %d: style value %d is %d, value 0 is %d", len(runs), k, s, tail[0])
			}
		}
		run.speed = value(tail[worker.StyleSize])
		at += onnxtest.KokoroTail
		runs = append(runs, run)
	}
	return runs
}

// phonemeWordStarts returns where each run of word phonemes starts, in seconds: the first
// token after a pad or a space that is neither, nor punctuation.
func phonemeWordStarts(runs []kokoroRun) []float64 {
	pad, space, punct := phonemize.KokoroSymbols(nil)
	var starts []float64
	for _, r := range runs {
		inWord := false
		for k, tok := range r.tokens {
			switch {
			case space[tok] || pad[tok]:
				inWord = false
			case punct[tok]:
			case !inWord:
				inWord = true
				starts = append(starts, float64(r.starts[k])/phonemize.KokoroSampleRate)
			}
		}
	}
	return starts
}

// checkKokoroWords checks that words are the words of text, in order, monotone and within
// length seconds, and that each phoneme word's start (starts, from the decoded audio) is
// exactly the start of one word, the words between lying within theirs: espeak-ng joins
// some short words into one phoneme word.
func checkKokoroWords(t *testing.T, text string, words []narrator.TranscriptWord, starts []float64, length float64) {
	t.Helper()
	var got []string
	for _, w := range words {
		got = append(got, w.Text)
	}
	if want := narrator.WordTokens(text); !slices.Equal(got, want) {
		t.Fatalf("words %q, want %q", got, want)
	}
	prev := 0.0
	for _, w := range words {
		if w.Start < prev || w.End <= w.Start || w.End > length {
			t.Errorf("word %q spans %.4f-%.4f after %.4f, in %.4f s", w.Text, w.Start, w.End, prev, length)
		}
		prev = w.Start
	}
	k := 0
	for _, w := range words {
		if k < len(starts) && math.Abs(w.Start-starts[k]) < 1e-9 {
			k++
			continue
		}
		if k == 0 || w.Start < starts[k-1] || (k < len(starts) && w.Start >= starts[k]) {
			t.Errorf("%q starts at %.4f s, outside its phoneme word (starts %v)", w.Text, w.Start, starts)
		}
	}
	if k != len(starts) {
		t.Errorf("%d of %d phoneme words start a word: %+v, starts %v", k, len(starts), words, starts)
	}
}

// installKokoro installs am_adam, the second voice of a voices file, over model.
func installKokoro(t *testing.T, r *rig, model []byte) {
	t.Helper()
	styles := r.put(t, narrator.VoiceFileStyles, "voices-v1.0.bin", kokoroStyles(t, "af_heart", "am_adam"))
	r.install(&narrator.InstalledVoice{
		Voice:   narrator.Voice{Name: "Adam", Gender: narrator.GenderMale, Language: "en_US", Engine: narrator.EngineKokoro, EngineVoice: "kokoro-am_adam"},
		Speaker: "am_adam",
		Files:   []narrator.VoiceFile{r.put(t, narrator.VoiceFileModel, "kokoro.onnx", model), styles},
	})
}

// TestKokoroWords speaks through timestamped Kokoro models (durations float32 or int64, under
// each export's name) and checks each word against the audio: a phoneme word starts where the
// tokens before it end, their frames times 600 samples. A model without durations gives no
// words: its voice keeps sentence timings.
func TestKokoroWords(t *testing.T) {
	t.Parallel()
	const text = "Hello there, my old friend. In the morning it was a fine test of it!"
	const rate = 1.25
	for _, o := range []onnxtest.KokoroTimedOptions{
		{},
		{InputIDs: true, Durations: "duration", Int64: true},
	} {
		r := newRig(t, neural.Options{})
		installKokoro(t, r, onnxtest.KokoroTimed(o))
		samples, sr, words, err := r.engine.SynthesizeWords(t.Context(), "kokoro-am_adam", text, rate)
		if err != nil {
			t.Fatalf("%+v: SynthesizeWords: %v", o, err)
		}
		if sr != phonemize.KokoroSampleRate {
			t.Errorf("%+v: sample rate %d", o, sr)
		}
		runs := decodeKokoroTimed(t, samples, rate, 1)
		if len(runs) != 1 {
			t.Fatalf("%+v: %d runs, want 1", o, len(runs))
		}
		checkKokoroWords(t, text, words, phonemeWordStarts(runs), float64(len(samples))/float64(sr))
	}

	r := newRig(t, neural.Options{})
	installKokoro(t, r, onnxtest.Kokoro(onnxtest.KokoroOptions{}))
	_, _, words, err := r.engine.SynthesizeWords(t.Context(), "kokoro-am_adam", text, rate)
	if err != nil || words != nil {
		t.Errorf("model without durations: words %+v, %v; want none", words, err)
	}
}

// TestKokoroChunks pushes a text of more than 510 tokens through the engine and a timestamped
// model, and reads back from the audio that it went as chunks of at most 510 tokens, each as
// the phonemiser cuts it, with the style row of its own token count and the speed; and that
// the words of every chunk are timed where they sound, those of a later chunk after the
// samples of the earlier ones (whose waveforms are longer than their frames).
func TestKokoroChunks(t *testing.T) {
	t.Parallel()
	const rate = 0.8
	text := strings.Repeat("The old lighthouse keeper walked along the shore every morning, counting the boats that came back from the sea. ", 3) +
		"Some days the fog was so thick that he could not see his own hands, and he rang the bell until the last sailor was home. " +
		"His daughter kept a notebook of every storm, with the wind, the waves and the names of the ships that passed the rocks."
	r := newRig(t, neural.Options{})
	installKokoro(t, r, onnxtest.KokoroTimed(onnxtest.KokoroTimedOptions{}))
	samples, sr, words, err := r.engine.SynthesizeWords(t.Context(), "kokoro-am_adam", text, rate)
	if err != nil {
		t.Fatalf("SynthesizeWords: %v", err)
	}
	phonemes, err := r.phon.Kokoro(t.Context(), "en-us", text, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := phonemize.KokoroTokens(phonemes, nil)
	total := 0
	for _, c := range want {
		total += len(c) - 2
	}
	if len(want) < 2 || total <= phonemize.KokoroMaxTokens {
		t.Fatalf("%d tokens in %d chunks: the text is too short for this test", total, len(want))
	}
	runs := decodeKokoroTimed(t, samples, rate, 1)
	if len(runs) != len(want) {
		t.Fatalf("the model ran %d times, want %d chunks", len(runs), len(want))
	}
	for i, run := range runs {
		if !slices.Equal(run.tokens, want[i]) {
			t.Errorf("chunk %d: the model got tokens %v, want %v", i, run.tokens, want[i])
		}
		if run.row != len(want[i])-2 {
			t.Errorf("chunk %d of %d tokens: style row %d, want %d", i, len(want[i])-2, run.row, len(want[i])-2)
		}
		if math.Abs(run.speed-rate) > 1.0/32 { // one step of 16-bit PCM, at 1/1024
			t.Errorf("chunk %d: speed %g, want %g", i, run.speed, rate)
		}
	}
	checkKokoroWords(t, text, words, phonemeWordStarts(runs), float64(len(samples))/float64(sr))
	// The first word of chunk 2 comes after all of chunk 1's samples, tail included.
	first := float64(runs[1].starts[1]) / float64(sr)
	if i := slices.IndexFunc(words, func(w narrator.TranscriptWord) bool { return w.Start >= first }); i < 0 || words[i].Start != first {
		t.Errorf("no word starts where chunk 2's speech does, at %.4f s", first)
	}
}
