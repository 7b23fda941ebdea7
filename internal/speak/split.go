package speak

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// noEnd lists, per language, abbreviations (without their final period)
// after which a sentence never ends: titles and words that always precede
// something.
var noEnd = map[string]map[string]bool{
	"en": setOf("Dr", "Mr", "Mrs", "Ms", "Prof", "St", "Sen", "Rep", "Gov", "Gen", "Col", "Lt", "Sgt", "Capt",
		"Cmdr", "Adm", "Rev", "Hon", "Pres", "Supt", "Mt", "Ft", "vs", "v", "e.g", "i.e", "E.g", "I.e", "cf",
		"No", "Nos", "no", "Fig", "fig", "approx", "p", "pp", "vol", "Vol", "ch", "Ch", "a.k.a", "Jan", "Feb",
		"Mar", "Apr", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec", "est", "Univ", "Dept", "Ave", "Rd", "Blvd"),
	"de": setOf("Dr", "Prof", "Hr", "Fr", "Nr", "St", "Str", "z.B", "d.h", "u.a", "ca", "bzw", "vgl", "evtl",
		"ggf", "inkl", "zzgl", "Mio", "Mrd", "Jh", "bspw", "sog", "z", "d", "u", "B", "h", "a"),
	"fr": setOf("M", "MM", "Dr", "Pr", "St", "Ste", "p", "ex", "env", "av", "bd", "c.-à-d", "n°"),
}

// maybeEnd lists abbreviations that end a sentence only when a typical
// sentence opening follows ("in the U.S. The..." but "U.S. Army").
var maybeEnd = map[string]bool{"etc": true, "Inc": true, "Ltd": true, "Co": true, "Corp": true,
	"Jr": true, "Sr": true, "a.m": true, "p.m": true, "usw": true, "al": true}

// starters are words that typically open an English sentence.
var starters = setOf("The", "A", "An", "It", "He", "She", "They", "We", "I", "You", "But", "And", "In", "On",
	"This", "That", "These", "Those", "There", "His", "Her", "Their", "Our", "Its", "As", "At", "After",
	"When", "If", "So", "Yet", "Meanwhile", "However", "Now", "Then", "Some", "Many", "Most", "For",
	"Der", "Die", "Das", "Er", "Sie", "Es", "Wir", "Ich", "Le", "La", "Les", "Il", "Elle", "Ils", "Nous")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

const closers = "\"'”’»)]}"

// Sentences splits text into sentences. A sentence ends at ".", "!", "?"
// or "…" (with any closing quotes and brackets after it) followed by white
// space and a word that does not start in lower case. A period does not
// end a sentence after a known abbreviation (Dr., e.g.), inside a number
// (3.5), after an initial (J. Smith) or a dotted acronym (U.S.), unless a
// typical sentence opening follows. White space is collapsed; the
// sentences hold the original text otherwise. It runs in linear time.
func Sentences(language, text string) []string {
	return sentences(lookup(language), text)
}

func sentences(l *lang, text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == '。' || r == '！' || r == '？' {
			j := i + size
			out = appendSentence(out, text[start:j])
			start = j
			i = j
			continue
		}
		if r != '.' && r != '!' && r != '?' && r != '…' {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r2, s2 := utf8.DecodeRuneInString(text[j:])
			if r2 != '.' && r2 != '!' && r2 != '?' && r2 != '…' {
				break
			}
			j += s2
		}
		for j < len(text) && strings.ContainsRune(closers, rune(text[j])) {
			j++
		}
		for j < len(text) && (strings.HasPrefix(text[j:], "”") || strings.HasPrefix(text[j:], "’") || strings.HasPrefix(text[j:], "»")) {
			_, s3 := utf8.DecodeRuneInString(text[j:])
			j += s3
		}
		if j >= len(text) {
			break
		}
		if text[j] != ' ' {
			i = j
			continue
		}
		k := j + 1
		if boundary(l, text, start, i, r, k) {
			out = appendSentence(out, text[start:j])
			start = k
		}
		i = k
	}
	if start < len(text) {
		out = appendSentence(out, text[start:])
	}
	return out
}

func appendSentence(out []string, s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return out
	}
	return append(out, s)
}

