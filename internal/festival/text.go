package festival

import (
	"strings"

	"github.com/narrator/narrator/internal/ascii"
)

// Quote returns text as a Scheme string literal that festival reads back as the same words.
//
// Backslashes and double quotes are escaped. Control characters, newlines among them, become
// spaces, so that the command stays on the lines we write. Festival's front end reads bytes as
// Latin text, so common typographic characters are folded to ASCII (curly quotes, dashes,
// accented Latin letters) and any other non-ASCII character becomes a space.
func Quote(text string) string {
	// Folding comes first: it may turn curly quotes into '"', which must then be escaped.
	return `"` + quoteEscaper.Replace(ascii.Fold(text)) + `"`
}

// quotePath returns a file's path as a Scheme string literal. Unlike Quote it does not fold:
// festival opens the bytes it reads, so a path outside ASCII (a data directory named
// "Données") must reach it unchanged. New refuses a scratch directory with control
// characters, the one thing that would break the command's line.
func quotePath(path string) string { return `"` + quoteEscaper.Replace(path) + `"` }

// quoteEscaper escapes the two characters that end or escape a Scheme string.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)
