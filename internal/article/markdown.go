package article

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parseMarkdown parses CommonMark (with GitHub's tables and strikethrough)
// with goldmark and walks its syntax tree:
//   - headings, paragraphs, list items (at any depth, over any number of
//     lines) and block quotes become blocks of their kind;
//   - link text is read and its destination dropped, whether the link is
//     inline or a reference; autolinks are read as written; images are not
//     read;
//   - code spans are read, code blocks (fenced or indented) are not;
//   - HTML blocks are read as the HTML path reads them (parseHTML); inline
//     HTML tags are dropped, and the text inside script, style and the other
//     elements HTML does not read is dropped with them;
//   - each table row is one block, its cells separated by commas.
//
// The lines of a paragraph are joined as in plain text (splitLines), and
// a short first paragraph becomes the title (titleFirst). Input that would
// cost goldmark more than linear time is first reshaped (boundLines).
func parseMarkdown(body string) []Block {
	src, joins := boundLines([]byte(body))
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))
	doc := md.Parser().Parse(text.NewReader(src))
	p := mdParser{src: src, joins: joins}
	p.block(doc, mdCtx{})
	return titleFirst(p.blocks)
}

// mdParser accumulates blocks while walking a goldmark syntax tree.
type mdParser struct {
	src    []byte
	joins  map[int]bool // line breaks that boundLines inserted
	blocks []Block
	// lines holds the finished lines of the block being read, line the
	// current one.
	lines []string
	line  strings.Builder
	// skip counts the open inline HTML elements whose text is not read.
	skip int
}

// mdCtx is what a block inherits from its ancestors.
type mdCtx struct {
	quote, list bool
}

// kind is the kind of a paragraph read in context c.
func (c mdCtx) kind() Kind {
	switch {
	case c.quote:
		return Quote
	case c.list:
		return ListItem
	default:
		return Paragraph
	}
}

func (p *mdParser) block(n ast.Node, c mdCtx) {
	switch n := n.(type) {
	case *ast.Heading:
		p.inlineBlock(n, Heading, min(max(n.Level, 1), 6), true)
		return
	case *ast.Paragraph, *ast.TextBlock:
		p.inlineBlock(n, c.kind(), 0, false)
		return
	case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.ThematicBreak:
		return
	case *ast.HTMLBlock:
		p.htmlBlock(n, c)
		return
	case *east.TableHeader, *east.TableRow:
		p.tableRow(n, c)
		return
	case *ast.Blockquote:
		c.quote = true
	case *ast.ListItem:
		c.list = true
	}
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		p.block(ch, c)
	}
}

// inlineBlock reads the inline content of n into blocks of kind k. The
// lines of a heading are joined into one block; those of other blocks as
// splitLines decides.
func (p *mdParser) inlineBlock(n ast.Node, k Kind, level int, join bool) {
	p.lines, p.skip = p.lines[:0], 0
	p.line.Reset()
	p.inline(n)
	p.newline()
	texts := p.lines
	if join {
		texts = []string{strings.Join(p.lines, " ")}
	} else {
		texts = splitLines(texts)
	}
	for _, t := range texts {
		if t = strings.Join(strings.Fields(t), " "); t != "" {
			p.blocks = append(p.blocks, Block{Kind: k, Level: level, Spans: []Span{{Kind: SpanText, Text: t, Rate: 1}}})
		}
	}
}

// inserted reports whether the line break after src[:stop] and any
// white space is one that boundLines inserted.
func (p *mdParser) inserted(stop int) bool {
	for stop < len(p.src) && (p.src[stop] == ' ' || p.src[stop] == '\t' || p.src[stop] == '\\') {
		stop++
	}
	return p.joins[stop]
}

// newline ends the current line.
func (p *mdParser) newline() {
	p.lines = append(p.lines, p.line.String())
	p.line.Reset()
}