// boundary decides whether the terminal punctuation r at text[i] ends a
// sentence; the next word starts at text[k].
func boundary(l *lang, text string, start, i int, r rune, k int) bool {
	next := strings.TrimLeft(text[k:], "\"'“‘«([{¿¡")
	nr, _ := utf8.DecodeRuneInString(next)
	if unicode.IsLower(nr) {
		return false
	}
	if r != '.' || (i+1 < len(text) && text[i+1] == '.') || (i > 0 && text[i-1] == '.') {
		return true // "!", "?", "…" and "..." end a sentence before a capital
	}
	// The word before the period, without opening quotes or brackets.
	ws := i
	for ws > start && ws > i-40 && text[ws-1] != ' ' {
		ws--
	}
	word := strings.TrimLeft(text[ws:i], "\"'“‘«([{")
	if word == "" {
		return true
	}
	nextWord := next
	if e := strings.IndexAny(nextWord, " ,;:.!?"); e >= 0 {
		nextWord = nextWord[:e]
	}
	if noEnd[l.code][word] {
		return false
	}
	if isDigits(word) && l.monthIndex[strings.ToLower(nextWord)] > 0 && l.code != "en" {
		return false // German "3. Oktober"
	}
	single := utf8.RuneCountInString(word) == 1 && unicode.IsUpper([]rune(word)[0])
	dotted := strings.Count(word, ".") >= 1 && len(word) <= 12 && allLettersAndDots(word)
	if maybeEnd[word] || single || dotted {
		return starters[nextWord]
	}
	return true
}

func allLettersAndDots(w string) bool {
	for _, r := range w {
		if r != '.' && !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// splitLong splits a normalised sentence longer than max bytes: at the
// last comma, semicolon, colon or dash that leaves a piece of at least a
// third of max, else at the last space, else (one giant word) at a rune
// boundary. Every piece is at most max bytes.
func splitLong(s string, max int) []string {
	var out []string
	for len(s) > max {
		cut := -1
		win := s[:max+1]
		for _, sep := range []string{"; ", ": ", ", ", " - "} {
			if p := strings.LastIndex(win, sep); p >= max/3 && p+1 > cut {
				cut = p + 1 // keep the punctuation with the first piece
				if sep == " - " {
					cut = p
				}
			}
		}
		if cut < 0 || cut > max {
			if p := strings.LastIndexByte(win, ' '); p > 0 {
				cut = p
			}
		}
		if cut <= 0 || cut > max {
			cut = max
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			if cut == 0 {
				cut = max
			}
		}
		piece := strings.TrimSpace(s[:cut])
		if piece != "" {
			out = append(out, piece)
		}
		s = strings.TrimSpace(s[cut:])
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// How SplitLead splits a long first sentence: a first unit of more than
// leadWords words is split at its first comma, semicolon or colon that
// leaves at least leadMinWords words on either side.
const (
	leadWords    = 12
	leadMinWords = 4
)

// PauseLead is the pause after the first piece of a first sentence that
// SplitLead split: a sentence's, so that a stream may end its first chunk
// of audio there (a pause within a sentence is too short for that).
const PauseLead = PauseSentence

// SplitLead returns units with the first one split in two if it is long
// (more than leadWords words) and has a natural pause to split at: the
// first comma, semicolon or colon (Script has made dashes commas) that
// leaves at least leadMinWords words on either side. The first piece
// keeps the unit's Source and its punctuation and is followed by
// PauseLead; the second continues the sentence, with an empty Source, as
// the pieces of a sentence split for length do, and keeps the unit's
// pause. A stream then starts as soon as the first piece is spoken, not
// the whole sentence. Renderings do not use it: their units, and the
// chunks and cached encodings cut from them, stay those of the article.
// units is not modified.
func SplitLead(units []Unit) []Unit {
	if len(units) == 0 {
		return units
	}
	words := strings.Fields(units[0].Text)
	if len(words) <= leadWords {
		return units
	}
	for i := leadMinWords - 1; i < len(words)-leadMinWords; i++ {
		if strings.ContainsAny(words[i][len(words[i])-1:], ",;:") {
			head, tail := units[0], units[0]
			head.Text, head.Pause = strings.Join(words[:i+1], " "), PauseLead
			tail.Text, tail.Source = strings.Join(words[i+1:], " "), ""
			return slices.Concat([]Unit{head, tail}, units[1:])
		}
	}
	return units
}
