package extract_test

import (
	"testing"

	"github.com/narrator/narrator/internal/extract"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want, got string
		score           extract.Score
	}{
		{"same words, other case and punctuation", "The cat sat. The end!", "the CAT sat the, end", extract.Score{Want: 5, Got: 5, Common: 5}},
		{"extra words lower precision", "a b c", "a b c d", extract.Score{Want: 3, Got: 4, Common: 3}},
		{"a repeated word counts as often as wanted", "a a b", "a a a b", extract.Score{Want: 3, Got: 4, Common: 3}},
		{"Chinese counts characters", "出国前后", "出国前", extract.Score{Want: 4, Got: 3, Common: 3}},
		{"accents stay in the word", "café crème", "cafe creme", extract.Score{Want: 2, Got: 2, Common: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := extract.Compare(tc.want, tc.got); got != tc.score {
				t.Errorf("Compare = %+v, want %+v", got, tc.score)
			}
		})
	}
	s := extract.Score{Want: 4, Got: 5, Common: 4}
	if s.Precision() != 0.8 || s.Recall() != 1 || s.F1() < 0.888 || s.F1() > 0.889 {
		t.Errorf("P %v R %v F1 %v", s.Precision(), s.Recall(), s.F1())
	}
}
