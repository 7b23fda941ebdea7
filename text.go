package narrator

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidText reports whether s is text that stores keep: valid UTF-8 without
// NUL characters. Every text a client stores is checked with it, since a
// PostgreSQL text column holds neither, and the same input must be accepted
// or refused alike whichever store runs. So a lookup by a string that is not
// ValidText finds nothing, and stores answer it without asking the database.
func ValidText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// checkText returns an EINVALID *Error, naming field, unless s is ValidText.
func checkText(field, s string) *Error {
	if !ValidText(s) {
		return Errorf(EINVALID, "%s must be valid UTF-8 without NUL characters", field)
	}
	return nil
}

// WordTokens returns the words a speech engine reads in text: its white-space
// separated tokens without the punctuation around them, those with no letter
// or digit left out. Inner punctuation stays ("it's", "twenty-eight"). The
// engines that time words match their timings to these tokens.
func WordTokens(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		f = strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
