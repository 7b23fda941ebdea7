// Package article parses an article body into a document of blocks
// (headings, paragraphs, list items, quotes) that carry plain text and a
// few inline speech features taken from SSML.
//
// Parse never fails: invalid markup degrades to text. The formats are
// detected from the body itself (see Detect):
//   - SSML, when the body starts with <speak> (optionally after an XML declaration);
//   - Markdown, when its first line is a Markdown heading, list item,
//     quote or code fence, whatever HTML it holds;
//   - HTML, when it contains a known HTML tag or a comment;
//   - Markdown, when it uses Markdown block or inline syntax;
//   - plain text otherwise.
//
// In Markdown and plain text a blank line separates paragraphs.
package article

import (
	"strings"
	"time"
)

// Format is the markup language of an article body.
type Format int

// The formats Detect recognises.
const (
	FormatPlain Format = iota
	FormatMarkdown
	FormatHTML
	FormatSSML
)

// String returns the lower-case name of the format.
func (f Format) String() string {
	switch f {
	case FormatMarkdown:
		return "markdown"
	case FormatHTML:
		return "html"
	case FormatSSML:
		return "ssml"
	default:
		return "plain"
	}
}

// Kind is the kind of a block.
type Kind int

// The kinds of block.
const (
	Paragraph Kind = iota
	Heading
	ListItem
	Quote
)

// String returns the lower-case name of the kind.
func (k Kind) String() string {
	switch k {
	case Heading:
		return "heading"
	case ListItem:
		return "list-item"
	case Quote:
		return "quote"
	default:
		return "paragraph"
	}
}

// SpanKind says what a span holds.
type SpanKind int

// The kinds of span.
const (
	// SpanText is a run of text.
	SpanText SpanKind = iota
	// SpanBreak is a pause of Span.Pause (an SSML break); it has no text.
	SpanBreak
	// SpanSentenceEnd forces a sentence boundary (an SSML </s> or an HTML <br>).
	SpanSentenceEnd
)

// Span is one inline piece of a block.
type Span struct {
	Kind SpanKind
	// Text is plain text with entities decoded; never markup.
	Text string
	// SayAs is the SSML say-as interpret-as value for the text
	// ("characters", "cardinal", "ordinal", "date", "telephone", ...), or "".
	SayAs string
	// Format is the say-as format attribute (e.g. "mdy" for dates), or "".
	Format string
	// Rate is the speaking-rate factor for the text, 1 for normal.
	Rate float64
	// Pause is the length of a SpanBreak.
	Pause time.Duration
}

// Block is one paragraph-level unit of an article.
type Block struct {
	Kind Kind
	// Level is the heading level (1 to 6) of a Heading, 0 otherwise.
	Level int
	// Voice is the voice named by a data-voice or data-speechkit-voice
	// attribute (or an SSML <voice name>), "" for the default voice.
	Voice string
	Spans []Span
}

// Text returns the block's text: its text spans joined, with breaks and
// sentence ends as spaces.
func (b Block) Text() string {
	var sb strings.Builder
	for _, s := range b.Spans {
		if s.Kind == SpanText {
			sb.WriteString(s.Text)
		} else {
			sb.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(sb.String()), " ")
}

// Document is a parsed article body.
type Document struct {
	Format Format
	Blocks []Block
}

// Text returns the document's text as the pipeline reads it: each block's
// Text on a line of its own.
func (d Document) Text() string {
	texts := make([]string, len(d.Blocks))
	for i, b := range d.Blocks {
		texts[i] = b.Text()
	}
	return strings.Join(texts, "\n")
}

// Parse detects the format of body and parses it. It never fails: markup
// that cannot be parsed degrades to text. Blocks without any text are left
// out.
func Parse(body string) Document {
	body = strings.ToValidUTF8(body, "\uFFFD")
	f := Detect(body)
	var blocks []Block
	switch f {
	case FormatSSML:
		blocks = parseSSML(body)
	case FormatHTML:
		blocks = parseHTML(body)
	case FormatMarkdown:
		blocks = parseMarkdown(body)
	default:
		blocks = parsePlain(body)
	}
	return Document{Format: f, Blocks: clean(blocks)}
}

// clean drops blocks with no text and merges adjacent text spans that
// share their features.
func clean(blocks []Block) []Block {
	out := blocks[:0]
	for _, b := range blocks {
		var spans []Span
		hasText := false
		for _, s := range b.Spans {
			if s.Rate == 0 {
				s.Rate = 1
			}
			if s.Kind == SpanText {
				if s.Text == "" {
					continue
				}
				if strings.TrimSpace(s.Text) != "" {
					hasText = true
				}
				if n := len(spans); n > 0 {
					p := &spans[n-1]
					if p.Kind == SpanText && p.SayAs == "" && s.SayAs == "" && p.Rate == s.Rate {
						p.Text += s.Text
						continue
					}
				}
			}
			spans = append(spans, s)
		}
		if !hasText {
			// A block of only breaks still matters between blocks in SSML:
			// keep its pause on the previous block.
			if len(out) > 0 {
				for _, s := range spans {
					if s.Kind == SpanBreak {
						out[len(out)-1].Spans = append(out[len(out)-1].Spans, s)
					}
				}
			}
			continue
		}
		b.Spans = spans
		out = append(out, b)
	}
	return out
}
