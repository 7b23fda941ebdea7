package feed

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/xml"
	"html"
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
	NamespaceContent = "http://purl.org/rss/1.0/modules/content/"
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
	XMLNSC    string   `xml:"xmlns:content,attr"`
	Channel   channel  `xml:"channel"`
}

type channel struct {
	Title         string     `xml:"title"`
	Link          string     `xml:"link"`
	Description   string     `xml:"description"`
	Language      string     `xml:"language"`
	LastBuildDate string     `xml:"lastBuildDate"`
	Generator     string     `xml:"generator"`
	Links         []atomLink `xml:"atom:link"`
	Author        string     `xml:"itunes:author,omitempty"`
	Owner         *owner     `xml:"itunes:owner"`
	Image         *href      `xml:"itunes:image"`
	Category      *category  `xml:"itunes:category"`
	Explicit      string     `xml:"itunes:explicit"`
	Type          string     `xml:"itunes:type"`
	GUID          string     `xml:"podcast:guid"`
	Medium        string     `xml:"podcast:medium"`
	Items         []item     `xml:"item"`
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
}

// owner is an itunes:owner.
type owner struct {
	Name  string `xml:"itunes:name"`
	Email string `xml:"itunes:email,omitempty"`
}

type href struct {
	Href string `xml:"href,attr"`
}

type category struct {
	Text string    `xml:"text,attr"`
	Sub  *category `xml:"itunes:category"`
}

type item struct {
	Title       string       `xml:"title"`
	Link        string       `xml:"link,omitempty"`
	Description string       `xml:"description"`
	Content     string       `xml:"content:encoded"`
	GUID        guid         `xml:"guid"`
	PubDate     string       `xml:"pubDate"`
	Author      string       `xml:"itunes:author,omitempty"`
	Enclosure   enclosure    `xml:"enclosure"`
	Duration    string       `xml:"itunes:duration"`
	Image       *href        `xml:"itunes:image"`
	Person      *person      `xml:"podcast:person"`
	Transcripts []transcript `xml:"podcast:transcript"`
	Chapters    *chapters    `xml:"podcast:chapters"`
	Txt         txt          `xml:"podcast:txt"`
}

// chapters is a podcast:chapters.
type chapters struct {
	URL  string `xml:"url,attr"`
	Type string `xml:"type,attr"`
}

// person is a podcast:person: the article's author, in the namespace's
// taxonomy the role "author" of the group "writing".
type person struct {
	Group string `xml:"group,attr"`
	Role  string `xml:"role,attr"`
	Name  string `xml:",chardata"`
}

// txt is a podcast:txt.
type txt struct {
	Purpose string `xml:"purpose,attr"`
	Value   string `xml:",chardata"`
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
	URL      string `xml:"url,attr"`
	Type     string `xml:"type,attr"`
	Language string `xml:"language,attr,omitempty"`
	Rel      string `xml:"rel,attr,omitempty"`
}

// AIContent is the podcast:txt of every item, with the purpose
// "ai-content": a synthetic voice reads every audio, which Apple's
// guidelines require feeds to disclose.
const AIContent = "Narrated by a synthetic voice (text to speech) from the written article."

// podcastNamespaceUUID is the namespace of podcast:guid's UUIDv5, which
// the Podcasting 2.0 namespace defines.
var podcastNamespaceUUID = [16]byte{0xea, 0xd4, 0xc2, 0x36, 0xbf, 0x58, 0x58, 0xc6, 0xa2, 0xc6, 0xa6, 0xb2, 0x8d, 0x12, 0x8c, 0xb6}

