// Package extract finds the article in a web page: its title, author,
// canonical URL, language and body, the body as plain structural HTML
// (headings, paragraphs, list items, quotes) that internal/article reads.
//
// The content is found by go-readability (codeberg.org/readeck/go-readability,
// a port of Mozilla's Readability.js), the one package that imports it;
// then this package keeps only structure and text, and drops what the
// library leaves that a listener should not hear: navigation, share
// buttons, adverts, comments, captions, related-article lists and the
// title repeated as a heading. bench/extract compares it with
// go-trafilatura on the corpus under testdata (see docs/architecture.md).
//
// Reader puts it together with internal/fetch: it fetches a page through
// the guarded client (robots.txt honoured, HTML only) and extracts it, for
// the API's and the dashboard's "import from URL".
package extract

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/narrator/narrator"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/net/publicsuffix"
)

// Article is what Extract found in a page.
type Article struct {
	// Title is the article's headline.
	Title string
	// Author is the byline, or the page's author metadata; may be empty.
	Author string
	// URL is the page's canonical URL (<link rel=canonical>), absolute,
	// when it is on the page's own site (sameSite); otherwise, or when it
	// names none, the URL the page was fetched from.
	URL string
	// Language is the page's language tag (<html lang>, or its
	// Content-Language metadata); may be empty.
	Language string
	// Body is the article as HTML of h2–h6, p, ul/ol/li, blockquote and
	// pre elements holding text only.
	Body string
	// Image is the page's og:image (or twitter:image), an absolute http or
	// https URL; "" when it names none.
	Image string
}

// minWords is the fewest words an article has: fewer is a page that is
// not an article (an error page, a login wall, a file that is not HTML).
const minWords = 10

// ErrNoArticle is returned (wrapped) when a page holds no article text.
var ErrNoArticle = errors.New("no article found on the page")

// Content is what a Finder found: the element holding the article, and
// the title and byline it read from the page.
type Content struct {
	Node          *html.Node
	Title, Byline string
}

// Finder finds the article's content in a parsed page, which it may
// change. Readability is the one Extract uses; bench/extract plugs in
// others to compare them on the same corpus.
type Finder func(doc *html.Node, pageURL *url.URL) (Content, error)

// Readability finds the content with go-readability.
func Readability(doc *html.Node, pageURL *url.URL) (Content, error) {
	a, err := readability.FromDocument(doc, pageURL)
	if err != nil {
		return Content{}, fmt.Errorf("readability: %w", err)
	}
	return Content{Node: a.Node, Title: a.Title(), Byline: a.Byline()}, nil
}

// Extract reads page, the bytes of an HTML document whose Content-Type
// header was contentType (for its charset; may be empty), fetched from
// pageURL, and returns its article. It returns an error wrapping
// ErrNoArticle when the page holds no article text.
func Extract(page []byte, contentType string, pageURL *url.URL) (*Article, error) {
	return ExtractWith(Readability, page, contentType, pageURL)
}

// ExtractWith is Extract with the content found by find.
func ExtractWith(find Finder, page []byte, contentType string, pageURL *url.URL) (*Article, error) {
	var r io.Reader = bytes.NewReader(page)
	// The header's charset is believed. Otherwise a page that is valid
	// UTF-8 is read as UTF-8: DetermineEncoding looks at the first 1,024
	// bytes only and falls back to windows-1252, and pages whose <meta>
	// names a Latin charset while they are written in UTF-8 are common,
	// while Latin text that happens to be valid UTF-8 is rare.
	if enc, _, certain := charset.DetermineEncoding(page, contentType); certain || !utf8.Valid(page) {
		r = enc.NewDecoder().Reader(r)
	}
	doc, err := html.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("extract: parse page: %w", err)
	}
	m := readMeta(doc, pageURL)
	prune(doc)
	c, err := find(doc, pageURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoArticle, err)
	}
	a := &Article{Title: clean(c.Title), Author: clean(c.Byline), URL: m.canonical, Language: narrator.LanguageTag(m.lang),
		Image: narrator.ArticleImageURL(cmp.Or(m.image, m.twitterImage))}
	if a.Title == "" {
		a.Title = m.title
	}
	// The page's author metadata is the cleanest; then the byline the
	// finder saw, then one marked in the markup.
	a.Author = ""
	for _, by := range []string{m.author, clean(c.Byline), m.byline} {
		if by = byPrefix.ReplaceAllString(by, ""); a.Author == "" && plausibleName(by) {
			a.Author = by
		}
	}
	n := 0
	if c.Node != nil {
		a.Body, n = render(c.Node, a.Title)
	}
	if n < minWords {
		return nil, ErrNoArticle
	}
	return a, nil
}

