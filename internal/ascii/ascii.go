// Package ascii folds text to ASCII for speech engines that read their input as bytes of Latin
// text (festival, flite), so that typographic punctuation and accented letters are spoken
// rather than spelled out or dropped.
package ascii

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Fold returns text in printable ASCII: control characters, newlines among them, become
// spaces; common typographic characters are folded to ASCII (curly quotes, dashes, a few
// symbols spelled out as words); Latin letters lose their diacritics (ř, ő, ș, ğ…), by Unicode
// compatibility decomposition (combining marks are dropped) or, for the letters that do not decompose (ø, ł, đ…), by a small
// table; any other non-ASCII character becomes a space.
func Fold(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case r < 0x80:
			b.WriteRune(r)
		default:
			b.WriteString(foldRune(r))
		}
	}
	return b.String()
}

// foldRune returns an ASCII stand-in for a non-ASCII rune: the plain form of typographic
// punctuation, a symbol's name, the base letters of a Latin letter, or a space.
func foldRune(r rune) string {
	switch r {
	case '‘', '’', '‚', '‛', '′', 'ʼ':
		return "'"
	case '“', '”', '„', '‟', '″', '«', '»':
		return `"`
	case '–', '—', '―', '−':
		return ", "
	case '‐', '‑', '‒':
		return "-"
	case '…':
		return "..."
	case '€':
		return " euros "
	case '£':
		return " pounds "
	case '¥':
		return " yen "
	case '°':
		return " degrees "
	case '½':
		return " one half "
	case '¼':
		return " one quarter "
	case '¾':
		return " three quarters "
	}
	if unicode.Is(unicode.Mn, r) {
		return "" // a combining diacritic, as in decomposed text
	}
	if s, ok := letters[r]; ok {
		return s
	}
	if s, ok := decompose(r); ok {
		return s
	}
	return " "
}

// decompose returns r's compatibility decomposition without its combining marks (ř → r,
// ǆ → dz, ﬁ → fi), if that is ASCII and not empty.
func decompose(r rune) (string, bool) {
	var b strings.Builder
	for _, d := range norm.NFKD.String(string(r)) {
		switch {
		case unicode.Is(unicode.Mn, d):
			// A diacritic: dropped.
		case d >= 0x20 && d < 0x7f:
			b.WriteRune(d)
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// letters folds the Latin letters that have no canonical or compatibility decomposition into
// a base letter and marks.
var letters = map[rune]string{
	'ß': "ss", 'ẞ': "SS",
	'æ': "ae", 'Æ': "AE",
	'œ': "oe", 'Œ': "OE",
	'ø': "o", 'Ø': "O",
	'ł': "l", 'Ł': "L",
	'đ': "d", 'Đ': "D",
	'ð': "d", 'Ð': "D",
	'þ': "th", 'Þ': "Th",
	'ħ': "h", 'Ħ': "H",
	'ı': "i",
	'ŧ': "t", 'Ŧ': "T",
	'ŋ': "ng", 'Ŋ': "Ng",
	'ĸ': "k",
}
