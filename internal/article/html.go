package article

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skipHTML lists the elements whose whole content is never read: code that
// runs, media, navigation and forms.
var skipHTML = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Iframe: true,
	atom.Svg: true, atom.Math: true, atom.Video: true, atom.Audio: true, atom.Img: true,
	atom.Picture: true, atom.Source: true, atom.Track: true, atom.Object: true,
	atom.Embed: true, atom.Canvas: true, atom.Nav: true, atom.Aside: true,
	atom.Footer: true, atom.Form: true, atom.Button: true, atom.Input: true,
	atom.Select: true, atom.Textarea: true, atom.Template: true, atom.Head: true,
	atom.Title: true, atom.Meta: true, atom.Link: true, atom.Map: true,
	atom.Area: true, atom.Dialog: true, atom.Menu: true, atom.Label: true,
	atom.Option: true, atom.Datalist: true, atom.Output: true, atom.Rp: true,
	atom.Rt: true, atom.Noembed: true, atom.Noframes: true, atom.Frameset: true,
}

// leafBlocks are the elements that make one block of their inline content.
var leafBlocks = map[atom.Atom]Kind{
	atom.P: Paragraph, atom.H1: Heading, atom.H2: Heading, atom.H3: Heading,
	atom.H4: Heading, atom.H5: Heading, atom.H6: Heading, atom.Li: ListItem,
	atom.Figcaption: Paragraph, atom.Dt: Paragraph, atom.Dd: Paragraph,
	atom.Pre: Paragraph, atom.Caption: Paragraph, atom.Summary: Heading,
	atom.Tr: Paragraph, atom.Address: Paragraph,
}

// containers are block-level elements whose children are blocks or
// anonymous paragraphs.
var containers = map[atom.Atom]bool{
	atom.Html: true, atom.Body: true, atom.Div: true, atom.Section: true,
	atom.Article: true, atom.Main: true, atom.Header: true, atom.Blockquote: true,
	atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Figure: true,
	atom.Table: true, atom.Thead: true, atom.Tbody: true, atom.Tfoot: true,
	atom.Details: true, atom.Fieldset: true, atom.Center: true, atom.Hgroup: true,
	atom.Hr: true,
}

// htmlParser accumulates blocks while walking an HTML tree.
type htmlParser struct {
	blocks []Block
	cur    *Block
}

// htmlCtx is what a node inherits from its ancestors.
type htmlCtx struct {
	voice  string
	quote  bool
	list   bool
	inLeaf bool
}

func parseHTML(body string) []Block {
	root, err := html.Parse(strings.NewReader(body))
	if err != nil {
		// Too deeply nested or otherwise unparseable: read the text.
		return stripTags(body)
	}
	var p htmlParser
	p.walk(root, htmlCtx{})
	p.flush()
	return p.blocks
}

// stripTags reads the text of markup it cannot parse as a tree, one block
// per run of text between block-level tags.
func stripTags(body string) []Block {
	var p htmlParser
	z := html.NewTokenizer(strings.NewReader(body))
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			p.flush()
			return p.blocks
		case html.TextToken:
			if skip == 0 {
				p.text(string(z.Text()), htmlCtx{})
			}
		case html.StartTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipHTML[a] && !voidElement(a) {
				skip++
			} else if _, ok := leafBlocks[a]; ok || containers[a] || a == atom.Br {
				p.flush()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipHTML[a] && skip > 0 {
				skip--
			} else if _, ok := leafBlocks[a]; ok || containers[a] {
				p.flush()
			}
		}
	}
}

// voidElement reports whether an element that is not read has no end
// tag, so that its start tag does not open anything to skip.
func voidElement(a atom.Atom) bool {
	switch a {
	case atom.Img, atom.Input, atom.Meta, atom.Link, atom.Source, atom.Area, atom.Track, atom.Embed:
		return true
	}
	return false
}

// flush closes the current block.
func (p *htmlParser) flush() {
	if p.cur != nil {
		p.blocks = append(p.blocks, *p.cur)
		p.cur = nil
	}
}