// write adds text to the current line, unless it is inside an element
// that is not read. Escapes and character references are resolved unless
// raw is true.
func (p *mdParser) write(b []byte, raw bool) {
	if p.skip > 0 {
		return
	}
	if !raw {
		b = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(b)))
	}
	p.line.Write(b)
}

func (p *mdParser) inline(n ast.Node) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		switch ch := ch.(type) {
		case *ast.Text:
			p.write(ch.Segment.Value(p.src), ch.IsRaw())
			if ch.SoftLineBreak() || ch.HardLineBreak() {
				if p.inserted(ch.Segment.Stop) {
					p.line.WriteByte(' ')
				} else {
					p.newline()
				}
			}
		case *ast.String:
			p.write(ch.Value, ch.IsRaw() || ch.IsCode())
		case *ast.CodeSpan:
			for t := ch.FirstChild(); t != nil; t = t.NextSibling() {
				switch t := t.(type) {
				case *ast.Text:
					p.write(bytes.ReplaceAll(t.Segment.Value(p.src), []byte("\n"), []byte(" ")), true)
				case *ast.String:
					p.write(t.Value, true)
				}
			}
		case *ast.AutoLink:
			p.write(ch.Label(p.src), true)
		case *ast.Image:
			// Images are not read, as in HTML.
		case *ast.RawHTML:
			p.rawHTML(ch)
		default:
			// Emphasis, links, strikethrough: read their text.
			p.inline(ch)
		}
	}
}

// rawHTML drops an inline HTML tag. Elements whose content HTML does not
// read (script, style, ...) stop the text until they close; <br> ends a
// line.
func (p *mdParser) rawHTML(n *ast.RawHTML) {
	var raw []byte
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		raw = append(raw, seg.Value(p.src)...)
	}
	z := html.NewTokenizer(bytes.NewReader(raw))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken:
			name, _ := z.TagName()
			switch a := atom.Lookup(name); {
			case a == atom.Br:
				p.newline()
			case skipHTML[a] && !voidElement(a):
				p.skip++
			}
		case html.SelfClosingTagToken:
			name, _ := z.TagName()
			if atom.Lookup(name) == atom.Br {
				p.newline()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if a := atom.Lookup(name); skipHTML[a] && !voidElement(a) && p.skip > 0 {
				p.skip--
			}
		}
	}
}

// htmlBlock reads an HTML block as the HTML path does. Its paragraphs take
// the kind of their Markdown context.
func (p *mdParser) htmlBlock(n *ast.HTMLBlock, c mdCtx) {
	var sb strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		sb.Write(seg.Value(p.src))
	}
	if n.HasClosure() {
		sb.Write(n.ClosureLine.Value(p.src))
	}
	for _, b := range parseHTML(sb.String()) {
		if b.Kind == Paragraph {
			b.Kind = c.kind()
		}
		p.blocks = append(p.blocks, b)
	}
}

// tableRow reads one table row as one block, its cells separated by
// commas.
func (p *mdParser) tableRow(n ast.Node, c mdCtx) {
	p.lines, p.skip = p.lines[:0], 0
	p.line.Reset()
	var cells []string
	for cell := n.FirstChild(); cell != nil; cell = cell.NextSibling() {
		p.inline(cell)
		if t := strings.Join(strings.Fields(p.line.String()), " "); t != "" {
			cells = append(cells, t)
		}
		p.line.Reset()
	}
	if len(cells) > 0 {
		p.blocks = append(p.blocks, Block{Kind: c.kind(), Spans: []Span{{Kind: SpanText, Text: strings.Join(cells, ", "), Rate: 1}}})
	}
}

