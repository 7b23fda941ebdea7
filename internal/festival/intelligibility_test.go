package festival_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/wav"
)

// TestIntelligibility scores, with the shared pocketsphinx tool, the engine's output for each
// sample (sentence units, concatenated with pauses) against festival's own text2wave on the
// same text, and fails if ours scores lower. It takes minutes, so it runs only when
// NARRATOR_INTELLIGIBILITY is set to the shared directory (e.g. /work/shared).
func TestIntelligibility(t *testing.T) {
	shared := os.Getenv("NARRATOR_INTELLIGIBILITY")
	if shared == "" {
		t.Skip("set NARRATOR_INTELLIGIBILITY=/work/shared to score speech with pocketsphinx")
	}
	e := mustEngine(t, festival.Options{})
	spoken, err := filepath.Glob(filepath.Join(shared, "speech-samples", "*.spoken.txt"))
	if err != nil || len(spoken) == 0 {
		t.Fatalf("no samples in %s: %v", shared, err)
	}
	tool := filepath.Join(shared, "tools", "intelligibility.py")
	dir := t.TempDir()
	for _, ref := range spoken {
		name := strings.TrimSuffix(filepath.Base(ref), ".spoken.txt")
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			ours := filepath.Join(dir, name+".ours.wav")
			mustWriteSentences(t, e, string(text), ours)
			theirs := filepath.Join(dir, name+".text2wave.wav")
			if out, err := exec.Command("text2wave", "-eval", "(voice_"+voice+")", ref, "-o", theirs).CombinedOutput(); err != nil {
				t.Fatalf("text2wave: %v: %s", err, out)
			}
			a, b := mustScore(t, tool, ours, ref), mustScore(t, tool, theirs, ref)
			t.Logf("%s: ours %.3f, text2wave %.3f", name, a, b)
			if a < b {
				t.Errorf("%s: ours %.3f < text2wave %.3f", name, a, b)
			}
		})
	}
}

var sentenceEnd = regexp.MustCompile(`[.!?]["')\]]*\s+`)

// mustWriteSentences synthesises text one sentence at a time, in parallel, and writes the
// sentences in order to path, with 0.3 s of silence between sentences and 0.6 s between lines.
func mustWriteSentences(tb testing.TB, e *festival.Engine, text, path string) {
	tb.Helper()
	type unit struct {
		text  string
		pause float64
	}
	var units []unit
	for para := range strings.Lines(text) {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		idx := sentenceEnd.FindAllStringIndex(para, -1)
		start := 0
		for _, m := range idx {
			units = append(units, unit{para[start:m[1]], 0.3})
			start = m[1]
		}
		if start < len(para) {
			units = append(units, unit{para[start:], 0.3})
		}
		units[len(units)-1].pause = 0.6
	}
	results := make([][]int16, len(units))
	rates := make([]int, len(units))
	errs := make(chan error, len(units))
	for i, u := range units {
		go func() {
			var err error
			results[i], rates[i], err = e.Synthesize(context.Background(), voice, strings.TrimSpace(u.text), 1)
			errs <- err
		}()
	}
	for range units {
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
	}
	rate := rates[0]
	var all []int16
	for i, s := range results {
		all = append(all, s...)
		all = append(all, make([]int16, int(units[i].pause*float64(rate)))...)
	}
	if err := os.WriteFile(path, wav.Encode(all, rate), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func mustScore(tb testing.TB, tool, audio, ref string) float64 {
	tb.Helper()
	out, err := exec.Command("python3", tool, audio, ref).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %v: %s", tool, err, out)
	}
	m := regexp.MustCompile(`accuracy=([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		tb.Fatalf("%s: no accuracy in %q", tool, out)
	}
	a, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		tb.Fatal(fmt.Errorf("parse %q: %w", m[1], err))
	}
	return a
}
