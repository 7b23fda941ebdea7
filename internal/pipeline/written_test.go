package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
)

// TestWrittenWords maps spoken words, normalised, back to the sentence as written.
func TestWrittenWords(t *testing.T) {
	t.Parallel()
	// spoken makes words one second apart: word k spans [k, k+0.5].
	spoken := func(s string) []narrator.TranscriptWord {
		var out []narrator.TranscriptWord
		for k, w := range strings.Fields(s) {
			out = append(out, narrator.TranscriptWord{Start: float64(k), End: float64(k) + 0.5, Text: w})
		}
		return out
	}
	type span struct {
		Text       string
		Start, End float64
	}
	tests := []struct {
		name, written, spoken string
		want                  []span
	}{
		{"same words", "Hello, my old friend.", "Hello my old friend",
			[]span{{"Hello", 0, 0.5}, {"my", 1, 1.5}, {"old", 2, 2.5}, {"friend", 3, 3.5}}},
		{"currency", "It cost $3.5 million today.", "It cost three point five million dollars today",
			[]span{{"It", 0, 0.5}, {"cost", 1, 1.5}, {"$3.5", 2, 4.5}, {"million", 5, 6.5}, {"today", 7, 7.5}}},
		{"number", "In 1990 we won.", "In nineteen ninety we won",
			[]span{{"In", 0, 0.5}, {"1990", 1, 2.5}, {"we", 3, 3.5}, {"won", 4, 4.5}}},
		{"abbreviation first", "Dr. Smith came.", "Doctor Smith came",
			[]span{{"Dr", 0, 0.5}, {"Smith", 1, 1.5}, {"came", 2, 2.5}}},
		{"symbol at the end", "Rates rose 5%", "Rates rose five percent",
			[]span{{"Rates", 0, 0.5}, {"rose", 1, 1.5}, {"5%", 2, 3.5}}},
		{"two written for one spoken", "It is the U.N. today", "It is the UN today",
			[]span{{"It", 0, 0.5}, {"is", 1, 1.5}, {"the", 2, 2.5}, {"U.N", 3, 3.5}, {"today", 4, 4.5}}},
		{"punctuation only tokens left out", "Wait — what?", "Wait what",
			[]span{{"Wait", 0, 0.5}, {"what", 1, 1.5}}},
		{"case folded", "NASA launched", "nasa launched",
			[]span{{"NASA", 0, 0.5}, {"launched", 1, 1.5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []span
			for _, w := range writtenWords(tt.written, spoken(tt.spoken)) {
				got = append(got, span{w.Text, w.Start, w.End})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("writtenWords(%q, %q) (-want +got):\n%s", tt.written, tt.spoken, diff)
			}
		})
	}
}
