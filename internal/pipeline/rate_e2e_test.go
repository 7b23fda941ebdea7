//go:build e2e

package pipeline_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proctest"
)

// TestSpeechRateFestival renders one sentence with festival's HTS voice at
// the project rates 1 and 2: at 2 the sentence lasts about half as long,
// and its word timings shrink with it, each word starting where the same
// word starts at rate 1, scaled by the sentence's own ratio (within 75 ms:
// the HTS engine shortens a phrase's pause less than its speech), and the
// sentence's cue where its speech starts in the MP3.
func TestSpeechRateFestival(t *testing.T) {
	for _, p := range []string{"festival", "lame"} {
		proctest.NeedProgram(t, p, "scripts/deps.sh test")
	}
	if _, err := os.Stat("/usr/share/festival/voices/us/cmu_us_slt_arctic_hts"); err != nil {
		proctest.Missing(t, "festival HTS voice", "scripts/deps.sh test")
	}
	media, err := localfs.New(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, media, narrator.EngineFestival)
	_, body, _ := narrator.DefaultVoices("en_US")
	a := &narrator.Audio{Body: "The council met on Tuesday evening and voted on the new budget for the library."}
	var pitch []float64
	render := func(rate float64) narrator.TranscriptSentence {
		t.Helper()
		proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: body.Name, BodyVoice: body.Name, SpeechRate: rate}
		r, err := p.Render(t.Context(), a, proj)
		if err != nil {
			t.Fatal(err)
		}
		tr := readTranscript(t, media, r.Keys[narrator.ContentTypeMP3])
		if len(tr.Sentences) != 1 || len(tr.Sentences[0].Words) < 10 {
			t.Fatalf("rate %g: transcript %+v, want one sentence with its words", rate, tr.Sentences)
		}
		decoded := decodeMP3(t, media, r.Keys[narrator.ContentTypeMP3])
		checkSync(t, tr, onsets(decoded, 200*time.Millisecond, -45), 0.050)
		pitch = append(pitch, medianPitch(decoded, pipeline.SampleRate))
		return tr.Sentences[0]
	}
	normal, fast := render(1), render(2)
	ratio := (fast.End - fast.Start) / (normal.End - normal.Start)
	t.Logf("rate 1: %.3f s; rate 2: %.3f s (×%.3f)", normal.End-normal.Start, fast.End-fast.Start, ratio)
	if ratio < 0.4 || ratio > 0.62 {
		t.Errorf("at rate 2 the sentence lasts ×%.3f of its length at rate 1, want about half", ratio)
	}
	// The HTS engine makes the speech faster, not higher: the voice's pitch stays.
	t.Logf("median pitch: %.0f Hz at rate 1, %.0f Hz at rate 2", pitch[0], pitch[1])
	if r := pitch[1] / pitch[0]; r < 0.9 || r > 1.1 {
		t.Errorf("median pitch %.0f Hz at rate 2, %.0f Hz at rate 1: the rate changed the pitch", pitch[1], pitch[0])
	}
	if len(fast.Words) != len(normal.Words) {
		t.Fatalf("%d words at rate 2, %d at rate 1", len(fast.Words), len(normal.Words))
	}
	for i, w := range fast.Words {
		want := normal.Start + (normal.Words[i].Start-normal.Start)*ratio
		if got := w.Start - fast.Start + normal.Start; math.Abs(got-want) > 0.075 {
			t.Errorf("word %d %q starts %.3f s into the sentence at rate 2, want %.3f (rate 1's %.3f × %.3f)",
				i, w.Text, w.Start-fast.Start, want-normal.Start, normal.Words[i].Start-normal.Start, ratio)
		}
		if w.End > fast.End+0.025 {
			t.Errorf("word %d %q ends at %.3f s, after its sentence (%.3f)", i, w.Text, w.End, fast.End)
		}
	}
}

// medianPitch estimates the median fundamental frequency of the voiced
// 40 ms frames of speech, by autocorrelation between 70 and 400 Hz: a
// frame is voiced where the normalised peak passes 0.6.
func medianPitch(samples []int16, rate int) float64 {
	frame, minLag, maxLag := rate/25, rate/400, rate/70
	var found []float64
	for at := 0; at+frame+maxLag <= len(samples); at += frame {
		var energy float64
		for _, v := range samples[at : at+frame] {
			energy += float64(v) * float64(v)
		}
		if energy/float64(frame) < 300*300 { // quieter than speech
			continue
		}
		best, bestLag := 0.0, 0
		for lag := minLag; lag <= maxLag; lag++ {
			var sum, e2 float64
			for i := at; i < at+frame; i++ {
				sum += float64(samples[i]) * float64(samples[i+lag])
				e2 += float64(samples[i+lag]) * float64(samples[i+lag])
			}
			if c := sum / math.Sqrt(energy*e2+1); c > best {
				best, bestLag = c, lag
			}
		}
		if best > 0.6 {
			found = append(found, float64(rate)/float64(bestLag))
		}
	}
	if len(found) == 0 {
		return 0
	}
	slices.Sort(found)
	return found[len(found)/2]
}
