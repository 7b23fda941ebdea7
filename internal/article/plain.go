package article

import "strings"

// parsePlain splits plain text into paragraphs at blank lines. The lines
// of a paragraph are joined as splitLines decides.
func parsePlain(body string) []Block {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	var (
		blocks []Block
		para   []string
	)
	flush := func() {
		for _, t := range splitLines(para) {
			if t = strings.TrimSpace(t); t != "" {
				blocks = append(blocks, Block{Kind: Paragraph, Spans: []Span{{Kind: SpanText, Text: t, Rate: 1}}})
			}
		}
		para = nil
	}
	for line := range strings.SplitSeq(body, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
		} else {
			para = append(para, line)
		}
	}
	flush()
	return titleFirst(blocks)
}

// titleFirst makes a short first paragraph without final punctuation, over
// more text, the article's title.
func titleFirst(blocks []Block) []Block {
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
	if len(lines) <= 1 {
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
