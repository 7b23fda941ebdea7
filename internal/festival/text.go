package festival

import "strings"

// Quote returns text as a Scheme string literal that festival reads back as the same words.
//
// Backslashes and double quotes are escaped. Control characters, newlines among them, become
// spaces, so that the command stays on the lines we write. Festival's front end reads bytes as
// Latin text, so common typographic characters are folded to ASCII (curly quotes, dashes,
// accented Latin letters) and any other non-ASCII character becomes a space.
func Quote(text string) string {
	var b strings.Builder
	b.Grow(len(text) + 2)
	b.WriteByte('"')
	for _, r := range text {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case r < 0x80:
			b.WriteRune(r)
		default:
			b.WriteString(Fold(r))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Fold returns an ASCII stand-in for a non-ASCII rune: the base letter of an accented Latin
// letter, the plain form of typographic punctuation, or a space.
func Fold(r rune) string {
	switch r {
	case '‘', '’', '‚', '‛', '′', 'ʼ':
		return "'"
	case '“', '”', '„', '‟', '″', '«', '»':
		return `\"`
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
