package speak

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/narrator/narrator/internal/article"
)

// Role says which project voice reads a unit when it names no voice of its own.
type Role int

// The roles.
const (
	RoleTitle Role = iota // read in the project's title voice
	RoleBody              // read in the project's body voice
)

// Unit is one independent piece of synthesis: a sentence, or part of a long one.
type Unit struct {
	Role Role
	// Voice is a voice name from a data-voice / data-speechkit-voice
	// attribute (or SSML <voice name>), "" for the role's voice.
	Voice string
	// Text is plain text for the engine: normalised words, never markup or
	// SSML, at most MaxUnitChars bytes. Spelled acronyms and say-as
	// characters are already written out as separate letters.
	Text string
	// Pause is the silence to insert after this unit.
	Pause time.Duration
	// Rate is the speaking-rate factor, 1 for normal (from SSML prosody rate).
	Rate float64
	// Spell is always false: spelling is written out in Text instead, so
	// every engine reads it the same way.
	Spell bool
	// Source is the sentence as written in the article, for transcripts:
	// markup removed and white space collapsed, but not normalised and
	// without pronunciation rules (say-as and rule phrases appear as
	// written). The author's unit reads "By <author>" in the language. A
	// sentence split into several units for length has its Source on the
	// first; the later pieces have an empty Source, as they continue it.
	Source string
	// Block numbers the article's blocks in the order they are read, from
	// 0: the title, the author line, each heading and paragraph. The units
	// of one block share its number.
	Block int
	// Heading reports that the unit reads one of the article's headings.
	Heading bool
}

// Rule is a project pronunciation rule: whenever Phrase occurs as a whole
// word/phrase (case-insensitive), say Say instead.
type Rule struct{ Phrase, Say string }

// MaxUnitChars bounds the length of a unit's Text, in bytes of UTF-8 (so
// also in characters). Engines slow down and misbehave on very long
// inputs; 300 bytes is two or three lines of text, about 20 seconds of
// speech.
const MaxUnitChars = 300

// The pauses after units.
const (
	PauseTitle     = 700 * time.Millisecond // after the title and the byline
	PauseHeading   = 700 * time.Millisecond // after a heading in the body
	PauseParagraph = 600 * time.Millisecond // after a paragraph, list item or quote
	PauseSentence  = 250 * time.Millisecond // between sentences of a paragraph
	PauseClause    = 120 * time.Millisecond // inside a long sentence split at a comma
	PauseWord      = 50 * time.Millisecond  // inside a long sentence split between words
)

// Normalize returns text as words an engine reads well in language: the
// language's rules (numbers, money, dates, times, abbreviations, acronyms,
// units, addresses, symbols) are applied and markup characters removed.
// Unknown languages get only the language-neutral clean-up.
func Normalize(language, text string) string {
	return cleanup(lookup(language).apply(sanitize(text)))
}

// sanitize removes control and private-use characters (which the
// normaliser uses internally) and decodes nothing else.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, " ")
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0xE000 && r <= 0xF8FF:
			return -1
		case r == '\u00A0' || r == '\u202F' || r == '\u2009':
			return r // kept: French groups digits with them
		case r == '\u00AD' || r == '\u200B' || r == '\u200C' || r == '\u200D' || r == '\uFEFF':
			return -1
		case unicode.IsControl(r) || unicode.IsSpace(r):
			return ' '
		}
		return r
	}, s)
}

// Script returns the units of an article in reading order: the title
// (RoleTitle), then "By <author>." (RoleTitle) if author is not empty,
// then the body (RoleBody). The body may be HTML, Markdown, plain text or
// SSML (see package article). If the body opens with a heading (or, in
// plain text, a first paragraph) equal to the title, that heading is not
// read twice. language is a locale like "en_US", "en_GB", "de_DE",
// "fr_FR"; unknown languages fall back to language-neutral handling.
// Pronunciation rules (nil for none) apply before normalisation, to whole
// words and phrases, case-insensitively, longest phrase first.
func Script(language, title, author, body string, rules *Rules) []Unit {
	s := newScripter(language, rules)
	title = plainTitle(title)
	if title != "" {
		s.block(RoleTitle, "", []article.Span{{Kind: article.SpanText, Text: title, Rate: 1}}, PauseTitle)
		s.endBlock(false)
	}
	if a := plainTitle(author); a != "" {
		s.block(RoleTitle, "", []article.Span{{Kind: article.SpanText, Text: s.l.word("by") + " " + a, Rate: 1}}, PauseTitle)
		s.endBlock(false)
	}
	doc := article.Parse(body)
	blocks := doc.Blocks
	if title != "" && len(blocks) > 0 && (blocks[0].Kind == article.Heading || doc.Format == article.FormatPlain) &&
		sameWords(blocks[0].Text(), title) {
		blocks = blocks[1:]
	}
	for _, b := range blocks {
		pause := PauseParagraph
		if b.Kind == article.Heading {
			pause = PauseHeading
		}
		s.block(RoleBody, b.Voice, b.Spans, pause)
		s.endBlock(b.Kind == article.Heading)
	}
	return s.units
}

