package speak

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds rule constructors shared by the languages. Each takes
// the lang whose tables it reads and returns a rule; the language files
// list the rules they use, in order.

// number reads a number written with the language's separators: "40,000",
// "3.5", "-2". Integers over 15 digits, and integers with a leading zero,
// are read digit by digit.
func (l *lang) number(s string) string {
	var parts []string
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "−") {
		parts = append(parts, l.word("minus"))
		s = strings.TrimLeft(s, "-−")
	}
	intPart, frac, hasFrac := s, "", false
	if l.decimal != "" {
		intPart, frac, hasFrac = strings.Cut(s, l.decimal)
	}
	intPart = strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, intPart)
	switch {
	case intPart == "":
		parts = append(parts, l.cardinal(0))
	case len(intPart) > 15 || (len(intPart) > 1 && intPart[0] == '0'):
		parts = append(parts, l.digits(intPart))
	default:
		n, _ := strconv.ParseUint(intPart, 10, 64)
		parts = append(parts, l.cardinal(n))
	}
	if hasFrac && frac != "" {
		parts = append(parts, l.word("point"), l.digits(frac))
	}
	return strings.Join(parts, " ")
}

// digits reads each digit of s; other characters are skipped.
func (l *lang) digits(s string) string {
	var parts []string
	for _, r := range s {
		if r >= '0' && r <= '9' {
			parts = append(parts, l.cardinal(uint64(r-'0')))
		}
	}
	return strings.Join(parts, " ")
}