// plausibleName reports whether a byline reads as names: not empty, not
// long, and without digits, handles or links ("Follow @x", "Ann Lee22 Dec
// 2016").
func plausibleName(s string) bool {
	return s != "" && len(s) <= 100 && !strings.ContainsAny(s, "0123456789@") && !strings.Contains(s, "http")
}

// clean collapses white space.
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// meta is what the page's own markup says about it.
type meta struct {
	canonical, lang, title, author string
	// image is the first og:image, twitterImage the first twitter:image,
	// that resolve to an http or https URL.
	image, twitterImage string
	// byline is the text of the first element marked as the author
	// (rel or itemprop "author", class "author" or "byline").
	byline string
}

// bylineClass matches the class of an element that holds the byline.
var bylineClass = regexp.MustCompile(`(?i)(?:^|\s)(?:author|byline)(?:\s|$)`)

// byPrefix matches the words before a name in a byline.
var byPrefix = regexp.MustCompile(`(?i)^(?:posted\s+)?by\s+`)

// readMeta reads the canonical URL, language, title and author from doc's
// markup, before any finder changes it. A canonical URL must be http or
// https; relative ones are resolved against pageURL. A canonical URL on
// another site than pageURL's is not believed: a page may not claim
// another site's article, whose audio and embed its import would take over.
func readMeta(doc *html.Node, pageURL *url.URL) meta {
	var m meta
	canonical := false // the first <link rel=canonical> counts
	if pageURL != nil {
		m.canonical = pageURL.String()
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Html:
				m.lang = clean(attr(n, "lang"))
			case atom.Title:
				if m.title == "" {
					m.title = clean(text(n))
				}
			case atom.Link:
				if rels := strings.Fields(strings.ToLower(attr(n, "rel"))); !canonical && contains(rels, "canonical") {
					if u, ok := resolve(pageURL, attr(n, "href")); ok && sameSite(pageURL, u) {
						m.canonical, canonical = u, true
					}
				}
			case atom.Meta:
				name := strings.ToLower(attr(n, "name") + attr(n, "property") + attr(n, "http-equiv"))
				content := clean(attr(n, "content"))
				switch {
				case name == "author" && m.author == "":
					m.author = content
				case name == "content-language" && m.lang == "":
					m.lang, _, _ = strings.Cut(content, ",")
				case (name == "og:image" || name == "og:image:url" || name == "og:image:secure_url") && m.image == "":
					m.image, _ = resolve(pageURL, content)
				case name == "twitter:image" && m.twitterImage == "":
					m.twitterImage, _ = resolve(pageURL, content)
				}
			}
			if m.byline == "" && n.DataAtom != atom.Link && n.DataAtom != atom.Meta &&
				(strings.EqualFold(attr(n, "rel"), "author") || strings.EqualFold(attr(n, "itemprop"), "author") || bylineClass.MatchString(attr(n, "class"))) {
				if t := clean(text(n)); len(t) < 100 {
					m.byline = t
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return m
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// resolve returns ref resolved against base when the result is an http or
// https URL.
func resolve(base *url.URL, ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Fragment = ""
	return u.String(), true
}

// sameSite reports whether rawURL is on the site of page: the same
// registrable domain (the public suffix and one label more, so
// "www.example.co.uk" and "example.co.uk" are one site, and
// "alice.github.io" and "bob.github.io" two), or the same host where
// there is none (an IP address, "localhost"). Any URL is on the site of a
// nil page.
func sameSite(page *url.URL, rawURL string) bool {
	if page == nil {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	a, b := siteOf(page.Hostname()), siteOf(u.Hostname())
	return a != "" && a == b
}

// siteOf returns the registrable domain of host, or host itself, in lower
// case, when it has none.
func siteOf(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return host
	}
	if site, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return site
	}
	return host
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// text returns the text content of n.
func text(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}
