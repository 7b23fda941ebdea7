package pipeline

import (
	"strings"
	"unicode"

	"github.com/narrator/narrator"
)

// writtenWords returns the words of a sentence as written, timed by the words an engine
// spoke, which are normalised: "$3.5 million" is spoken "three point five million dollars".
// The spoken words equal to written ones (letters and digits, case folded) anchor the two, in
// order (their longest common subsequence); the spoken words between two anchors time the
// written words between them, which share them in order, or, if there are none, lengthen the
// written word before. A written word that gets no spoken word shares the time of its
// neighbour. Written words are the sentence's tokens without the punctuation around them;
// those with no letter or digit are left out.
func writtenWords(sentence string, spoken []narrator.TranscriptWord) []narrator.TranscriptWord {
	written := writtenTokens(sentence)
	if len(written) == 0 || len(spoken) == 0 {
		return spoken
	}
	nw, ns := len(written), len(spoken)
	lcs := commonSubsequences(written, spoken)
	// first[i], last[i] are the spoken words that time written word i, or -1.
	first, last := make([]int, nw), make([]int, nw)
	for i := range first {
		first[i], last[i] = -1, -1
	}
	assign := func(w0, w1, s0, s1 int) { // the gap written[w0:w1], spoken[s0:s1]
		switch {
		case s0 == s1:
			return
		case w0 == w1:
			if w0 > 0 { // no written word between: the one before lengthens
				last[w0-1] = s1 - 1
			} else if w1 < nw {
				first[0] = s0
			}
			return
		}
		n, m := w1-w0, s1-s0
		for k := range n {
			a := s0 + k*m/n
			b := s0 + (k+1)*m/n - 1
			if b >= a {
				first[w0+k], last[w0+k] = a, b
			}
		}
	}
	i, j, w0, s0 := 0, 0, 0, 0
	for i < nw && j < ns {
		switch {
		case wordKey(written[i]) == wordKey(spoken[j].Text) && lcs[i][j] == lcs[i+1][j+1]+1:
			assign(w0, i, s0, j)
			if first[i] < 0 {
				first[i] = j
			}
			last[i] = j
			i, j = i+1, j+1
			w0, s0 = i, j
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	assign(w0, nw, s0, ns)
	out := make([]narrator.TranscriptWord, 0, nw)
	for k, w := range written {
		a, b := first[k], last[k]
		switch {
		case a >= 0 && b >= a:
			out = append(out, narrator.TranscriptWord{Start: spoken[a].Start, End: spoken[b].End, Text: w})
		case len(out) > 0: // nothing spoken for it: it shares the end of the word before
			prev := out[len(out)-1]
			out = append(out, narrator.TranscriptWord{Start: prev.End, End: prev.End, Text: w})
		default:
			out = append(out, narrator.TranscriptWord{Start: spoken[0].Start, End: spoken[0].Start, Text: w})
		}
	}
	return out
}

// writtenTokens returns the sentence's tokens without the punctuation around them, leaving
// out those with no letter or digit.
func writtenTokens(sentence string) []string {
	var written []string
	for _, f := range strings.Fields(sentence) {
		f = strings.TrimFunc(f, func(r rune) bool { return unicode.IsPunct(r) && !strings.ContainsRune("%‰#&@", r) })
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			written = append(written, f)
		}
	}
	return written
}

// wordKey returns the letters and digits of a word, case folded: written and spoken words
// with the same key are the same word.
func wordKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// commonSubsequences returns the table lcs where lcs[i][j] is the length of the longest
// common subsequence, by wordKey, of written[i:] and spoken[j:].
func commonSubsequences(written []string, spoken []narrator.TranscriptWord) [][]int {
	nw, ns := len(written), len(spoken)
	lcs := make([][]int, nw+1)
	for i := range lcs {
		lcs[i] = make([]int, ns+1)
	}
	for i := nw - 1; i >= 0; i-- {
		for j := ns - 1; j >= 0; j-- {
			switch {
			case wordKey(written[i]) == wordKey(spoken[j].Text):
				lcs[i][j] = lcs[i+1][j+1] + 1
			default:
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	return lcs
}
