package narrator_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestChapters(t *testing.T) {
	t.Parallel()
	h, b := narrator.SentenceHeading, narrator.SentenceBody
	tests := []struct {
		name      string
		sentences []narrator.TranscriptSentence
		want      []narrator.Chapter
	}{
		{"no headings", []narrator.TranscriptSentence{{Start: 0, Text: "T", Kind: narrator.SentenceTitle}, {Start: 1, Text: "x", Kind: b, Block: 1}},
			[]narrator.Chapter{{0, "Title"}}},
		{"headings", []narrator.TranscriptSentence{
			{Start: 0, Text: "Title.", Kind: narrator.SentenceTitle},
			{Start: 1.5, Text: "Part one.", Kind: h, Block: 1}, {Start: 2.5, Text: "Begins", Kind: h, Block: 1},
			{Start: 3, Text: "Sub", Kind: h, Block: 2},
			{Start: 4, Text: "Text.", Kind: b, Block: 3},
			{Start: 9.25, Text: "Two", Kind: h, Block: 4},
		}, []narrator.Chapter{{0, "Title"}, {1.5, "Part one. Begins"}, {3, "Sub"}, {9.25, "Two"}}},
		{"heading at the start", []narrator.TranscriptSentence{
			{Start: 0, Text: "First.", Kind: h, Block: 0}, {Start: 1, Text: "Rest", Kind: h, Block: 0},
			{Start: 2, Text: "Body.", Kind: b, Block: 1}, {Start: 3, Text: "Next", Kind: h, Block: 2},
		}, []narrator.Chapter{{0, "Title"}, {3, "Next"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := &narrator.Transcript{Sentences: tt.sentences}
			if diff := cmp.Diff(tt.want, tr.Chapters("Title")); diff != "" {
				t.Errorf("chapters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChaptersKey(t *testing.T) {
	t.Parallel()
	if got := narrator.ChaptersKey("tok/audio.mp3"); got != "tok/chapters.json" {
		t.Errorf("ChaptersKey = %q", got)
	}
	if got := narrator.PodcastTranscriptKey("tok/audio.mp3"); got != "tok/podcast-transcript.json" {
		t.Errorf("PodcastTranscriptKey = %q", got)
	}
	if narrator.ChaptersKey("") != "" || narrator.PodcastTranscriptKey("") != "" {
		t.Error("keys of an unprocessed audio")
	}
}