// atoi parses a short run of digits; it returns -1 if s is not one.
func atoi(s string) int {
	if s == "" || len(s) > 9 {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// pad surrounds a replacement with spaces, so it never glues to its
// neighbours; cleanup removes the extra spaces.
func pad(s string) string { return " " + s + " " }

// prevRune and nextRune return the runes around s[i:j] (0 at the ends).
func prevRune(s string, i int) rune {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	if r == utf8.RuneError {
		return 0
	}
	return r
}

func nextRune(s string, j int) rune {
	r, _ := utf8.DecodeRuneInString(s[j:])
	if r == utf8.RuneError {
		return 0
	}
	return r
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// numberContext reports whether s[i:j] stands alone as a number: not glued
// to another digit, separator-digit or letter.
func numberContext(s string, i, j int) bool {
	p, n := prevRune(s, i), nextRune(s, j)
	if unicode.IsDigit(p) || unicode.IsLetter(p) || unicode.IsDigit(n) {
		return false
	}
	if (p == '.' || p == ',') && i >= 2 && unicode.IsDigit(prevRune(s, i-1)) {
		return false
	}
	if (n == '.' || n == ',') && unicode.IsDigit(nextRune(s, j+1)) {
		return false
	}
	return true
}

// restIsEnd reports whether only closing punctuation and space follow.
func restIsEnd(s string) bool {
	return strings.TrimRight(s, " \t\"'”’»)]}") == ""
}

// --- addresses ---------------------------------------------------------------

var (
	reURL    = regexp.MustCompile(`(?i)\b(?:https?://|ftp://|www\.)[^\s<>"]*[^\s<>".,;:!?)\]'”’]`)
	reEmail  = regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b`)
	reDomain = regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:com|org|net|edu|gov|mil|int|io|co|uk|de|fr|eu|info|biz|app|dev|ai|tv|us|ca|au|nz|ie|es|it|nl|be|ch|at|jp|cn|in|ru|br|news|blog|online|site|tech|xyz)\b(?:/[^\s<>"]*[^\s<>".,;:!?)\]'”’])?`)
)

// speakAddress reads a URL, domain or e-mail address: "example dot com
// slash news". The scheme is not read, "www" is spelled.
func (l *lang) speakAddress(a string) string {
	low := strings.ToLower(a)
	for _, p := range []string{"https://", "http://", "ftp://", "mailto:"} {
		if strings.HasPrefix(low, p) {
			a = a[len(p):]
			break
		}
	}
	a = strings.TrimSuffix(a, "/")
	var out []string
	word := strings.Builder{}
	flush := func() {
		if word.Len() == 0 {
			return
		}
		w := word.String()
		word.Reset()
		switch {
		case strings.EqualFold(w, "www"):
			out = append(out, "w w w")
		case isDigits(w):
			out = append(out, l.digits(w))
		default:
			out = append(out, splitLetterDigits(l, w))
		}
	}
	for _, r := range a {
		switch r {
		case '.':
			flush()
			out = append(out, l.word("dot"))
		case '@':
			flush()
			out = append(out, l.word("at"))
		case '/':
			flush()
			out = append(out, l.word("slash"))
		case '-':
			flush()
			out = append(out, l.word("dash"))
		case '_':
			flush()
			out = append(out, l.word("underscore"))
		case ':':
			flush()
			out = append(out, l.word("colon"))
		case '?', '&', '=', '#', '%', '+', '~':
			flush()
		default:
			word.WriteRune(r)
		}
	}
	flush()
	return pad(strings.Join(out, " "))
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// splitLetterDigits reads a word of letters and digits, digits one by one
// ("abc123" → "abc one two three").
func splitLetterDigits(l *lang, w string) string {
	if !strings.ContainsAny(w, "0123456789") {
		return w
	}
	var out []string
	cur := strings.Builder{}
	digit := false
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		if digit {
			out = append(out, l.number(cur.String()))
		} else {
			out = append(out, cur.String())
		}
		cur.Reset()
	}
	for _, r := range w {
		d := r >= '0' && r <= '9'
		if d != digit {
			flush()
			digit = d
		}
		cur.WriteRune(r)
	}
	flush()
	return strings.Join(out, " ")
}

func urlRule() rule {
	return rule{name: "url", re: reURL, fn: func(l *lang, s string, m []int) string { return l.speakAddress(s[m[0]:m[1]]) }}
}

func emailRule() rule {
	return rule{name: "email", re: reEmail, fn: func(l *lang, s string, m []int) string { return l.speakAddress(s[m[0]:m[1]]) }}
}

func domainRule() rule {
	return rule{name: "domain", re: reDomain, fn: func(l *lang, s string, m []int) string {
		if nextRune(s, m[1]) == '@' || prevRune(s, m[0]) == '@' {
			return s[m[0]:m[1]]
		}
		return l.speakAddress(s[m[0]:m[1]])
	}}
}

// --- telephone ---------------------------------------------------------------

var rePhone = regexp.MustCompile(`(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)\s?\d{3,4}[\s.-]\d{3,4}|\b\d{3}[.-]\d{3}[.-]\d{4}\b|\b\d{3}-\d{4}\b)|\+\d{1,3}(?:[\s.-]\d{2,4}){2,5}\b`)

// speakTelephone reads a telephone number digit by digit, with a comma
// between groups.
func (l *lang) speakTelephone(t string) string {
	var groups []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			groups = append(groups, l.digits(cur.String()))
			cur.Reset()
		}
	}
	plus := false
	for _, r := range t {
		switch {
		case r >= '0' && r <= '9':
			cur.WriteRune(r)
		case r == '+':
			plus = true
		default:
			flush()
		}
	}
	flush()
	out := strings.Join(groups, ", ")
	if plus {
		out = l.word("plus") + " " + out
	}
	return pad(out)
}

func phoneRule() rule {
	return rule{name: "telephone", re: rePhone, fn: func(l *lang, s string, m []int) string {
		if unicode.IsDigit(prevRune(s, m[0])) || unicode.IsDigit(nextRune(s, m[1])) {
			return s[m[0]:m[1]]
		}
		return l.speakTelephone(s[m[0]:m[1]])
	}}
}

// --- dates -------------------------------------------------------------------

