package flite

import (
	"strconv"
	"strings"

	"github.com/narrator/narrator"
)

// segment is one phone flite spoke, as -psdur prints it: "name:end".
type segment struct {
	name string
	end  float64 // seconds
}

// parseSegments reads the segments of -psdur output, in order. Anything that is not a segment
// is skipped.
func parseSegments(out string) []segment {
	var segs []segment
	for _, f := range strings.Fields(out) {
		name, end, ok := strings.Cut(f, ":")
		if !ok || name == "" {
			continue
		}
		t, err := strconv.ParseFloat(end, 64)
		if err != nil {
			continue
		}
		segs = append(segs, segment{name, t})
	}
	return segs
}

// phoneCounts reads -ps output of words spoken one by one, a pause between each: how many
// phones each word has.
func phoneCounts(out string) []int {
	var counts []int
	n := 0
	for _, ph := range strings.Fields(out) {
		if ph != "pau" {
			n++
			continue
		}
		if n > 0 {
			counts = append(counts, n)
		}
		n = 0
	}
	if n > 0 {
		counts = append(counts, n)
	}
	return counts
}

// assignWords shares the spoken segments (pauses aside) out to the tokens in order, counts[i]
// to token i, and returns each token's span: from the end of the segment before its first to
// the end of its last, within [0, length]. It returns nil if the counts do not match the
// tokens and segments.
func assignWords(tokens []string, counts []int, segs []segment, length float64) []narrator.TranscriptWord {
	if len(counts) != len(tokens) {
		return nil
	}
	var phones []int // indexes in segs of the spoken phones
	for i, s := range segs {
		if s.name != "pau" {
			phones = append(phones, i)
		}
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != len(phones) {
		return nil
	}
	words := make([]narrator.TranscriptWord, 0, len(tokens))
	next, prev := 0, 0.0
	for i, tok := range tokens {
		first, last := phones[next], phones[next+counts[i]-1]
		next += counts[i]
		start := 0.0
		if first > 0 {
			start = segs[first-1].end
		}
		start = min(max(start, prev), length)
		end := min(max(segs[last].end, start), length)
		words = append(words, narrator.TranscriptWord{Start: start, End: end, Text: tok})
		prev = end
	}
	return words
}
