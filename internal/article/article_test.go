package article

import (
	"testing"
	"time"
)

// blockSummary is a comparable view of a block for tests.
type blockSummary struct {
	Kind  Kind
	Level int
	Voice string
	Text  string
}

func summarize(d Document) []blockSummary {
	var out []blockSummary
	for _, b := range d.Blocks {
		out = append(out, blockSummary{b.Kind, b.Level, b.Voice, b.Text()})
	}
	return out
}

// wantBlocks fails t unless d's blocks are want, in order.
func wantBlocks(t *testing.T, d Document, want []blockSummary) {
	t.Helper()
	got := summarize(d)
	if len(got) != len(want) {
		t.Fatalf("got %d blocks %+v\nwant %+v", len(got), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("block %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     Format
	}{
		{"ssml", "  <speak>Hi</speak>", FormatSSML},
		{"ssml-xml-declaration", `<?xml version="1.0"?><speak version="1.1">Hi</speak>`, FormatSSML},
		{"html", "<p>Hi</p>", FormatHTML},
		{"html-comment", "Hi <!-- x -->", FormatHTML},
		{"markdown-heading", "# Title\n\nText", FormatMarkdown},
		{"markdown-link", "See [this](http://x).", FormatMarkdown},
		{"markdown-with-html", "# Title\n\nText<br>and <b>bold</b>.\n\n<div>x</div>", FormatMarkdown},
		{"markdown-list-with-html", "\n- item <img src=x>\n", FormatMarkdown},
		{"html-with-markdown-later", "<p>Hi</p>\n# not a heading", FormatHTML},
		{"html-hash-text", "#hashtag <b>x</b>", FormatHTML},
		{"plain", "Just text.\n\nMore text, 3 < 4.", FormatPlain},
		{"plain-angle", "I <3 it and a<b.", FormatPlain},
		{"speaker-is-not-speak", "<speaker>x", FormatPlain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Detect(tc.in); got != tc.want {
				t.Errorf("Detect(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []blockSummary
	}{
		{"html-blocks", `<html><head><title>T</title><style>p{}</style></head><body>
			<nav><a href="/">Home</a></nav><header><h1>Big &amp; bold</h1></header>
			<p>One <a href="x">link</a> here.<sup>[1]</sup></p>
			<ul><li>First</li><li>Second</li></ul>
			<blockquote><p>Quoted.</p></blockquote>
			<figure><img src="x.png" alt="pic"><figcaption>A caption.</figcaption></figure>
			<script>alert(1)</script><!-- comment --><aside>Ad</aside><footer>Footer</footer>
			<form><label>Name</label><input></form><div hidden>Hidden</div><p aria-hidden="true">Gone</p>
			<iframe src="x"></iframe><video>Video</video><svg><text>S</text></svg><noscript>No JS</noscript>
			</body></html>`,
			[]blockSummary{{Heading, 1, "", "Big & bold"}, {Paragraph, 0, "", "One link here."},
				{ListItem, 0, "", "First"}, {ListItem, 0, "", "Second"}, {Quote, 0, "", "Quoted."},
				{Paragraph, 0, "", "A caption."}}},
		{"html-voice", `<p data-voice="Ann (Female)">A.</p><p data-speechkit-voice="Bob">B.</p><div data-voice="C"><p>C.</p></div>`,
			[]blockSummary{{Paragraph, 0, "Ann (Female)", "A."}, {Paragraph, 0, "Bob", "B."}, {Paragraph, 0, "C", "C."}}},
		{"html-bare-text", "Hello <b>there</b><div>Block</div>tail",
			[]blockSummary{{Paragraph, 0, "", "Hello there"}, {Paragraph, 0, "", "Block"}, {Paragraph, 0, "", "tail"}}},
		{"html-invalid", "<p>Unclosed <b>bold<p>Next &nbsp;&copy; </i>",
			[]blockSummary{{Paragraph, 0, "", "Unclosed bold"}, {Paragraph, 0, "", "Next ©"}}},
		{"html-too-deep", stringsRepeat("<div>", 600) + "<p>deep</p>",
			[]blockSummary{{Paragraph, 0, "", "deep"}}},
		{"markdown", "# Title\n\nSome **bold** and _em_ text with a [link](http://x) and `code`.\n" +
			"Continued line.\n\n- item one\n- item two\n  continued\n1. numbered\n\n> quoted\n> more\n\n" +
			"```go\nfunc main() {}\n```\n\n![image](x.png)\n\n---\n\nSnake_case_word stays.\n\nSub\n---\n",
			[]blockSummary{{Heading, 1, "", "Title"},
				{Paragraph, 0, "", "Some bold and em text with a link and code. Continued line."},
				{ListItem, 0, "", "item one"}, {ListItem, 0, "", "item two continued"}, {ListItem, 0, "", "numbered"},
				{Quote, 0, "", "quoted more"}, {Paragraph, 0, "", "Snake_case_word stays."}, {Heading, 2, "", "Sub"}}},
		{"plain", "Library reopens\n\nThe library reopened.\nIt is big.\n\n\nSecond paragraph.",
			[]blockSummary{{Heading, 1, "", "Library reopens"}, {Paragraph, 0, "", "The library reopened. It is big."},
				{Paragraph, 0, "", "Second paragraph."}}},
		{"plain-title-line", "A title\nThe first paragraph is here and it is a long line of text.",
			[]blockSummary{{Heading, 1, "", "A title"}, {Paragraph, 0, "", "The first paragraph is here and it is a long line of text."}}},
		{"ssml-paragraphs", `<speak><p>One.</p><p><s>Two.</s><s>Three.</s></p>Four.</speak>`,
			[]blockSummary{{Paragraph, 0, "", "One."}, {Paragraph, 0, "", "Two. Three."}, {Paragraph, 0, "", "Four."}}},
		{"ssml-voice", `<speak><voice name="Ann">Hi.</voice> Bye.</speak>`,
			[]blockSummary{{Paragraph, 0, "Ann", "Hi."}, {Paragraph, 0, "", "Bye."}}},
		{"ssml-invalid", `<speak><p>Broken <emphasis>tags</p> & stray </s>`,
			[]blockSummary{{Paragraph, 0, "", "Broken tags"}, {Paragraph, 0, "", "& stray"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantBlocks(t, Parse(tc.in), tc.want)
		})
	}
}

func TestParseSSMLSpans(t *testing.T) {
	t.Parallel()
	d := Parse(`<speak><p>Hi<break time="1.5s"/><break strength="weak"/><break/>` +
		`<say-as interpret-as="characters" format="x">abc</say-as><sub alias="World Wide Web">WWW</sub>` +
		`<phoneme alphabet="ipa" ph="x">tomato</phoneme><prosody rate="150%">fast<prosody rate="slow">slower</prosody></prosody>` +
		`<audio src="x">fallback</audio><emphasis level="strong">yes</emphasis></p></speak>`)
	if len(d.Blocks) != 1 {
		t.Fatalf("got %d blocks", len(d.Blocks))
	}
	want := []Span{
		{Kind: SpanText, Text: "Hi", Rate: 1},
		{Kind: SpanBreak, Pause: 1500 * time.Millisecond, Rate: 1},
		{Kind: SpanBreak, Pause: 250 * time.Millisecond, Rate: 1},
		{Kind: SpanBreak, Pause: 500 * time.Millisecond, Rate: 1},
		{Kind: SpanText, Text: "abc", SayAs: "characters", Format: "x", Rate: 1},
		{Kind: SpanText, Text: "  World Wide Web  tomato ", Rate: 1},
		{Kind: SpanText, Text: "fast", Rate: 1.5},
		{Kind: SpanText, Text: "slower", Rate: 1.2000000000000002},
		{Kind: SpanText, Text: "yes", Rate: 1},
	}
	got := d.Blocks[0].Spans
	if len(got) != len(want) {
		t.Fatalf("got %d spans %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestDocumentText checks the spoken text of bodies in each format: one
// line per block, inline markup gone.
func TestDocumentText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"empty", "", ""},
		{"html", "<h1>Title</h1><p>One <b>two</b>.</p><p>Three<br>four</p>", "Title\nOne two.\nThree four"},
		{"markdown", "# Title\n\nOne *two*.", "Title\nOne two."},
		{"ssml", `<speak><p>One <emphasis>two</emphasis>.</p><p>Three.</p></speak>`, "One two.\nThree."},
		{"text", "One two.\n\nThree.", "One two.\nThree."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Parse(tc.body).Text(); got != tc.want {
				t.Errorf("Parse(%q).Text() = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

// TestNestedRateBounded checks that nested prosody rates, which multiply,
// stay within the bounds of one rate: 64 nested "fast" once made 1.6
// million.
func TestNestedRateBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate string
		want float64
	}{{"x-fast", 4}, {"x-slow", 0.25}} {
		d := Parse("<speak>" + stringsRepeat(`<prosody rate="`+tc.rate+`">`, 10) + "x</speak>")
		if len(d.Blocks) != 1 || len(d.Blocks[0].Spans) != 1 || d.Blocks[0].Spans[0].Rate != tc.want {
			t.Errorf("10 nested %s: got %+v, want one span at rate %v", tc.rate, d.Blocks, tc.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"slow", 0.8, true}, {"x-fast", 1.5, true}, {"150%", 1.5, true}, {"+20%", 1.2, true},
		{"-50%", 0.5, true}, {"2", 2, true}, {"1000%", 4, true}, {"junk", 0, false}, {"", 0, false}, {"NaN", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, ok := parseRate(tc.in)
			if ok != tc.ok || (ok && (got-tc.want > 1e-9 || tc.want-got > 1e-9)) {
				t.Errorf("parseRate(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func stringsRepeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}