var (
	reISODate     = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	reNumericDate = regexp.MustCompile(`\b(\d{1,2})([/.])(\d{1,2})([/.])(\d{4}|\d{2})\b`)
)

func validDate(d, m int) bool { return m >= 1 && m <= 12 && d >= 1 && d <= 31 }

func isoDateRule() rule {
	return rule{name: "date-iso", re: reISODate, fn: func(l *lang, s string, m []int) string {
		y, mo, d := group(s, m, 1), atoi(group(s, m, 2)), atoi(group(s, m, 3))
		if !validDate(d, mo) || !numberContext(s, m[0], m[1]) {
			return s[m[0]:m[1]]
		}
		return pad(l.date(l, d, mo, y, "num", s[:m[0]]))
	}}
}

func numericDateRule() rule {
	return rule{name: "date-numeric", re: reNumericDate, fn: func(l *lang, s string, m []int) string {
		a, b, y := atoi(group(s, m, 1)), atoi(group(s, m, 3)), group(s, m, 5)
		if group(s, m, 2) != group(s, m, 4) || !numberContext(s, m[0], m[1]) {
			return s[m[0]:m[1]]
		}
		if group(s, m, 2) == "." && !l.dayFirst {
			return s[m[0]:m[1]]
		}
		d, mo := b, a
		if l.dayFirst {
			d, mo = a, b
		}
		if !validDate(d, mo) {
			d, mo = mo, d // the other order is the only valid one
			if !validDate(d, mo) {
				return s[m[0]:m[1]]
			}
		}
		if len(y) == 2 {
			y = "20" + y
			if atoi(y) > 2060 {
				y = "19" + y[2:]
			}
		}
		return pad(l.date(l, d, mo, y, "num", s[:m[0]]))
	}}
}