// goldmark's work grows faster than the input in three ways, so
// boundLines reshapes what would trigger them before parsing:
//   - the block containers one line opens ("- - - - x", "> > > x") cost
//     time quadratic in their number: a line keeps maxLineContainers;
//   - inline parsing rescans the rest of a line at every "](" or "](<":
//     lines are wrapped at maxLineBytes, and the wrap is read as a space;
//   - a table makes every row as wide as its header: a line with more
//     than maxTableColumns pipes has them escaped, so it is text;
//   - link reference definitions are looked for in time quadratic in the
//     lines of a paragraph: a blank line is added after maxParagraphLines
//     lines without one.
//
// Nesting built over several lines needs indentation or a marker per level
// on every line, so its cost grows with the length of those lines and
// stays linear. Text within these bounds is parsed unchanged.
const (
	maxLineContainers = 16
	maxLineBytes      = 1000
	maxTableColumns   = 64
	maxParagraphLines = 500
)

// boundLines returns src reshaped as the constants above say, and the
// offsets of the line breaks it inserted.
func boundLines(src []byte) ([]byte, map[int]bool) {
	var (
		out   []byte // nil while src is unchanged
		joins map[int]bool
		run   int // lines since the last blank one
	)
	// emit adds line (which starts at src[from]) and the line break after
	// it, if any: joined marks one that boundLines inserted.
	emit := func(from int, line []byte, brk, joined bool) {
		orig := line
		if keep, cut := excessMarkers(line); cut > keep {
			line = append(append(append([]byte(nil), line[:keep]...), ' '), line[cut:]...)
		}
		if bytes.Count(line, []byte("|")) > maxTableColumns {
			line = bytes.ReplaceAll(line, []byte("|"), []byte(`\|`))
		}
		run++
		if len(bytes.TrimSpace(line)) == 0 {
			run = 0
		}
		blank := brk && run == maxParagraphLines
		if out == nil && (joined || blank || len(line) != len(orig) || !bytes.Equal(line, orig)) {
			out = append(make([]byte, 0, len(src)+len(line)), src[:from]...)
		}
		if out == nil {
			return
		}
		out = append(out, line...)
		if brk {
			if joined {
				if joins == nil {
					joins = map[int]bool{}
				}
				joins[len(out)] = true
			}
			out = append(out, '\n')
			if blank {
				out = append(out, '\n')
				run = 0
			}
		}
	}
	for start := 0; start <= len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		from := start
		for end-from > maxLineBytes {
			cut := wrapAt(src[from : from+maxLineBytes+1])
			emit(from, src[from:from+cut], true, true)
			from += cut
			if src[from] == ' ' {
				from++ // the space the wrap replaces
			}
		}
		emit(from, src[from:end], end < len(src), false)
		start = end + 1
	}
	if out == nil {
		return src, nil
	}
	return out, joins
}

// wrapAt returns where to wrap a line whose first len(b)-1 bytes must go on
// one line: before the last space that is followed by a letter in the
// second half of b, so that the next line starts as text does, or else at
// the last rune boundary.
func wrapAt(b []byte) int {
	for i := len(b) - 2; i > len(b)/2; i-- {
		if b[i] == ' ' {
			if r, _ := utf8.DecodeRune(b[i+1:]); unicode.IsLetter(r) {
				return i
			}
		}
	}
	i := len(b) - 1
	for i > 1 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}

// excessMarkers scans the container markers at the start of line. When it
// has more than maxLineContainers, line[keep:cut] holds the excess ones
// (with the white space around them); otherwise keep == cut == 0.
func excessMarkers(line []byte) (keep, cut int) {
	n, i := 0, 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		switch c := line[i]; {
		case c == '>':
			j = i + 1
		case c == '-' || c == '*' || c == '+':
			j = i + 1
			if j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j = i
			}
		case c >= '0' && c <= '9':
			for j < len(line) && j-i < 10 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j < len(line) && (line[j] == '.' || line[j] == ')') && (j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t') {
				j++
			} else {
				j = i
			}
		}
		if j == i {
			break
		}
		n++
		if n == maxLineContainers {
			keep = j
		}
		i = j
	}
	if n <= maxLineContainers {
		return 0, 0
	}
	return keep, i
}
