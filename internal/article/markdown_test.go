package article

import (
	"strings"
	"testing"
	"time"
)

func TestParseMarkdown(t *testing.T) {
	t.Parallel()
	h := blockSummary{Heading, 1, "", "T"}
	tests := []struct {
		name, in string
		want     []blockSummary
	}{
		{"nested-lists", "# T\n\n- one\n  - nested one\n  - nested *two*\n    1. deeper\n- two\n",
			[]blockSummary{h, {ListItem, 0, "", "one"}, {ListItem, 0, "", "nested one"}, {ListItem, 0, "", "nested two"},
				{ListItem, 0, "", "deeper"}, {ListItem, 0, "", "two"}}},
		{"multi-line-items", "# T\n\n- a long item\n  that goes on\n  over lines\n- next\nlazy continuation\n\n" +
			"1. first paragraph.\n\n   second paragraph of the same item.\n2. b\n",
			[]blockSummary{h, {ListItem, 0, "", "a long item that goes on over lines"}, {ListItem, 0, "", "next lazy continuation"},
				{ListItem, 0, "", "first paragraph."}, {ListItem, 0, "", "second paragraph of the same item."}, {ListItem, 0, "", "b"}}},
		{"reference-links", "# T\n\nSee [the docs][docs], [Docs] and [collapsed][], not [missing][nope].\n\n" +
			"[docs]: http://x.y \"Title\"\n[collapsed]:\n  <http://z>\n",
			[]blockSummary{h, {Paragraph, 0, "", "See the docs, Docs and collapsed, not [missing][nope]."}}},
		{"html-blocks", "# T\n\n<details>\n<summary>More</summary>\n\nInside **md**.\n\n</details>\n\n" +
			"<center data-voice=\"Ann\">Centred &amp; <kbd>x</kbd><textarea>no</textarea></center>\n\n- <center>in a list</center>\n",
			[]blockSummary{h, {Heading, 0, "", "More"}, {Paragraph, 0, "", "Inside md."}, {Paragraph, 0, "Ann", "Centred & x"},
				{ListItem, 0, "", "in a list"}}},
		{"inline-html", "# T\n\nPress <kbd>Ctrl</kbd>, <ruby>kan<rt>ka</rt></ruby> <textarea>not read</textarea> done.\\\nNext line.\n",
			[]blockSummary{h, {Paragraph, 0, "", "Press Ctrl, kan done. Next line."}}},
		{"common-html", "# T\n\nA <b>bold</b> <script>alert(1)</script>word<br>and <img src=x alt=pic> more.\n\n" +
			"<div data-voice=\"Ann\">\n<p>Hello &amp; bye.</p>\n</div>\n\n<script>\nx()\n</script>\n\n**End**.\n",
			[]blockSummary{h, {Paragraph, 0, "", "A bold word and more."}, {Paragraph, 0, "Ann", "Hello & bye."},
				{Paragraph, 0, "", "End."}}},
		{"quotes", "# T\n\n> quote\n> - list in quote\n>\n> > nested quote\n",
			[]blockSummary{h, {Quote, 0, "", "quote"}, {Quote, 0, "", "list in quote"}, {Quote, 0, "", "nested quote"}}},
		{"table", "# T\n\n| a | b |\n|---|:-:|\n| 1 | *2* |\n| | 3 |\n",
			[]blockSummary{h, {Paragraph, 0, "", "a, b"}, {Paragraph, 0, "", "1, 2"}, {Paragraph, 0, "", "3"}}},
		{"code-images-escapes", "# T\n\n    indented code\n\n~~~\nfenced\n~~~\n\n![alt](x.png) [![i](y)](z) [link ![i](q) text](u)\n\n" +
			"\\*not em\\* &copy; &#169; ~~struck~~ `a  <c>` <http://a.b>\n",
			[]blockSummary{h, {Paragraph, 0, "", "link text"}, {Paragraph, 0, "", "*not em* © © struck a <c> http://a.b"}}},
		{"long-line", "# T\n\n" + strings.Repeat("word ", 500) + "[link](http://x) end.\n",
			[]blockSummary{h, {Paragraph, 0, "", strings.Repeat("word ", 500) + "link end."}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Parse(tc.in)
			if d.Format != FormatMarkdown {
				t.Fatalf("format %v", d.Format)
			}
			wantBlocks(t, d, tc.want)
		})
	}
}

// TestPathologicalMarkdown parses 100,000-byte inputs (the most an audio's
// body holds) built to make a Markdown parser take more than linear time,
// and bounds the time. Without boundLines, goldmark took 31 s on
// "nested-lists", 82 s on "wide-table" and 17 s on "open-links".
func TestPathologicalMarkdown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	const n = 100_000
	lines := func(f func(i int) string) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(f(i))
		}
		return b.String()
	}
	inputs := map[string]string{
		"nested-lists":    strings.Repeat("- ", n/2) + "x",
		"nested-quotes":   strings.Repeat("> ", n/2) + "x",
		"nested-ordered":  strings.Repeat("1. ", n/3) + "x",
		"growing-indent":  lines(func(i int) string { return strings.Repeat(" ", 2*i) + "- x\n" }),
		"growing-quotes":  lines(func(i int) string { return strings.Repeat(">", i) + " x\n" }),
		"wide-table":      strings.Repeat("|", 1000) + "\n" + strings.Repeat("|-", 1000) + "\n" + strings.Repeat("x\n", n/2),
		"open-links":      strings.Repeat("[a](", n/4),
		"open-angle-dest": strings.Repeat("[a](<", n/5),
		"open-titles":     strings.Repeat("[a](x \"", n/7),
		"brackets":        strings.Repeat("[", n),
		"nested-images":   strings.Repeat("![", n/6) + strings.Repeat("](x)", n/6),
		"reference-defs":  strings.Repeat("[a]:\n", n/5),
		"many-references": strings.Repeat("[a]: b\n", n/14) + strings.Repeat("[a] ", n/8),
		"emphasis":        strings.Repeat("*_", n/4) + "a" + strings.Repeat("_*", n/4),
		"backticks":       strings.Repeat("``a`", n/4),
		"html":            strings.Repeat("<a ", n/3),
		"comments":        "x " + strings.Repeat("<!-", n/3),
		"setext":          strings.Repeat("a\n=\n", n/4),
		"fences":          strings.Repeat("```\n", n/4),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			blocks := parseMarkdown(in)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			t.Logf("%s: %d blocks in %v", name, len(blocks), time.Since(start))
		})
	}
}
