package article

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzLimit bounds the time one fuzz input may take. Inputs are a few
// kilobytes, and parsing is linear, so even a slow machine stays far below.
const fuzzLimit = 5 * time.Second

// fuzzSeeds seed every target: each format's syntax, and inputs that once
// were or could be slow.
var fuzzSeeds = []string{
	"<h1>T</h1><p data-voice=\"x\">Hello &amp; <a href=x>bye</a></p><script>x</script><!-- c -->",
	`<speak><p>Hi <break time="1s"/><say-as interpret-as="characters">abc</say-as><sub alias="x">y</sub><prosody rate="150%">fast</prosody></p></speak>`,
	"# Title\n\n- item **one**\n\n> quote [link](http://x.y)\n\n```\ncode\n```\n",
	"# T\n\n- one\n  - nested *one*\n    1. deeper\n- two\n  continued\n\n[ref link][r] and [r]\n\n[r]: http://x \"t\"\n",
	"# T\n\n<details>\n<summary>More</summary>\n\nInside **md**.\n\n</details>\n\nText <kbd>x</kbd> <textarea>no</textarea>.\n",
	"| a | b |\n|---|---|\n| `1` | ~~2~~ |\n\n    code\n\n\\*esc\\* &copy; &#169; <http://a.b>\n",
	"plain text\n\nsecond paragraph", "A title\nThe first paragraph is a long line of text, long.",
	strings.Repeat("<div>", 600) + "deep", strings.Repeat("<b><i>", 300) + "x",
	"<speak>" + strings.Repeat("<prosody rate=\"fast\">", 200) + "x",
	strings.Repeat("- ", 500) + "x", strings.Repeat("> ", 500) + "x", strings.Repeat("[", 500),
	"<p>unclosed <b>bold", "a < b > c", "<3",
}

// parseTimed runs parse on body and fails if it takes longer than
// fuzzLimit.
func parseTimed(t *testing.T, body string, parse func(string) []Block) []Block {
	t.Helper()
	done := make(chan []Block, 1)
	go func() { done <- clean(parse(strings.ToValidUTF8(body, "\uFFFD"))) }()
	select {
	case blocks := <-done:
		return blocks
	case <-time.After(fuzzLimit):
		t.Fatalf("parsing took over %v on %d bytes: %q", fuzzLimit, len(body), body)
		return nil
	}
}

// checkBlocks asserts what holds for the blocks of every format: each has
// text, a known kind and level, clean UTF-8, and sane spans.
func checkBlocks(t *testing.T, blocks []Block) {
	t.Helper()
	for _, b := range blocks {
		if len(b.Spans) == 0 || strings.TrimSpace(b.Text()) == "" {
			t.Fatalf("block without text: %+v", b)
		}
		if b.Kind < Paragraph || b.Kind > Quote || b.Level < 0 || b.Level > 6 || (b.Level > 0 && b.Kind != Heading) {
			t.Fatalf("block of kind %v and level %d", b.Kind, b.Level)
		}
		for _, s := range b.Spans {
			if !utf8.ValidString(s.Text) {
				t.Fatalf("invalid UTF-8 in %q", s.Text)
			}
			if s.Rate <= 0 || s.Rate > 4 {
				t.Fatalf("rate %v", s.Rate)
			}
			if s.Pause < 0 || s.Pause > maxBreak {
				t.Fatalf("pause %v", s.Pause)
			}
			if s.Kind != SpanText && s.Text != "" {
				t.Fatalf("%v span with text %q", s.Kind, s.Text)
			}
		}
	}
}

// addSeeds adds fuzzSeeds to f's corpus.
func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
}

// FuzzParse checks the whole of Parse: detection, then any parser.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, body string) {
		doc := Document{Format: Detect(body), Blocks: parseTimed(t, body, func(s string) []Block { return Parse(s).Blocks })}
		checkBlocks(t, doc.Blocks)
	})
}

// FuzzMarkdown checks the Markdown parser on any input: parsing is
// deterministic, and the text it reads is never much longer than the input
// (no table padding, no repeated text).
func FuzzMarkdown(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, body string) {
		blocks := parseTimed(t, body, parseMarkdown)
		checkBlocks(t, blocks)
		valid := strings.ToValidUTF8(body, "\uFFFD")
		n := 0
		for _, b := range blocks {
			n += len(b.Text())
		}
		// Cells are joined with ", " where the input had "|", and a few
		// entities decode to more bytes than they are written with.
		if n > 3*len(valid) {
			t.Fatalf("read %d bytes of text from %d bytes", n, len(valid))
		}
		if again := clean(parseMarkdown(valid)); !slices.EqualFunc(blocks, again, equalBlocks) {
			t.Fatalf("two parses differ:\n%+v\n%+v", blocks, again)
		}
	})
}

// FuzzHTML checks the HTML parser on any input.
func FuzzHTML(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, body string) {
		checkBlocks(t, parseTimed(t, body, parseHTML))
	})
}

// FuzzSSML checks the SSML parser on any input: besides the common
// checks, breaks stay within maxBreak and rates within parseRate's bounds.
func FuzzSSML(f *testing.F) {
	addSeeds(f)
	f.Add(`<speak><break time="100000s"/><break time="-1s"/><prosody rate="-500%">x</prosody><prosody rate="NaN">y</prosody></speak>`)
	f.Fuzz(func(t *testing.T, body string) {
		checkBlocks(t, parseTimed(t, body, parseSSML))
	})
}

// FuzzPlain checks the plain-text parser: it only splits text into blocks,
// so the words of its blocks are the words of the input, in order.
func FuzzPlain(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, body string) {
		blocks := parseTimed(t, body, parsePlain)
		checkBlocks(t, blocks)
		var got []string
		for _, b := range blocks {
			got = append(got, strings.Fields(b.Text())...)
		}
		if want := strings.Fields(strings.ToValidUTF8(body, "\uFFFD")); !slices.Equal(got, want) {
			t.Fatalf("words changed:\n%q\n%q", want, got)
		}
	})
}

func equalBlocks(a, b Block) bool {
	return a.Kind == b.Kind && a.Level == b.Level && a.Voice == b.Voice && slices.Equal(a.Spans, b.Spans)
}