// monthAlternation returns a regular expression alternation of the
// language's month names and abbreviations, longest first.
func (l *lang) monthAlternation() string {
	names := make([]string, 0, len(l.monthIndex))
	for k := range l.monthIndex {
		names = append(names, regexp.QuoteMeta(k))
	}
	slices.SortFunc(names, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return strings.Join(names, "|")
}

// monthOf returns the month number of a name, or 0.
func (l *lang) monthOf(name string) int {
	return l.monthIndex[strings.ToLower(strings.TrimSuffix(name, "."))]
}

// --- numbers -----------------------------------------------------------------

// numberRule reads the remaining numbers, with the language's separators.
func numberRule(l *lang) rule {
	return rule{name: "number", re: regexp.MustCompile(`(^|[\s(\[])[-−](` + l.num + `)|` + l.num), fn: func(l *lang, s string, m []int) string {
		if m[2] >= 0 {
			return group(s, m, 1) + pad(l.word("minus")+" "+l.number(group(s, m, 2)))
		}
		return pad(l.number(s[m[0]:m[1]]))
	}}
}

// yearRule reads a four-digit number from 1100 to 2099 that stands alone
// as a year.
func yearRule() rule {
	return rule{name: "year", re: regexp.MustCompile(`\b(?:1[1-9]\d\d|20\d\d)\b`), fn: func(l *lang, s string, m []int) string {
		if !numberContext(s, m[0], m[1]) {
			return s[m[0]:m[1]]
		}
		n, _ := strconv.ParseUint(s[m[0]:m[1]], 10, 64)
		return pad(l.year(n))
	}}
}

// rangeRule reads "10–15" and "10-15" as "ten to fifteen"; years in a range
// are read as years.
func rangeRule(l *lang) rule {
	return rule{name: "range", re: regexp.MustCompile(`(` + l.num + `)\s?[–—-]\s?(` + l.num + `)`), fn: func(l *lang, s string, m []int) string {
		p := prevRune(s, m[0])
		if p == '-' || p == '/' || p == '+' || nextRune(s, m[1]) == '-' || !numberContext(s, m[0], m[1]) || unicode.IsLetter(nextRune(s, m[1])) {
			return s[m[0]:m[1]]
		}
		a, b := group(s, m, 1), group(s, m, 2)
		read := func(x string) string {
			if len(x) == 4 && isDigits(x) && x >= "1100" && x <= "2099" && len(a) == 4 {
				n, _ := strconv.ParseUint(x, 10, 64)
				return l.year(n)
			}
			return l.number(x)
		}
		if len(a) == 4 && len(b) == 2 && isDigits(a) && isDigits(b) && a >= "1100" && a <= "2099" {
			b = a[:2] + b // 1990-95
		}
		return pad(read(a) + " " + l.word("to") + " " + read(b))
	}}
}

// percentRule reads "65%" and "10-15%".
func percentRule(l *lang) rule {
	return rule{name: "percent", re: regexp.MustCompile(`(?:(` + l.num + `)\s?(?:[–-]|to|bis|à)\s?)?([-−]?` + l.num + `)\s?%`), fn: func(l *lang, s string, m []int) string {
		out := l.number(group(s, m, 2)) + " " + l.word("percent")
		if a := group(s, m, 1); a != "" {
			out = l.number(a) + " " + l.word("to") + " " + out
		}
		return pad(out)
	}}
}

// currencyRules read amounts of money written with a symbol or code before
// ("$3.5 million", "£2.4m", "€40", "USD 10") or after ("40 €", "3,50 EUR").
func currencyRules(l *lang) []rule {
	syms := []string{}
	for k := range l.currencies {
		syms = append(syms, regexp.QuoteMeta(k))
	}
	slices.SortFunc(syms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	sym := `(` + strings.Join(syms, "|") + `)`
	scales := []string{}
	for k := range l.scales {
		scales = append(scales, regexp.QuoteMeta(k))
	}
	slices.SortFunc(scales, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	scale := `(?:\s?(` + strings.Join(scales, "|") + `))?`
	prefix := rule{name: "currency", re: regexp.MustCompile(sym + `\s?(` + l.num + `)` + scale), fn: func(l *lang, s string, m []int) string {
		c := l.currencies[group(s, m, 1)]
		sc := group(s, m, 3)
		end := m[1]
		if sc != "" && !strings.HasSuffix(sc, ".") && isWordRune(nextRune(s, end)) {
			// "$5 manhattans": not a scale after all.
			return l.money(l, group(s, m, 2), "", c) + " " + s[m[6]:m[7]]
		}
		if isLetterRune(prevRune(s, m[0])) && len(group(s, m, 1)) > 1 {
			return s[m[0]:m[1]]
		}
		return pad(l.money(l, group(s, m, 2), l.scales[sc], c))
	}}
	suffix := rule{name: "currency-after", re: regexp.MustCompile(`(` + l.num + `)` + scale + `\s?` + sym), fn: func(l *lang, s string, m []int) string {
		c := l.currencies[group(s, m, 3)]
		sc := group(s, m, 2)
		if isLetterRune(nextRune(s, m[1])) || (sc != "" && !strings.HasSuffix(sc, ".") && isLetterRune(nextRune(s, m[5]))) {
			return s[m[0]:m[1]]
		}
		return pad(l.money(l, group(s, m, 1), l.scales[sc], c))
	}}
	return []rule{prefix, suffix}
}

func isLetterRune(r rune) bool { return unicode.IsLetter(r) }

// unitRule reads a number followed by a unit of measure: "5 km", "20°C".
func unitRule(l *lang) rule {
	keys := []string{}
	for k := range l.units {
		keys = append(keys, regexp.QuoteMeta(k))
	}
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return rule{name: "unit", re: regexp.MustCompile(`(` + l.num + `)\s?(` + strings.Join(keys, "|") + `)`), fn: func(l *lang, s string, m []int) string {
		if isWordRune(nextRune(s, m[1])) || !numberContext(s, m[0], m[3]) {
			return s[m[0]:m[1]]
		}
		u := l.units[group(s, m, 2)]
		n := group(s, m, 1)
		name := u.many
		if n == "1" {
			name = u.one
		}
		return pad(l.number(n) + " " + name)
	}}
}

// abbreviationRule expands the language's abbreviations. special, if not
// nil, may choose another reading from the context (St. as Saint or
// Street); it returns "" to keep the table's reading.
func abbreviationRule(l *lang, special func(abbr, before, after string) (string, bool)) rule {
	keys := []string{}
	for k := range l.abbrevs {
		keys = append(keys, regexp.QuoteMeta(k))
	}
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return rule{name: "abbreviation", re: regexp.MustCompile(`\b(?:` + strings.Join(keys, "|") + `)`), fn: func(l *lang, s string, m []int) string {
		abbr := s[m[0]:m[1]]
		if !strings.HasSuffix(abbr, ".") {
			if n := nextRune(s, m[1]); isWordRune(n) || n == '.' || n == '\'' || n == '’' {
				return abbr
			}
		}
		if p := prevRune(s, m[0]); p == '.' || p == '@' || p == '/' {
			return abbr
		}
		say := l.abbrevs[abbr]
		if special != nil {
			alt, ok := special(abbr, s[:m[0]], s[m[1]:])
			if !ok {
				return abbr
			}
			if alt != "" {
				say = alt
			}
		}
		if strings.HasSuffix(abbr, ".") && restIsEnd(s[m[1]:]) {
			say += "."
		}
		return " " + say + " "
	}}
}

// dottedAcronymRule spells acronyms written with dots: "U.S." → "U S".
func dottedAcronymRule() rule {
	return rule{name: "acronym-dotted", re: regexp.MustCompile(`\b(?:\pL\.){2,}(?:\pL\b)?`), fn: func(l *lang, s string, m []int) string {
		a := s[m[0]:m[1]]
		var letters []string
		for _, r := range a {
			if r != '.' {
				letters = append(letters, strings.ToUpper(string(r)))
			}
		}
		out := strings.Join(letters, " ")
		if strings.HasSuffix(a, ".") && restIsEnd(s[m[1]:]) {
			out += "."
		}
		return " " + out + " "
	}}
}

// letterDigitRules part letters from digits: "B2B" → "B 2 B", "mp3" → "mp 3".
func letterDigitRules() []rule {
	return []rule{
		{name: "letter-digit", re: regexp.MustCompile(`(\pL)(\d)`), fn: func(l *lang, s string, m []int) string {
			return group(s, m, 1) + " " + group(s, m, 2)
		}},
		{name: "digit-letter", re: regexp.MustCompile(`(\d)(\pL)`), fn: func(l *lang, s string, m []int) string {
			return group(s, m, 1) + " " + group(s, m, 2)
		}},
	}
}

// numberSignRule reads "#1" as "number one".
func numberSignRule() rule {
	return rule{name: "number-sign", re: regexp.MustCompile(`#\s?(\d)`), fn: func(l *lang, s string, m []int) string {
		return " " + l.word("number") + " " + group(s, m, 1)
	}}
}

// symbolRule reads or removes symbols the engines read badly.
func symbolRule() rule {
	return rule{name: "symbol", re: regexp.MustCompile(`\s[-–—]+\s|\pL[–—]\pL|\pL/\pL|[&+=@#%°×~≈<>→←§©®™*^|\\_{}\[\]()“”«»„‘’"'` + "`" + `…–—/$£€¥₹¢]`), fn: func(l *lang, s string, m []int) string {
		t := s[m[0]:m[1]]
		switch {
		case strings.TrimSpace(t) != t:
			return ", "
		case utf8.RuneCountInString(t) == 3:
			r := []rune(t)
			switch r[1] {
			case '/':
				left := lastWord(s[:m[0]+utf8.RuneLen(r[0])])
				right := firstWord(s[m[1]-utf8.RuneLen(r[2]):])
				if utf8.RuneCountInString(left) < 2 || utf8.RuneCountInString(right) < 2 || strings.EqualFold(left, "and") {
					return string(r[0]) + " " + string(r[2])
				}
				return string(r[0]) + " " + l.word("or") + " " + string(r[2])
			case '–':
				return string(r[0]) + " " + l.word("to") + " " + string(r[2])
			default:
				return string(r[0]) + ", " + string(r[2])
			}
		}
		switch t {
		case "&":
			return pad(l.word("and"))
		case "+":
			return pad(l.word("plus"))
		case "=":
			return pad(l.word("equals"))
		case "@":
			return pad(l.word("at"))
		case "#":
			if isWordRune(nextRune(s, m[1])) {
				return " " + l.word("hashtag") + " "
			}
			return " "
		case "%":
			return pad(l.word("percent"))
		case "°":
			return pad(l.word("degrees"))
		case "×":
			return pad(l.word("times"))
		case "~", "≈":
			return pad(l.word("about"))
		case "<":
			return pad(l.word("less than"))
		case ">":
			return pad(l.word("greater than"))
		case "→":
			return pad(l.word("to"))
		case "§":
			return pad(l.word("section"))
		case "(", ")", "[", "]", "{", "}", "–", "—":
			return ", "
		case "…":
			return "..."
		case "'", "’":
			if isLetterRune(prevRune(s, m[0])) && isLetterRune(nextRune(s, m[1])) {
				return "'"
			}
			return " "
		case "$", "£", "€", "¥", "₹", "¢":
			return " "
		}
		return " "
	}}
}

// lastWord and firstWord return the word that ends or starts s.
func lastWord(s string) string {
	i := strings.LastIndexFunc(s, func(r rune) bool { return !isWordRune(r) })
	return s[i+1:]
}

func firstWord(s string) string {
	if i := strings.IndexFunc(s, func(r rune) bool { return !isWordRune(r) }); i >= 0 {
		return s[:i]
	}
	return s
}

// --- cleanup -----------------------------------------------------------------

var (
	reSpaces      = regexp.MustCompile(`\s+`)
	reSpaceBefore = regexp.MustCompile(`\s+([,.;:!?])`)
	rePunctRun    = regexp.MustCompile(`([,;:])(?:\s*[,;:])+`)
	reCommaStop   = regexp.MustCompile(`[,;:]\s*([.!?])`)
	reStopComma   = regexp.MustCompile(`([.!?])\s*[,;:]`)
	reLeadPunct   = regexp.MustCompile(`^[\s,.;:!?\-]+`)
	reHyphenSpace = regexp.MustCompile(`([^\s,.;:!?])- `)
	reSpaceHyphen = regexp.MustCompile(` -([^\s,.;:!?])`)
)

// cleanup removes what no engine should see: markup characters, other
// symbols, repeated punctuation and extra white space.
func cleanup(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '<' || r == '>':
			return ' '
		case r == '\'' || r == '-' || r == '.' || r == ',' || r == ';' || r == ':' || r == '!' || r == '?':
			return r
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			return r
		case unicode.IsSpace(r):
			return ' '
		case r == '%' || r == '&' || r == '+' || r == '€' || r == '$' || r == '£' || r == '@' || r == '/':
			return r // left only by the neutral language, for its engine
		}
		return ' '
	}, s)
	s = reSpaces.ReplaceAllString(s, " ")
	s = reSpaceBefore.ReplaceAllString(s, "$1")
	s = rePunctRun.ReplaceAllString(s, "$1")
	s = reCommaStop.ReplaceAllString(s, "$1")
	s = reStopComma.ReplaceAllString(s, "$1")
	s = reLeadPunct.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, " - ", ", ")
	s = reHyphenSpace.ReplaceAllString(s, "$1 ")
	s = reSpaceHyphen.ReplaceAllString(s, " $1")
	return strings.TrimRight(s, " ,;:-")
}
