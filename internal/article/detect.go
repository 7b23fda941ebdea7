package article

import (
	"regexp"
	"strings"
)

// reHTMLTag matches the start or end tag of a common HTML element, or an
// HTML comment. Text such as "a < b" or "<3" is not HTML.
var reHTMLTag = regexp.MustCompile(`(?i)<!--|<!doctype|</?(?:a|abbr|address|article|aside|audio|b|blockquote|body|br|caption|cite|code|dd|del|div|dl|dt|em|figcaption|figure|footer|form|h[1-6]|head|header|hr|html|i|iframe|img|ins|li|main|mark|nav|noscript|ol|p|picture|pre|q|s|script|section|small|source|span|strong|style|sub|sup|svg|table|tbody|td|th|thead|time|tr|u|ul|video)(?:\s[^<>]*)?/?>`)

// HasHTML reports whether s contains the start or end tag of a common HTML
// element, or an HTML comment: what makes Detect call a body HTML unless
// it starts as Markdown.
func HasHTML(s string) bool { return reHTMLTag.MatchString(s) }

// reMarkdown matches Markdown syntax: block markers at a line start, or
// emphasis, links and code.
var reMarkdown = regexp.MustCompile("(?m)^(?:#{1,6}\\s|\\s{0,3}[-*+]\\s|\\s{0,3}\\d{1,3}[.)]\\s|\\s{0,3}>|```|~~~)|\\*\\*\\S|__\\S|\\]\\(|`[^`\n]+`")

// reMarkdownStart matches a body whose first line is a Markdown heading,
// list item, block quote or code fence.
var reMarkdownStart = regexp.MustCompile("^(?:#{1,6}[ \t]|[-*+][ \t]|\\d{1,3}[.)][ \t]|>|```|~~~)")

// Detect returns the format of an article body. SSML starts with <speak>
// (after optional white space, byte-order mark and XML declaration); a body
// whose first line is Markdown block syntax (a heading, list item, quote or
// fence) is Markdown, whatever HTML it holds, as Markdown allows HTML; HTML
// contains a known HTML tag; Markdown uses Markdown syntax; anything else
// is plain text.
func Detect(body string) Format {
	s := strings.TrimLeft(body, " \t\r\n\uFEFF")
	if strings.HasPrefix(s, "<?xml") {
		if i := strings.Index(s, "?>"); i >= 0 {
			s = strings.TrimLeft(s[i+2:], " \t\r\n")
		}
	}
	if len(s) >= 6 && strings.EqualFold(s[:6], "<speak") && (len(s) == 6 || strings.ContainsRune(" \t\r\n>/", rune(s[6]))) {
		return FormatSSML
	}
	if reMarkdownStart.MatchString(s) {
		return FormatMarkdown
	}
	if HasHTML(body) {
		return FormatHTML
	}
	if reMarkdown.MatchString(body) {
		return FormatMarkdown
	}
	return FormatPlain
}