// PodcastGUID returns the podcast:guid of the feed at feedURL, as the
// Podcasting 2.0 namespace defines it: the UUIDv5, in its namespace, of
// the URL without its scheme and trailing slashes. It follows the URL:
// a rotated token gives the feed a new one.
func PodcastGUID(feedURL string) string {
	s := feedURL
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	s = strings.TrimRight(s, "/")
	h := sha1.New()
	h.Write(podcastNamespaceUUID[:])
	h.Write([]byte(s))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // the RFC 4122 variant
	x := hex.EncodeToString(u)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
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
func newDocument(c *narrator.FeedContent, mediaURL func(string) string, publicURL, hub string) *rss {
	f, p := c.Feed, c.Project
	link := p.URL
	if link == "" {
		link = publicURL + "/"
	}
	self := publicURL + narrator.FeedPath(f.Token)
	ch := channel{
		Title:         clean(f.Title),
		Link:          clean(link),
		Description:   htmlText(f.Description),
		Language:      clean(f.Language),
		LastBuildDate: c.LastModified().UTC().Format(time.RFC1123Z),
		Generator:     "Narrator",
		Links:         []atomLink{{Href: self, Rel: "self", Type: "application/rss+xml"}},
		Author:        clean(f.Author),
		Explicit:      strconv.FormatBool(f.Explicit),
		Type:          "episodic",
		GUID:          PodcastGUID(self),
		Medium:        "podcast",
		Items:         []item{},
	}
	if hub != "" {
		// WebSub: subscribers ask the hub for pushes of the feed at its
		// self URL, which Narrator's pings name (Pinger).
		ch.Links = append(ch.Links, atomLink{Href: hub, Rel: "hub"})
	}
	if f.OwnerName != "" {
		ch.Owner = &owner{Name: clean(f.OwnerName), Email: clean(f.OwnerEmail)}
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
		if it, ok := newItem(c, a, mediaURL); ok {
			ch.Items = append(ch.Items, it)
		}
	}
	return &rss{Version: "2.0", XMLNSI: NamespaceITunes, XMLNSP: NamespacePodcast, XMLNSAtom: NamespaceAtom, XMLNSC: NamespaceContent, Channel: ch}
}

// newItem returns the item of a, one of c.Audios, and false if a has no
// published MP3.
func newItem(c *narrator.FeedContent, a *narrator.Audio, mediaURL func(string) string) (item, bool) {
	mp3, ok := a.MediaOf(narrator.ContentTypeMP3)
	if !ok || mp3.Key == "" {
		return item{}, false // not published: nothing to listen to
	}
	it := item{
		Title:     clean(itemTitle(a)),
		Link:      clean(a.ArticleURL),
		GUID:      guid{IsPermaLink: "false", Value: GUID(a)},
		PubDate:   c.ItemDate(a).Format(time.RFC1123Z),
		Author:    clean(a.Author),
		Enclosure: enclosure{URL: mediaURL(mp3.Key), Length: mp3.Bytes, Type: "audio/mpeg"},
		Duration:  strconv.FormatInt((a.DurationMS+500)/1000, 10),
		Txt:       txt{Purpose: "ai-content", Value: AIContent},
	}
	// A signed project's audios have no body here
	// (narrator.FeedBodyCharsOf): their items say their title.
	short, long := excerpt(a.Body, 600), articleHTML(a.Body, 1_500)
	if short == "" {
		short, long = itemTitle(a), "<p>"+htmlText(itemTitle(a))+"</p>"
	}
	it.Description, it.Content = "<p>"+htmlText(short)+"</p>", long
	if a.ArticleURL != "" {
		back := "<p><a href=\"" + html.EscapeString(clean(a.ArticleURL)) + "\">" + htmlText(a.ArticleURL) + "</a></p>"
		it.Description += back
		it.Content += back
	}
	if img := narrator.ArticleImage(a); img != "" {
		it.Image = &href{Href: clean(img)}
	}
	if it.Author != "" {
		it.Person = &person{Group: "writing", Role: "author", Name: it.Author}
	} else {
		it.Author = clean(c.Feed.Author)
	}
	// Sizes, transcripts and chapters came with the same version: an
	// audio published before it has none until it is synthesised again.
	// A signed project's transcripts and chapters are its articles' text,
	// which its feed, read by anyone with its URL, does not give.
	if mp3.Bytes > 0 && !c.Signed {
		_, vttKey := narrator.TranscriptKeys(mp3.Key)
		lang := narrator.LanguageTag(a.Metadata[narrator.MetadataLanguage])
		if lang == "" {
			lang = c.Feed.Language
		}
		lang = clean(narrator.FeedLanguage(lang))
		it.Transcripts = []transcript{
			{URL: mediaURL(vttKey), Type: "text/vtt", Language: lang, Rel: "captions"},
			{URL: mediaURL(narrator.PodcastTranscriptKey(mp3.Key)), Type: "application/json", Language: lang},
		}
		it.Chapters = &chapters{URL: mediaURL(narrator.ChaptersKey(mp3.Key)), Type: "application/json+chapters"}
	}
	return it, true
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
	return cutWords(strings.ReplaceAll(article.Parse(body).Text(), "\n", " "), limit)
}

// cutWords returns s if it has at most limit characters, and otherwise
// its start cut at a word boundary to at most limit characters, with an
// ellipsis.
func cutWords(s string, limit int) string {
	runes := []rune(s)
	if len(runes) <= limit {
		return s
	}
	cut := string(runes[:limit])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-") + "…"
}

// articleHTML returns the start of an article body as HTML paragraphs, one
// per block, of at most limit characters of text in all, cut at a word
// boundary with an ellipsis; "" for a body without text. A body of
// narrator.FeedBodyChars characters was cut by the store, maybe within a
// word: its last block loses its last word.
func articleHTML(body string, limit int) string {
	var texts []string
	for _, b := range article.Parse(body).Blocks {
		if t := strings.TrimSpace(b.Text()); t != "" {
			texts = append(texts, t)
		}
	}
	if n := len(texts); n > 0 && utf8.RuneCountInString(body) >= narrator.FeedBodyChars {
		texts[n-1] = cutWords(texts[n-1], utf8.RuneCountInString(texts[n-1])-1)
	}
	var sb strings.Builder
	for _, t := range texts {
		if limit <= 0 {
			break
		}
		n := utf8.RuneCountInString(t)
		sb.WriteString("<p>" + htmlText(cutWords(t, limit)) + "</p>")
		limit -= n
	}
	return sb.String()
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
