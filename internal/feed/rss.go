package feed

import (
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/article"
)

// Namespaces of the feed.
const (
	NamespaceITunes  = "http://www.itunes.com/dtds/podcast-1.0.dtd"
	NamespacePodcast = "https://podcastindex.org/namespace/1.0"
	NamespaceAtom    = "http://www.w3.org/2005/Atom"
)

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// The document, as encoding/xml writes it. Prefixed names are written as
// they are spelled here, with the namespaces declared on <rss>.
type rss struct {
	XMLName   xml.Name `xml:"rss"`
	Version   string   `xml:"version,attr"`
	XMLNSI    string   `xml:"xmlns:itunes,attr"`
	XMLNSP    string   `xml:"xmlns:podcast,attr"`
	XMLNSAtom string   `xml:"xmlns:atom,attr"`
	Channel   channel  `xml:"channel"`
}

type channel struct {
	Title         string    `xml:"title"`
	Link          string    `xml:"link"`
	Description   string    `xml:"description"`
	Language      string    `xml:"language"`
	LastBuildDate string    `xml:"lastBuildDate"`
	Generator     string    `xml:"generator"`
	Self          atomLink  `xml:"atom:link"`
	Author        string    `xml:"itunes:author,omitempty"`
	Image         *href     `xml:"itunes:image"`
	Category      *category `xml:"itunes:category"`
	Explicit      string    `xml:"itunes:explicit"`
	Items         []item    `xml:"item"`
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr"`
}

type href struct {
	Href string `xml:"href,attr"`
}

type category struct {
	Text string    `xml:"text,attr"`
	Sub  *category `xml:"itunes:category"`
}

type item struct {
	Title       string      `xml:"title"`
	Link        string      `xml:"link,omitempty"`
	Description string      `xml:"description"`
	GUID        guid        `xml:"guid"`
	PubDate     string      `xml:"pubDate"`
	Author      string      `xml:"itunes:author,omitempty"`
	Enclosure   enclosure   `xml:"enclosure"`
	Duration    string      `xml:"itunes:duration"`
	Transcript  *transcript `xml:"podcast:transcript"`
}

type guid struct {
	IsPermaLink string `xml:"isPermaLink,attr"`
	Value       string `xml:",chardata"`
}

type enclosure struct {
	URL    string `xml:"url,attr"`
	Length int64  `xml:"length,attr"`
	Type   string `xml:"type,attr"`
}

type transcript struct {
	URL  string `xml:"url,attr"`
	Type string `xml:"type,attr"`
}

func newEncoder(w io.Writer) *xml.Encoder {
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	return enc
}

// GUID returns the guid of an audio's item: its identity, which neither an
// update of its text nor a new rendering changes. IDs are kept by
// copy-data, so it survives a move to other stores.
func GUID(a *narrator.Audio) string {
	return "narrator:audio:" + strconv.FormatInt(a.ProjectID, 10) + ":" + strconv.FormatInt(a.ID, 10)
}

// newDocument builds the feed's document. Every text goes through clean:
// encoding/xml escapes markup, and clean drops what XML 1.0 cannot hold.
func newDocument(c *narrator.FeedContent, mediaURL func(string) string, publicURL string) *rss {
	f, p := c.Feed, c.Project
	link := p.URL
	if link == "" {
		link = publicURL + "/"
	}
	ch := channel{
		Title:         clean(f.Title),
		Link:          clean(link),
		Description:   htmlText(f.Description),
		Language:      clean(f.Language),
		LastBuildDate: c.LastModified().UTC().Format(time.RFC1123Z),
		Generator:     "Narrator",
		Self:          atomLink{Href: publicURL + narrator.FeedPath(f.Token), Rel: "self", Type: "application/rss+xml"},
		Author:        clean(f.Author),
		Explicit:      strconv.FormatBool(f.Explicit),
		Items:         []item{},
	}
	if f.ImageURL != "" {
		ch.Image = &href{Href: clean(f.ImageURL)}
	}
	if f.Category != "" {
		top, sub := narrator.SplitFeedCategory(f.Category)
		ch.Category = &category{Text: top}
		if sub != "" {
			ch.Category.Sub = &category{Text: sub}
		}
	}
	for _, a := range c.Audios {
		mp3, ok := a.MediaOf(narrator.ContentTypeMP3)
		if !ok || mp3.Key == "" {
			continue // not published: nothing to listen to
		}
		it := item{
			Title:       clean(itemTitle(a)),
			Link:        clean(a.ArticleURL),
			Description: htmlText(excerpt(a.Body, 600)),
			GUID:        guid{IsPermaLink: "false", Value: GUID(a)},
			PubDate:     a.CreatedAt.UTC().Format(time.RFC1123Z),
			Author:      clean(a.Author),
			Enclosure:   enclosure{URL: mediaURL(mp3.Key), Length: mp3.Bytes, Type: "audio/mpeg"},
			Duration:    strconv.FormatInt((a.DurationMS+500)/1000, 10),
		}
		if it.Description == "" {
			it.Description = htmlText(itemTitle(a))
		}
		// Sizes and transcripts came with the same version: an audio
		// published before it has neither until it is synthesised again.
		if mp3.Bytes > 0 {
			_, vtt := narrator.TranscriptKeys(mp3.Key)
			it.Transcript = &transcript{URL: mediaURL(vtt), Type: "text/vtt"}
		}
		ch.Items = append(ch.Items, it)
	}
	return &rss{Version: "2.0", XMLNSI: NamespaceITunes, XMLNSP: NamespacePodcast, XMLNSAtom: NamespaceAtom, Channel: ch}
}

// itemTitle is the audio's title, or for an audio without one the start of
// its text, or its ID.
func itemTitle(a *narrator.Audio) string {
	if t := strings.TrimSpace(a.Title); t != "" {
		return t
	}
	if t := excerpt(a.Body, 80); t != "" {
		return t
	}
	return "Audio " + strconv.FormatInt(a.ID, 10)
}

// excerpt returns the plain text of the start of an article body (HTML,
// Markdown, SSML or text), cut at a word boundary to at most limit
// characters, with an ellipsis if it was cut.
func excerpt(body string, limit int) string {
	var sb strings.Builder
	for _, b := range article.Parse(body).Blocks {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(b.Text())
		if utf8.RuneCountInString(sb.String()) > limit {
			break
		}
	}
	runes := []rune(sb.String())
	if len(runes) <= limit {
		return string(runes)
	}
	cut := string(runes[:limit])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-") + "…"
}

// clean returns s without the characters XML 1.0 forbids (control
// characters other than tab, newline and carriage return, surrogates,
// U+FFFE and U+FFFF) and with invalid UTF-8 dropped.
func clean(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !xmlChar(r) }) < 0 && utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				continue // an invalid byte
			}
		}
		if xmlChar(r) {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// xmlChar reports whether r is a Char of XML 1.0.
func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// htmlText writes plain text as the HTML that RSS descriptions hold, so
// that podcast apps, which render them as HTML, show "<b>" as typed rather
// than as markup.
func htmlText(s string) string { return htmlEscaper.Replace(clean(s)) }

// htmlEscaper escapes what HTML text must not hold literally.
var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
