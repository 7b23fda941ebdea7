package narrator

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on pronunciation rules.
const (
	MaxPhraseChars = 100
	MaxSayChars    = 200
	// MaxPronunciations is how many rules a project may have. Every
	// rendering and every page that shows the spoken text matches all of
	// a project's rules, so their number is bounded.
	MaxPronunciations = 500
)

// CheckPronunciationCount decides whether a project that has count rules
// may take one more: ECONFLICT once it has MaxPronunciations. A rule that
// replaces one for the same phrase adds none (replacing true) and is
// always allowed. Both stores call it in the transaction that adds the
// rule, after locking the project.
func CheckPronunciationCount(count int, replacing bool) error {
	if replacing || count < MaxPronunciations {
		return nil
	}
	return Errorf(ECONFLICT, "the project has %d pronunciation rules, the most allowed; remove one before adding another", MaxPronunciations)
}

// Pronunciation is a project's rule for saying a word or phrase: wherever
// Phrase occurs as a whole word or phrase, in any letter case, the engine
// is given Say instead (a respelling such as "engine x" for "nginx").
type Pronunciation struct {
	ID        int64
	ProjectID int64
	Phrase    string
	Say       string
	CreatedAt time.Time
}

// Validate checks a rule's fields.
func (p *Pronunciation) Validate() error {
	for _, f := range []struct {
		name, value string
		max         int
	}{{"phrase", p.Phrase, MaxPhraseChars}, {"say", p.Say, MaxSayChars}} {
		if strings.TrimSpace(f.value) == "" {
			return Errorf(EINVALID, "%s is required", f.name)
		}
		if checkText(f.name, f.value) != nil || strings.ContainsAny(f.value, "<>") {
			return Errorf(EINVALID, "%s must be plain text", f.name)
		}
		if n := utf8.RuneCountInString(f.value); n > f.max {
			return Errorf(EINVALID, "%s is %d characters long; at most %d are allowed", f.name, n, f.max)
		}
	}
	return nil
}

// Trim removes the spaces around the rule's phrase and say, the form in
// which stores keep a rule (after Validate).
func (p *Pronunciation) Trim() {
	p.Phrase, p.Say = strings.TrimSpace(p.Phrase), strings.TrimSpace(p.Say)
}

// Matches reports whether the rule's phrase occurs in text as a whole word
// or phrase, ignoring letter case.
func (p *Pronunciation) Matches(text string) bool {
	phrase := strings.ToLower(strings.TrimSpace(p.Phrase))
	if phrase == "" {
		return false
	}
	lower := strings.ToLower(text)
	for i := 0; ; {
		j := strings.Index(lower[i:], phrase)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(phrase)
		before, _ := utf8.DecodeLastRuneInString(lower[:start])
		after, _ := utf8.DecodeRuneInString(lower[end:])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
