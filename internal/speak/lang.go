package speak

import (
	"regexp"
	"strings"
)

// currency names one currency in a language.
type currency struct {
	one, many           string // major unit: "dollar", "dollars"
	minorOne, minorMany string // minor unit: "cent", "cents"; "" if not read
}

// unit names one unit of measure in a language.
type unit struct{ one, many string }

// lang holds everything the normaliser knows about one language. A lang is
// built once, when the package is initialised, and never changed: it is a
// read-only table.
type lang struct {
	code string // "en", "de", "fr"; "" is the language-neutral fallback
	// dayFirst reads 03/10/2026 as 3 October (en_GB, de, fr), not March 10.
	dayFirst bool
	// num is the regular expression of a number written in this language,
	// with its grouping and decimal separators.
	num string
	// group lists the thousands separators; decimal is the decimal separator.
	group   string
	decimal string

	cardinal func(n uint64) string
	ordinal  func(n uint64) string
	year     func(n uint64) string
	// words holds the little words the rules say: point, minus, percent,
	// to, dot, at, slash, and, by, oclock, hundred, or, plus, equals, degrees...
	words map[string]string
	// months are the month names, January first; monthIndex maps lower-case
	// names and abbreviations to 1..12.
	months     []string
	monthIndex map[string]int
	currencies map[string]currency // by symbol or ISO code
	// scales maps a scale word or abbreviation (million, m, bn) to the word
	// read (plural form).
	scales map[string]string
	units  map[string]unit
	// abbrevs maps an abbreviation as written ("Dr.", "e.g.") to its reading.
	abbrevs map[string]string
	// acronymWords are all-capital words read as words (NASA), not spelled.
	acronymWords map[string]bool
	// date reads a date; the form tells how it was written ("md": month
	// name then day; "dm": day then month name; "num": numeric or ISO).
	date func(l *lang, day, month int, year string, form string, before string) string
	// time reads a clock time; ampm is "am", "pm" or "".
	time func(l *lang, h, m int, ampm string) string
	// money reads an amount of money: number text, optional scale word, currency.
	money func(l *lang, amount, scale string, c currency) string
	// rules are applied in order by normalize.
	rules []rule
}

// rule is one normalisation rule: every match of re is replaced by fn's
// result. fn gets the whole string and the submatch indexes, so it can
// look at the context; returning s[m[0]:m[1]] leaves the match unchanged.
type rule struct {
	name string
	re   *regexp.Regexp
	fn   func(l *lang, s string, m []int) string
	// need, if not empty, lists characters of which a string must contain
	// one for the rule to match; it lets apply skip most rules quickly.
	need string
}

const digitChars = "0123456789"

// ruleNeeds says which characters each rule's matches always contain.
var ruleNeeds = map[string]string{
	"url": ".:", "email": "@", "domain": ".", "telephone": digitChars, "date-iso": digitChars,
	"date-numeric": digitChars, "date-month-day": digitChars, "date-day-month": digitChars,
	"time-ampm": digitChars, "time-clock": digitChars, "time": digitChars, "currency": digitChars,
	"currency-after": digitChars, "percent": "%", "unit": digitChars, "range": digitChars,
	"ordinal": digitChars, "decade": digitChars, "year": digitChars, "fraction": digitChars + "½¼¾⅓⅔⅛",
	"number-sign": "#", "letter-digit": digitChars, "digit-letter": digitChars, "number": digitChars,
	"acronym-dotted": ".",
}

// withNeeds fills in the rules' need fields.
func withNeeds(l *lang) *lang {
	for i := range l.rules {
		l.rules[i].need = ruleNeeds[l.rules[i].name]
	}
	return l
}

// languages is the read-only table of supported languages, by base code.
var languages = map[string]*lang{
	"en":    withNeeds(newEnglish(false)),
	"en_us": withNeeds(newEnglish(false)),
	"en_gb": withNeeds(newEnglish(true)),
	"de":    withNeeds(newGerman()),
	"fr":    withNeeds(newFrench()),
}

// neutral is the language-neutral fallback: it cleans text and splits it,
// but leaves numbers to the engine, which reads them in its own language.
var neutral = newNeutral()

// lookup returns the lang for a locale like "en_US", "en-GB", "de_DE",
// "fr". English locales other than en_US, en_CA and en_PH read numeric
// dates day first.
func lookup(locale string) *lang {
	loc := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(locale), "-", "_"))
	if i := strings.IndexAny(loc, ".@"); i >= 0 {
		loc = loc[:i]
	}
	base, region, _ := strings.Cut(loc, "_")
	if base == "en" {
		switch region {
		case "", "us", "ca", "ph", "um", "as", "gu", "pr", "vi":
			return languages["en_us"]
		default:
			return languages["en_gb"]
		}
	}
	if l, ok := languages[base]; ok {
		return l
	}
	return neutral
}

// group returns the text of submatch i, or "" if it did not take part.
func group(s string, m []int, i int) string {
	if 2*i+1 >= len(m) || m[2*i] < 0 {
		return ""
	}
	return s[m[2*i]:m[2*i+1]]
}

// replaceAll replaces every match of re in s with fn's result.
func replaceAll(re *regexp.Regexp, s string, fn func(s string, m []int) string) string {
	ms := re.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + len(s)/4)
	last := 0
	for _, m := range ms {
		sb.WriteString(s[last:m[0]])
		sb.WriteString(fn(s, m))
		last = m[1]
	}
	sb.WriteString(s[last:])
	return sb.String()
}

// apply runs the language's rules over s, in order.
func (l *lang) apply(s string) string {
	for i := range l.rules {
		r := &l.rules[i]
		if r.need != "" && !strings.ContainsAny(s, r.need) {
			continue
		}
		s = replaceAll(r.re, s, func(s string, m []int) string { return r.fn(l, s, m) })
	}
	return s
}

// ruleNames lists the language's rule names, in order.
func (l *lang) ruleNames() []string {
	names := make([]string, len(l.rules))
	for i, r := range l.rules {
		names[i] = r.name
	}
	return names
}

// word returns the language's word for key, or key itself.
func (l *lang) word(key string) string {
	if w, ok := l.words[key]; ok {
		return w
	}
	return key
}

// reNeutralSymbol matches the symbols the neutral language removes.
var reNeutralSymbol = regexp.MustCompile(`[<>*^|\\_{}\[\]()“”«»„‘"` + "`" + `–—#~]`)