// endBlock numbers the units of the block just read (those after the
// previous block's), and marks them as a heading's.
func (s *scripter) endBlock(heading bool) {
	if s.blockFrom == len(s.units) {
		return // a block without words
	}
	for i := s.blockFrom; i < len(s.units); i++ {
		s.units[i].Block, s.units[i].Heading = s.blocks, heading
	}
	s.blocks++
	s.blockFrom = len(s.units)
}

// plainTitle returns a title or author as plain text.
func plainTitle(t string) string {
	if article.HasHTML(t) || strings.ContainsRune(t, '&') {
		var parts []string
		for _, b := range article.Parse("<p>" + t + "</p>").Blocks {
			parts = append(parts, b.Text())
		}
		t = strings.Join(parts, " ")
	}
	return strings.Join(strings.Fields(html.UnescapeString(t)), " ")
}

// sameWords reports whether a and b have the same words, ignoring case and
// punctuation.
func sameWords(a, b string) bool {
	f := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) }), " ")
	}
	return f(a) == f(b)
}

// scripter turns blocks into units.
type scripter struct {
	l         *lang
	rules     map[string]string // lower-case phrase → say; read only
	rulesRe   *regexp.Regexp
	units     []Unit
	protected []string // texts hidden behind placeholders
	// written holds, by placeholder, the text as written that it stands
	// for, and whether that text touched a neighbour (no white space) before
	// and after it.
	written []writtenText
	// blocks is how many blocks endBlock numbered; their units end
	// before blockFrom.
	blocks, blockFrom int
}

// writtenText is what a placeholder stands for in the article.
type writtenText struct {
	text                  string
	glueBefore, glueAfter bool
}

func newScripter(language string, rules *Rules) *scripter {
	s := &scripter{l: lookup(language)}
	if rules != nil {
		s.rules, s.rulesRe = rules.says, rules.re
	}
	return s
}

// placeholder hides text from the normaliser: it returns a token of
// private-use runes that no rule touches, replaced by text at the end;
// written is what the article showed in its place.
func (s *scripter) placeholder(text, written string) string {
	i := len(s.protected)
	s.protected = append(s.protected, text)
	s.written = append(s.written, writtenText{text: written})
	var sb strings.Builder
	sb.WriteString(" \uE000")
	for {
		sb.WriteRune(rune(0xE100 + i%256))
		i /= 256
		if i == 0 {
			break
		}
	}
	sb.WriteString("\uE001 ")
	return sb.String()
}

var rePlaceholder = regexp.MustCompile("\uE000([\uE100-\uE1FF]+)\uE001")

// placeholderIndex returns the index of a placeholder token.
func placeholderIndex(m string) int {
	m = strings.TrimSpace(m)
	i, mult := 0, 1
	for _, r := range strings.TrimSuffix(strings.TrimPrefix(m, "\uE000"), "\uE001") {
		i += int(r-0xE100) * mult
		mult *= 256
	}
	return i
}

// expand replaces placeholders with their texts.
func (s *scripter) expand(t string) string {
	if !strings.ContainsRune(t, '\uE000') {
		return t
	}
	return rePlaceholder.ReplaceAllStringFunc(t, func(m string) string {
		if i := placeholderIndex(m); i < len(s.protected) {
			return " " + s.protected[i] + " "
		}
		return " "
	})
}

// markGlue records, for the placeholders in t (a segment's text before
// white space is collapsed), whether the article had white space around
// the text each stands for, so that source can undo their padding.
func (s *scripter) markGlue(t string) {
	for _, m := range rePlaceholder.FindAllStringIndex(t, -1) {
		i := placeholderIndex(t[m[0]:m[1]])
		if i >= len(s.written) {
			continue
		}
		// A placeholder is padded with one space on each side.
		if m[0] >= 2 {
			r, _ := utf8.DecodeLastRuneInString(t[:m[0]-1])
			s.written[i].glueBefore = !unicode.IsSpace(r)
		}
		if m[1]+1 < len(t) {
			r, _ := utf8.DecodeRuneInString(t[m[1]+1:])
			s.written[i].glueAfter = !unicode.IsSpace(r)
		}
	}
}

