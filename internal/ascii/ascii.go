// Package ascii folds text to ASCII for speech engines that read their input as bytes of Latin
// text (festival, flite), so that typographic punctuation and accented letters are spoken
// rather than spelled out or dropped.
package ascii

import "strings"

// Fold returns text in printable ASCII: control characters, newlines among them, become
// spaces; common typographic characters are folded to ASCII (curly quotes, dashes, accented
// Latin letters, a few symbols spelled out as words); any other non-ASCII character becomes a
// space.
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

// foldRune returns an ASCII stand-in for a non-ASCII rune: the base letter of an accented Latin
// letter, the plain form of typographic punctuation, or a space.
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
	case 'ß':
		return "ss"
	case 'æ':
		return "ae"
	case 'Æ':
		return "AE"
	case 'œ':
		return "oe"
	case 'Œ':
		return "OE"
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
	const (
		from = "ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿŠšŽžČčĆćŁłŃńŚśŹźŻżĘęĄą"
		to   = "AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOOooooooUUUUuuuuYyySsZzCcCcLlNnSsZzZzEeAa"
	)
	i := 0
	for _, f := range from {
		if f == r {
			return to[i : i+1]
		}
		i++
	}
	return " "
}
