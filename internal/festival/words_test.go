package festival

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestParseWords(t *testing.T) {
	t.Parallel()
	lines := []string{
		wordPrefix + "0.175 0.26499999 It",
		wordPrefix + "0.26499999 0.69 costs",
		wordPrefix + "x 0.7 broken",
		wordPrefix + "0.8 0.9",
		wordPrefix + "0.5 0.95 back",  // starts inside the word before: moved up
		wordPrefix + "0.95 9 Smith's", // ends past the audio: cut
		"stray output",
	}
	got := parseWords(lines, 2)
	want := []narrator.TranscriptWord{
		{Start: 0.175, End: 0.26499999, Text: "It"},
		{Start: 0.26499999, End: 0.69, Text: "costs"},
		{Start: 0.69, End: 0.95, Text: "back"},
		{Start: 0.95, End: 2, Text: "Smith's"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzParseWords reads any festival output as word lines. Whatever it
// prints, the spans stay within the audio, in order and apart, and every
// word has text.
func FuzzParseWords(f *testing.F) {
	f.Add(wordPrefix+"0.175 0.265 It\n"+wordPrefix+"0.5 9 back\nstray", 2.0)
	f.Add(wordPrefix+"NaN 1 x\n"+wordPrefix+"0 +Inf y\n"+wordPrefix+"-1 -0.5 z", 1.5)
	f.Add(wordPrefix+"1e308 1e309 big", 0.0)
	f.Fuzz(func(t *testing.T, out string, length float64) {
		if length < 0 || length != length || length > 1e6 {
			return // the length comes from the decoded audio
		}
		words := parseWords(strings.Split(out, "\n"), length)
		prev := 0.0
		for _, w := range words {
			if !(w.Start >= prev && w.End >= w.Start && w.End <= length) || strings.TrimSpace(w.Text) == "" {
				t.Fatalf("word %+v after %v in audio of %v s", w, prev, length)
			}
			prev = w.End
		}
	})
}