var (
	rePaddedPlaceholder = regexp.MustCompile(" ?\uE000[\uE100-\uE1FF]+\uE001 ?")
	// reSpacedStop is a period or comma after a space that markup put there
	// (SSML keeps the text after a say-as apart from it).
	reSpacedStop = regexp.MustCompile(` ([.,])( |$)`)
)

// source returns a sentence (white space collapsed, placeholders in it) as
// written in the article.
func (s *scripter) source(sent string) string {
	if strings.ContainsRune(sent, '\uE000') {
		sent = rePaddedPlaceholder.ReplaceAllStringFunc(sent, func(m string) string {
			i := placeholderIndex(m)
			if i >= len(s.written) {
				return " "
			}
			w := s.written[i]
			out := w.text
			if strings.HasPrefix(m, " ") && !w.glueBefore {
				out = " " + out
			}
			if strings.HasSuffix(m, " ") && !w.glueAfter {
				out += " "
			}
			return out
		})
	}
	// Private-use runes left are the article's own, which sanitizeKeep
	// could not tell from placeholders.
	sent = strings.Map(func(r rune) rune {
		if r >= 0xE000 && r <= 0xF8FF {
			return ' '
		}
		return r
	}, sent)
	return reSpacedStop.ReplaceAllString(strings.Join(strings.Fields(sent), " "), "$1$2")
}

// applyRules replaces pronunciation-rule phrases with placeholders.
func (s *scripter) applyRules(t string) string {
	if s.rulesRe == nil {
		return t
	}
	return replaceAll(s.rulesRe, t, func(t string, m []int) string {
		match := t[m[0]:m[1]]
		first, _ := utf8.DecodeRuneInString(match)
		last, _ := utf8.DecodeLastRuneInString(match)
		if (isWordRune(first) && isWordRune(prevRune(t, m[0]))) || (isWordRune(last) && isWordRune(nextRune(t, m[1]))) {
			return match
		}
		key := strings.ToLower(strings.Join(strings.Fields(match), " "))
		return s.placeholder(cleanup(sanitize(s.rules[key])), match)
	})
}

// segment is a run of a block's text read with one rate, up to a break.
type segment struct {
	sb   strings.Builder
	rate float64
}

// block appends the units of one block; pause follows its last unit.
func (s *scripter) block(role Role, voice string, spans []article.Span, pause time.Duration) {
	seg := &segment{rate: 1}
	flush := func(p time.Duration, end bool) {
		s.segment(role, voice, seg, p, end)
		seg.sb.Reset()
	}
	for _, sp := range spans {
		switch sp.Kind {
		case article.SpanText:
			rate := sp.Rate
			if rate <= 0 {
				rate = 1
			}
			if rate != seg.rate && strings.TrimSpace(seg.sb.String()) != "" {
				flush(0, false)
			}
			seg.rate = rate
			if sp.SayAs != "" && sp.SayAs != "text" {
				seg.sb.WriteString(s.placeholder(cleanup(s.sayAs(sp.SayAs, sp.Format, sp.Text)), sp.Text))
			} else {
				seg.sb.WriteString(sp.Text)
			}
		case article.SpanBreak:
			flush(sp.Pause, false)
		case article.SpanSentenceEnd:
			flush(PauseSentence, true)
		}
	}
	flush(pause, true)
}

// segment appends the units of one segment. pause follows the last unit;
// end says the segment ends a sentence, so a final period is added if it
// has none. An empty segment lengthens the previous unit's pause instead.
func (s *scripter) segment(role Role, voice string, seg *segment, pause time.Duration, end bool) {
	text := s.applyRules(sanitizeKeep(seg.sb.String()))
	s.markGlue(text)
	n0 := len(s.units)
	sents := sentences(s.l, text)
	for i, sent := range sents {
		norm := cleanup(s.expand(s.l.apply(sent)))
		if !hasWord(norm) {
			continue
		}
		src := s.source(sent)
		for _, piece := range splitLong(norm, MaxUnitChars-1) {
			if !hasWord(piece) {
				continue
			}
			p := PauseWord
			if strings.ContainsAny(piece[len(piece)-1:], ",;:") {
				p = PauseClause
			}
			s.units = append(s.units, Unit{Role: role, Voice: voice, Text: piece, Pause: p, Rate: seg.rate, Source: src})
			src = ""
		}
		if n := len(s.units); n > n0 {
			s.units[n-1].Pause = PauseSentence
			if end || i < len(sents)-1 {
				// A break inside a sentence gets no final period.
				s.units[n-1].Text = finish(s.units[n-1].Text)
			}
		}
	}
	n := len(s.units)
	switch {
	case n > n0:
		s.units[n-1].Pause = pause
	case n > 0:
		s.units[n-1].Pause = max(s.units[n-1].Pause, pause)
	}
}

