package flite

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestParseSegments(t *testing.T) {
	t.Parallel()
	got := parseSegments("pau:0.136 k:0.227 aw:0.374 junk x: :1 n:oops pau:0.5 \n")
	want := []segment{{"pau", 0.136}, {"k", 0.227}, {"aw", 0.374}, {"pau", 0.5}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(segment{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPhoneCounts(t *testing.T) {
	t.Parallel()
	got := phoneCounts("pau k aw n s ax l pau ax p r uw v z pau n uw pau pau d ow z\n")
	if diff := cmp.Diff([]int{6, 6, 2, 3}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWordTokens(t *testing.T) {
	t.Parallel()
	got := narrator.WordTokens(`"Well," she said -- it's twenty-eight... (really) ; 3.5 !`)
	want := []string{"Well", "she", "said", "it's", "twenty-eight", "really", "3.5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAssignWords(t *testing.T) {
	t.Parallel()
	segs := parseSegments("pau:0.1 h:0.2 ay:0.3 pau:0.5 y:0.6 uw:0.7 pau:0.9")
	tests := []struct {
		name   string
		tokens []string
		counts []int
		length float64
		want   []narrator.TranscriptWord
	}{
		{"match", []string{"Hi", "you"}, []int{2, 2}, 1, []narrator.TranscriptWord{
			{Start: 0.1, End: 0.3, Text: "Hi"}, {Start: 0.5, End: 0.7, Text: "you"}}},
		{"cut at the end of the audio", []string{"Hi", "you"}, []int{2, 2}, 0.65, []narrator.TranscriptWord{
			{Start: 0.1, End: 0.3, Text: "Hi"}, {Start: 0.5, End: 0.65, Text: "you"}}},
		{"a token flite did not read as one word", []string{"Hi", "you"}, []int{2, 1, 1}, 1, nil},
		{"phones do not add up", []string{"Hi", "you"}, []int{2, 3}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, assignWords(tt.tokens, tt.counts, segs, tt.length)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
