package article

import (
	"html"
	"regexp"
	"strings"
)

var (
	reMDHeading   = regexp.MustCompile(`^\s{0,3}(#{1,6})(?:\s+|$)(.*?)(?:\s+#+)?\s*$`)
	reMDList      = regexp.MustCompile(`^\s*(?:[-*+•]|\d{1,3}[.)])\s+(.*)$`)
	reMDQuote     = regexp.MustCompile(`^\s{0,3}>\s?(.*)$`)
	reMDFence     = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	reMDRule      = regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
	reMDSetext    = regexp.MustCompile(`^\s{0,3}(?:=+|-+)\s*$`)
	reMDLinkDef   = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*\S+.*$`)
	reMDTableRule = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$`)

	reMDImage    = regexp.MustCompile(`!\[([^\]\n]*)\]\([^)\n]*\)`)
	reMDLink     = regexp.MustCompile(`\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])`)
	reMDAutolink = regexp.MustCompile(`<((?:https?://|mailto:)[^>\s]+)>`)
	reMDCode     = regexp.MustCompile("`+([^`\n]*)`+")
	reMDStrong   = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	reMDEmStar   = regexp.MustCompile(`\*(\S[^*\n]*)\*`)
	reMDEmUnder  = regexp.MustCompile(`(^|[^\pL\pN_])_(\S[^_\n]*)_($|[^\pL\pN_])`)
	reMDStrike   = regexp.MustCompile(`~~([^~\n]+)~~`)
	reMDEscape   = regexp.MustCompile("\\\\([\\\\`*_{}\\[\\]()#+\\-.!>|])")
)

// parseMarkdown splits text into blocks at blank lines and, when md is
// true, reads Markdown block and inline syntax. Code blocks are not read.
func parseMarkdown(body string, md bool) []Block {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	lines := strings.Split(body, "\n")
	var (
		blocks []Block
		para   []string
		kind   Kind
		fence  string
	)
	flush := func() {
		if len(para) == 0 {
			return
		}
		for _, t := range splitLines(para) {
			t = strings.TrimSpace(t)
			if md {
				t = inlineMarkdown(t)
			}
			if t != "" {
				blocks = append(blocks, Block{Kind: kind, Spans: []Span{{Kind: SpanText, Text: t, Rate: 1}}})
			}
		}
		para, kind = nil, Paragraph
	}
	add := func(k Kind, level int, t string) {
		flush()
		if md {
			t = inlineMarkdown(t)
		}
		if strings.TrimSpace(t) != "" {
			blocks = append(blocks, Block{Kind: k, Level: level, Spans: []Span{{Kind: SpanText, Text: strings.TrimSpace(t), Rate: 1}}})
		}
	}
	for _, line := range lines {
		if !md {
			if strings.TrimSpace(line) == "" {
				flush()
			} else {
				para = append(para, line)
			}
			continue
		}
		if fence != "" {
			if strings.HasPrefix(strings.TrimSpace(line), fence) {
				fence = ""
			}
			continue
		}
		if m := reMDFence.FindStringSubmatch(line); m != nil {
			flush()
			fence = m[1]
			continue
		}
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case reMDRule.MatchString(line) && len(para) == 0:
			flush()
		case reMDSetext.MatchString(line) && len(para) > 0 && kind == Paragraph:
			t := strings.Join(para, " ")
			para = nil
			level := 1
			if strings.Contains(line, "-") {
				level = 2
			}
			add(Heading, level, t)
		case reMDHeading.MatchString(line):
			m := reMDHeading.FindStringSubmatch(line)
			add(Heading, len(m[1]), m[2])
		case reMDLinkDef.MatchString(line):
			// A link reference definition is not text.
		case reMDTableRule.MatchString(line) && strings.Contains(line, "|"):
		case reMDQuote.MatchString(line):
			t := reMDQuote.FindStringSubmatch(line)[1]
			if kind != Quote {
				flush()
				kind = Quote
			}
			if strings.TrimSpace(t) == "" {
				flush()
				kind = Quote
				continue
			}
			para = append(para, t)
		case reMDList.MatchString(line):
			flush()
			kind = ListItem
			para = append(para, reMDList.FindStringSubmatch(line)[1])
		default:
			if strings.Contains(line, "|") && strings.Count(line, "|") >= 2 {
				line = strings.Trim(strings.TrimSpace(line), "|")
				line = strings.ReplaceAll(line, "|", ", ")
			}
			para = append(para, line)
		}
	}
	flush()
	// A short first line without final punctuation, over more text, is the
	// article's title.
	if len(blocks) > 1 && blocks[0].Kind == Paragraph {
		t := strings.TrimSpace(blocks[0].Text())
		if len(t) <= 150 && !strings.ContainsRune(".!?:;,", lastRune(t)) {
			blocks[0].Kind, blocks[0].Level = Heading, 1
		}
	}
	return blocks
}

// splitLines joins the lines of one paragraph into texts. Lines are
// joined with spaces, except that a short line without final punctuation
// followed by a capitalised line (a title over its text) stands alone; and
// when lines are long (one paragraph per line), every line stands alone.
func splitLines(lines []string) []string {
	if len(lines) == 1 {
		return lines
	}
	longest := 0
	for _, l := range lines {
		longest = max(longest, len(strings.TrimSpace(l)))
	}
	var out []string
	var cur []string
	for i, l := range lines {
		l = strings.TrimSpace(l)
		cur = append(cur, l)
		if i == len(lines)-1 {
			break
		}
		next := strings.TrimSpace(lines[i+1])
		brk := false
		if longest > 120 {
			brk = true
		} else if l != "" && !strings.ContainsRune(".!?:;,-\"'”’)", lastRune(l)) && startsUpper(next) && len(l) < longest*6/10 {
			brk = true
		}
		if brk {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

func lastRune(s string) rune {
	r := []rune(s[max(0, len(s)-4):])
	if len(r) == 0 {
		return 0
	}
	return r[len(r)-1]
}

func startsUpper(s string) bool {
	for _, r := range s {
		return r >= 'A' && r <= 'Z' || r > 127 && strings.ToUpper(string(r)) == string(r) && strings.ToLower(string(r)) != string(r)
	}
	return false
}

// inlineMarkdown removes inline Markdown syntax, keeping the words: link
// text, emphasised text and code spans. Images are dropped. HTML entities
// are decoded.
func inlineMarkdown(s string) string {
	s = reMDImage.ReplaceAllString(s, "")
	s = reMDLink.ReplaceAllString(s, "$1")
	s = reMDAutolink.ReplaceAllString(s, "$1")
	s = reMDCode.ReplaceAllString(s, "$1")
	s = reMDStrong.ReplaceAllString(s, "$1$2")
	s = reMDEmStar.ReplaceAllString(s, "$1")
	s = reMDEmUnder.ReplaceAllString(s, "$1$2$3")
	s = reMDStrike.ReplaceAllString(s, "$1")
	s = reMDEscape.ReplaceAllString(s, "$1")
	if strings.HasSuffix(s, "  ") || strings.HasSuffix(s, "\\") {
		s = strings.TrimRight(s, " \\")
	}
	return html.UnescapeString(s)
}