// finish gives a sentence final punctuation, so that engines end it with a
// falling tone.
func finish(t string) string {
	t = strings.TrimRight(t, ",;: -")
	if t == "" {
		return t
	}
	if r, _ := utf8.DecodeLastRuneInString(t); r == '.' || r == '!' || r == '?' {
		return t
	}
	return t + "."
}

// sanitizeKeep is sanitize that keeps placeholders.
func sanitizeKeep(t string) string {
	t = strings.ToValidUTF8(t, " ")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\uE000' || r == '\uE001' || (r >= 0xE100 && r <= 0xE1FF):
			return r
		case r >= 0xE000 && r <= 0xF8FF:
			return -1
		case r == '\u00AD' || r == '\u200B' || r == '\u200C' || r == '\u200D' || r == '\uFEFF':
			return -1
		case r == '\u00A0' || r == '\u202F' || r == '\u2009':
			return r
		case unicode.IsControl(r) || unicode.IsSpace(r):
			return ' '
		}
		return r
	}, t)
}

func hasWord(t string) bool {
	for _, r := range t {
		if isWordRune(r) {
			return true
		}
	}
	return false
}

// sayAs renders an SSML say-as span as words.
func (s *scripter) sayAs(interpret, format, text string) string {
	l := s.l
	text = strings.TrimSpace(sanitize(text))
	switch interpret {
	case "characters", "spell-out", "letters", "verbatim", "spell":
		var parts []string
		for _, r := range text {
			switch {
			case r >= '0' && r <= '9':
				parts = append(parts, l.cardinal(uint64(r-'0')))
			case unicode.IsLetter(r):
				parts = append(parts, strings.ToUpper(string(r)))
			}
		}
		return strings.Join(parts, " ")
	case "cardinal", "number":
		if m := regexp.MustCompile(`^[-−]?` + l.num + `$`).FindString(strings.ReplaceAll(text, " ", "")); m != "" {
			return l.number(m)
		}
	case "ordinal":
		if n, err := strconv.ParseUint(strings.Trim(strings.Map(keepDigits, text), " "), 10, 64); err == nil {
			return l.ordinal(n)
		}
	case "digits":
		return l.digits(text)
	case "telephone":
		return l.speakTelephone(text)
	case "date":
		if d := s.date(format, text); d != "" {
			return d
		}
	}
	return Normalize(l.code, text)
}

func keepDigits(r rune) rune {
	if r >= '0' && r <= '9' {
		return r
	}
	return -1
}

// date reads a say-as date in the given format (mdy, dmy, ymd, md, dm,
// my, ym, y; default ymd for ISO, else the locale's order).
func (s *scripter) date(format, text string) string {
	l := s.l
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == '/' || r == '-' || r == '.' || r == ' ' || r == ',' })
	if format == "" {
		switch {
		case len(fields) == 3 && len(fields[0]) == 4:
			format = "ymd"
		case len(fields) == 3 && l.dayFirst:
			format = "dmy"
		case len(fields) == 3:
			format = "mdy"
		case len(fields) == 1:
			format = "y"
		default:
			return ""
		}
	}
	if len(fields) != len(format) {
		return ""
	}
	d, m, y := 0, 0, ""
	for i, c := range format {
		f := fields[i]
		switch c {
		case 'd':
			d = atoi(f)
		case 'm':
			m = atoi(f)
			if m < 0 {
				m = l.monthOf(f)
			}
		case 'y':
			if !isDigits(f) {
				return ""
			}
			y = f
		default:
			return ""
		}
	}
	switch {
	case d > 0 && m > 0 && validDate(d, m):
		return l.date(l, d, m, y, "num", "")
	case d == 0 && m >= 1 && m <= 12:
		out := l.months[m-1]
		if y != "" {
			n, _ := strconv.ParseUint(y, 10, 64)
			out += " " + l.year(n)
		}
		return out
	case d == 0 && m == 0 && y != "":
		n, _ := strconv.ParseUint(y, 10, 64)
		return l.year(n)
	}
	return ""
}
