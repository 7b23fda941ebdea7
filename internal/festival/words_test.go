package festival

import (
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
