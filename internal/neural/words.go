package neural

import (
	"math"
	"unicode"

	"github.com/narrator/narrator"
)

// phonemeWord is the run of phonemes between two spaces of a sentence's phoneme IDs, as
// espeak-ng spoke it: one word, or a few short ones it joined ("ɪnðə" for "in the").
type phonemeWord struct {
	// phones are the sample positions where each phoneme starts, and end where the last ends.
	phones []int
	end    int
}

// phonemeWords returns the words of one sentence's IDs, each ID lasting samples[k]
// samples, from sample offset at. pad IDs (pad, start, end) and punctuation belong to no
// word; space IDs end one.
func phonemeWords(ids []int64, samples []int, at int, pad, space, punct map[int64]bool) []phonemeWord {
	var words []phonemeWord
	var cur *phonemeWord
	for k, id := range ids {
		switch {
		case space[id]:
			cur = nil
		case pad[id] || punct[id]:
		default:
			if cur == nil {
				words = append(words, phonemeWord{})
				cur = &words[len(words)-1]
			}
			cur.phones = append(cur.phones, at)
			cur.end = at + samples[k]
		}
		at += samples[k]
	}
	return words
}

// letters counts a word's letters and digits.
func letters(w string) int {
	n := 0
	for _, r := range w {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return max(n, 1)
}

// alignWords times the words of text with the phoneme words of its speech, at sampleRate.
// espeak-ng joins some short words into one phoneme word and may split one word into
// several, so the two are aligned, in order, by the least cost: each group of up to 4 words
// spoken as one phoneme word, or one word spoken as up to 3, costs the log of the ratio of
// its phonemes to its letters, and a little for each word joined or split. Words joined
// share their phoneme word's phonemes in proportion to their letters.
func alignWords(words []string, spoken []phonemeWord, sampleRate int) []narrator.TranscriptWord {
	nw, ns := len(words), len(spoken)
	if nw == 0 || ns == 0 {
		return nil
	}
	const (
		maxJoin  = 4
		maxSplit = 3
		penalty  = 0.5
	)
	lettersOf := make([]int, nw+1) // prefix sums
	for i, w := range words {
		lettersOf[i+1] = lettersOf[i] + letters(w)
	}
	phonesOf := make([]int, ns+1)
	for j, s := range spoken {
		phonesOf[j+1] = phonesOf[j] + len(s.phones)
	}
	cost := func(i0, i1, j0, j1 int) float64 {
		l := float64(lettersOf[i1] - lettersOf[i0])
		p := float64(phonesOf[j1] - phonesOf[j0])
		return math.Abs(math.Log((p+0.5)/(0.85*l+0.5))) + penalty*float64(i1-i0-1+j1-j0-1)
	}
	inf := math.Inf(1)
	best := make([][]float64, nw+1)
	from := make([][][2]int, nw+1)
	for i := range best {
		best[i] = make([]float64, ns+1)
		from[i] = make([][2]int, ns+1)
		for j := range best[i] {
			best[i][j] = inf
		}
	}
	best[0][0] = 0
	for i := 0; i <= nw; i++ {
		for j := 0; j <= ns; j++ {
			if best[i][j] == inf {
				continue
			}
			try := func(i1, j1 int) {
				if i1 > nw || j1 > ns {
					return
				}
				if c := best[i][j] + cost(i, i1, j, j1); c < best[i1][j1] {
					best[i1][j1], from[i1][j1] = c, [2]int{i, j}
				}
			}
			for k := 1; k <= maxJoin; k++ {
				try(i+k, j+1)
			}
			for m := 2; m <= maxSplit; m++ {
				try(i+1, j+m)
			}
		}
	}
	if best[nw][ns] == inf {
		return spread(words, spoken, sampleRate)
	}
	return alignedTimes(words, spoken, lettersOf, from, sampleRate)
}

// alignedTimes follows the alignment back from its end through from (from[i][j] is where the
// best alignment of words[:i] with spoken[:j] came from) and times each word: a word spoken
// alone by its phoneme words' span, and words joined into one phoneme word by its phonemes in
// proportion to their letters (lettersOf holds the prefix sums of their letters).
func alignedTimes(words []string, spoken []phonemeWord, lettersOf []int, from [][][2]int, sampleRate int) []narrator.TranscriptWord {
	nw, ns := len(words), len(spoken)
	out := make([]narrator.TranscriptWord, nw)
	sec := func(n int) float64 { return float64(n) / float64(sampleRate) }
	for i, j := nw, ns; i > 0; {
		i0, j0 := from[i][j][0], from[i][j][1]
		if i-i0 == 1 {
			out[i0] = narrator.TranscriptWord{Start: sec(spoken[j0].phones[0]), End: sec(spoken[j-1].end), Text: words[i0]}
		} else {
			s := spoken[j0]
			total := lettersOf[i] - lettersOf[i0]
			for k := i0; k < i; k++ {
				a := len(s.phones) * (lettersOf[k] - lettersOf[i0]) / total
				b := len(s.phones) * (lettersOf[k+1] - lettersOf[i0]) / total
				a, b = min(a, len(s.phones)-1), max(b, a+1)
				end := s.end
				if b < len(s.phones) {
					end = s.phones[b]
				}
				out[k] = narrator.TranscriptWord{Start: sec(s.phones[a]), End: sec(end), Text: words[k]}
			}
		}
		i, j = i0, j0
	}
	return out
}

// spread times words that cannot be aligned with the phoneme words, as when one has more
// than 4 times as many as the other: in proportion to their letters, over the speech.
func spread(words []string, spoken []phonemeWord, sampleRate int) []narrator.TranscriptWord {
	start, end := spoken[0].phones[0], spoken[len(spoken)-1].end
	total := 0
	for _, w := range words {
		total += letters(w)
	}
	out := make([]narrator.TranscriptWord, len(words))
	at := 0
	for i, w := range words {
		a := start + (end-start)*at/total
		at += letters(w)
		b := start + (end-start)*at/total
		out[i] = narrator.TranscriptWord{Start: float64(a) / float64(sampleRate), End: float64(b) / float64(sampleRate), Text: w}
	}
	return out
}
