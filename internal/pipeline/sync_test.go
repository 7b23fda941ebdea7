//go:build e2e

package pipeline_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/proctest"
)

// TestTranscriptSyncFestival renders an article with the default English
// voices (festival's for the body) and checks, on the decoded MP3, that every WebVTT cue starts
// within 50 ms of where its sentence's speech begins (after the silence
// between sentences), as the issue requires.
func TestTranscriptSyncFestival(t *testing.T) {
	for _, p := range []string{"festival", "flite", "lame"} {
		proctest.NeedProgram(t, p, "scripts/deps.sh test")
	}
	if _, err := os.Stat("/usr/share/festival/voices/us/cmu_us_slt_arctic_hts"); err != nil {
		proctest.Missing(t, "festival HTS voice", "scripts/deps.sh test")
	}
	root := filepath.Join(t.TempDir(), "media")
	media, err := localfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, media, narrator.EngineFestival, narrator.EngineFlite)
	title, body, _ := narrator.DefaultVoices("en_US")
	if body.Engine != narrator.EngineFestival {
		t.Fatalf("the default English body voice %s is not festival's", body.Name)
	}
	proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	article := `<p>The council met on Tuesday evening. Its members voted on the new budget.</p>
<p>Several residents spoke before the vote. Most of them asked for more money for the library.</p>
<h2>What happens next</h2>
<p>The mayor will sign the budget in March. Work on the bridge starts in the summer!</p>
<p>Few knew why. Fish swim. She said so.</p>`
	r, err := p.Render(t.Context(), &narrator.Audio{Title: "Council approves the budget", Body: article}, proj)
	if err != nil {
		t.Fatal(err)
	}
	tr := readTranscript(t, media, r.Keys[narrator.ContentTypeMP3])
	if len(tr.Sentences) != 11 {
		t.Fatalf("%d sentences, want the title, a heading and nine", len(tr.Sentences))
	}
	// festival and flite report words; they lie within their sentences, in
	// order, the first where the sentence starts.
	for i, sent := range tr.Sentences {
		if len(sent.Words) == 0 {
			t.Errorf("sentence %d %q has no words", i, sent.Text)
			continue
		}
		prev := sent.Start
		for _, w := range sent.Words {
			if w.Start < prev || w.End < w.Start || w.End > sent.End {
				t.Errorf("sentence %d (%.3f-%.3f): word %q spans %.3f-%.3f after %.3f", i, sent.Start, sent.End, w.Text, w.Start, w.End, prev)
			}
			prev = w.End
		}
		if d := sent.Words[0].Start - sent.Start; d > 0.05 {
			t.Errorf("sentence %d starts at %.3f s, its first word at %.3f s", i, sent.Start, sent.Words[0].Start)
		}
		t.Logf("sentence %d %.3f-%.3f: words %.3f-%.3f", i, sent.Start, sent.End, sent.Words[0].Start, sent.Words[len(sent.Words)-1].End)
	}
	// The shortest pause between sentences is 250 ms; speech inside a
	// sentence has shorter gaps. Where speech starts depends on the
	// silence threshold, for soft onsets (f, s, h) by up to 80 ms: the
	// cues must hold for the usual ones.
	decoded := decodeMP3(t, media, r.Keys[narrator.ContentTypeMP3])
	for _, dbfs := range []float64{-55, -50, -45, -40, -35} {
		t.Run(fmt.Sprintf("%.0fdBFS", dbfs), func(t *testing.T) {
			checkSync(t, tr, onsets(decoded, 200*time.Millisecond, dbfs), 0.050)
		})
	}
	// The HLS stream, decoded by ffmpeg from its first sample (as players
	// start its timeline at its first PTS), keeps the same time.
	t.Run("hls", func(t *testing.T) {
		proctest.NeedProgram(t, "ffmpeg", "scripts/deps.sh test")
		playlist := filepath.Join(root, filepath.FromSlash(r.Keys[narrator.ContentTypeM3U8]))
		raw, err := exec.CommandContext(t.Context(), "ffmpeg", "-v", "error", "-i", playlist, "-f", "s16le", "-ac", "1", "-").Output()
		if err != nil {
			t.Fatalf("ffmpeg: %v", err)
		}
		hls := make([]int16, len(raw)/2)
		for i := range hls {
			hls[i] = int16(uint16(raw[2*i]) | uint16(raw[2*i+1])<<8)
		}
		checkSync(t, tr, onsets(hls, 200*time.Millisecond, -40), 0.050)
	})
}