// open starts a new block.
func (p *htmlParser) open(k Kind, level int, c htmlCtx) {
	p.flush()
	if k == Paragraph && c.quote {
		k = Quote
	}
	if k == Paragraph && c.list {
		k = ListItem
	}
	p.cur = &Block{Kind: k, Level: level, Voice: c.voice}
}

// text appends text to the current block, opening an anonymous paragraph
// if needed.
func (p *htmlParser) text(s string, c htmlCtx) {
	if p.cur == nil {
		if strings.TrimSpace(s) == "" {
			return
		}
		p.open(Paragraph, 0, c)
	}
	p.cur.Spans = append(p.cur.Spans, Span{Kind: SpanText, Text: s, Rate: 1})
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// hidden reports whether an element is not meant to be seen or read.
func hidden(n *html.Node) bool {
	if _, ok := attr(n, "hidden"); ok {
		return true
	}
	if v, _ := attr(n, "aria-hidden"); v == "true" {
		return true
	}
	switch v, _ := attr(n, "role"); v {
	case "navigation", "banner", "complementary", "contentinfo", "search", "menu", "menubar", "toolbar", "dialog", "alert":
		return true
	}
	if v, ok := attr(n, "style"); ok {
		v = strings.ReplaceAll(strings.ToLower(v), " ", "")
		if strings.Contains(v, "display:none") || strings.Contains(v, "visibility:hidden") {
			return true
		}
	}
	return false
}

// footnoteRef reports whether a <sup> is a footnote marker like "1" or "[2]".
func footnoteRef(n *html.Node) bool {
	t := strings.Trim(strings.TrimSpace(nodeText(n)), "[]()")
	if t == "" {
		return true
	}
	for _, r := range t {
		if (r < '0' || r > '9') && r != '*' && r != '†' {
			return false
		}
	}
	return len(t) <= 3
}

func nodeText(n *html.Node) string {
	var sb strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return sb.String()
}

func (p *htmlParser) walk(n *html.Node, c htmlCtx) {
	switch n.Type {
	case html.TextNode:
		p.text(n.Data, c)
		return
	case html.DocumentNode:
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			p.walk(ch, c)
		}
		return
	case html.ElementNode:
	default:
		return // comments, doctypes
	}
	a := n.DataAtom
	if skipHTML[a] || hidden(n) {
		return
	}
	if v, ok := attr(n, "data-voice"); ok && strings.TrimSpace(v) != "" {
		c.voice = strings.TrimSpace(v)
	}
	if v, ok := attr(n, "data-speechkit-voice"); ok && strings.TrimSpace(v) != "" {
		c.voice = strings.TrimSpace(v)
	}
	children := func(c htmlCtx) {
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			p.walk(ch, c)
		}
	}
	switch {
	case a == atom.Br:
		if p.cur != nil {
			p.cur.Spans = append(p.cur.Spans, Span{Kind: SpanSentenceEnd})
		}
		return
	case a == atom.Sup && footnoteRef(n):
		return
	case a == atom.Td || a == atom.Th:
		children(c)
		if p.cur != nil {
			p.cur.Spans = append(p.cur.Spans, Span{Kind: SpanText, Text: ", ", Rate: 1})
		}
		return
	}
	if k, ok := leafBlocks[a]; ok && !(c.inLeaf && a == atom.Tr) {
		level := 0
		if k == Heading && a != atom.Summary {
			level = int(n.Data[1] - '0')
		}
		p.open(k, level, c)
		c.inLeaf = true
		children(c)
		p.flush()
		return
	}
	if containers[a] {
		p.flush()
		switch a {
		case atom.Blockquote:
			c.quote = true
		case atom.Ul, atom.Ol, atom.Dl:
			c.list = true
		}
		c.inLeaf = false
		children(c)
		p.flush()
		return
	}
	// Inline element (a, em, strong, span, code, abbr, q, ...) or an unknown
	// one: read its text in place.
	if p.cur != nil && c.voice != "" && p.cur.Voice != c.voice && !c.inLeaf {
		p.flush()
	}
	children(c)
}
