package extract

import (
	"strings"
	"unicode"
)

// Score counts the words of an extraction against the article text
// checked by hand, as bags of words (see words), each word of the
// extraction matched at most as often as the hand-checked text holds it.
type Score struct {
	// Want is the number of words in the hand-checked text, Got in the
	// extraction, Common in both.
	Want, Got, Common int
}

// Compare scores got, the extracted text, against want.
func Compare(want, got string) Score {
	bag := map[string]int{}
	w := words(want)
	for _, x := range w {
		bag[x]++
	}
	g := words(got)
	s := Score{Want: len(w), Got: len(g)}
	for _, x := range g {
		if bag[x] > 0 {
			bag[x]--
			s.Common++
		}
	}
	return s
}

// Add returns the sum of two scores: the corpus's score is the sum of its
// pages'.
func (s Score) Add(o Score) Score {
	return Score{Want: s.Want + o.Want, Got: s.Got + o.Got, Common: s.Common + o.Common}
}

// Precision is the share of extracted words that belong to the article.
func (s Score) Precision() float64 {
	if s.Got == 0 {
		return 0
	}
	return float64(s.Common) / float64(s.Got)
}

// Recall is the share of the article's words that were extracted.
func (s Score) Recall() float64 {
	if s.Want == 0 {
		return 0
	}
	return float64(s.Common) / float64(s.Want)
}

// F1 is the harmonic mean of precision and recall.
func (s Score) F1() float64 {
	p, r := s.Precision(), s.Recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// words splits s into lower-case words: runs of letters and digits, and
// each Chinese or Japanese character on its own, since those scripts put
// no spaces between words.
func words(s string) []string {
	var out []string
	start := -1
	s = strings.ToLower(s)
	for i, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
