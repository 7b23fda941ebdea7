// Package source reads the sources of rss projects, the feeds Narrator
// imports from (not the podcast feed it publishes, internal/feed): it fetches
// a source through the guarded client (internal/fetch), parses it with gofeed
// (the one package that imports it), and turns its new and changed items into
// audios through the store's create, by the rules of narrator.Source. A
// Poller reads due sources (each under a lease in the store, so one node at a
// time reads it) and sources asked for; it subscribes to a source's WebSub
// hub and serves the callback where the hub verifies and pushes.
package source

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mmcdole/gofeed"
	ext "github.com/mmcdole/gofeed/extensions"
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/article"
	"golang.org/x/net/html/charset"
)

// FeedTypes are the media types a feed may be served as. Feeds are often
// served as plain XML or text, so those are read too.
var FeedTypes = []string{
	"application/rss+xml", "application/atom+xml", "application/rdf+xml", "application/xml", "text/xml",
	"application/feed+json", "application/json", "text/plain",
}

// Feed is a parsed feed: its items in the feed's order.
type Feed struct {
	Items []*narrator.SourceItem
	// Total counts the feed's items, of which Items holds at most
	// narrator.MaxItemsPerSource.
	Total int
}

// Document is a feed as it was read.
type Document struct {
	// Body is the feed as served.
	Body []byte
	// Charset is the charset parameter of the answer's Content-Type; ""
	// when it names none.
	Charset string
	// URL is where the feed was read from, after redirects: relative
	// links resolve against it, after the feed's own xml:base.
	URL string
}

// ErrNotFeed is the error of Parse for a body that is no feed; its text is
// what a user reads.
var ErrNotFeed = errors.New("the feed is not RSS, Atom or JSON Feed")

// ErrNotJSONFeed is the error of Parse for JSON that is not a JSON Feed;
// its text is what a user reads.
var ErrNotJSONFeed = errors.New(`the document is JSON but not a JSON Feed: it has no "version" of https://jsonfeed.org/version/1.1 or 1`)

// Parse parses an RSS 0.9x, 1.0 or 2.0, Atom or JSON Feed document. A body
// that is not UTF-8 and names no encoding of its own is read in the
// answer's charset. Its errors say in plain words why the body is no feed.
func Parse(doc Document) (*Feed, error) {
	body := toUTF8(doc.Body, doc.Charset)
	var itemLangs []string
	isJSON := firstByte(body) == '{'
	if isJSON {
		langs, err := checkJSONFeed(body)
		if err != nil {
			return nil, err
		}
		itemLangs = langs
	}
	f, err := gofeed.NewParser().Parse(bytes.NewReader(body))
	if err != nil {
		if errors.Is(err, gofeed.ErrFeedTypeNotDetected) {
			return nil, ErrNotFeed
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return nil, errors.New("the JSON Feed is not valid: its " + quoteField(typeErr.Field) + " is " + jsonKind(typeErr.Value))
		}
		return nil, errors.New("the feed could not be parsed: " + oneLine(err.Error()))
	}
	if !isJSON {
		itemLangs = xmlItemLanguages(body)
	}
	if len(itemLangs) != len(f.Items) {
		// The items could not be matched with gofeed's: the feed's
		// language is all there is.
		itemLangs = nil
	}
	feedLang := narrator.LanguageTag(f.Language)
	base, err := url.Parse(doc.URL)
	if err != nil || !base.IsAbs() {
		base = nil
	}
	out := &Feed{Total: len(f.Items)}
	for i, it := range f.Items[:min(len(f.Items), narrator.MaxItemsPerSource)] {
		if it == nil {
			continue
		}
		item := &narrator.SourceItem{
			GUID:       it.GUID,
			Link:       resolve(base, it.Link),
			Title:      plainText(it.Title),
			Content:    plainText(it.Content),
			Summary:    plainText(it.Description),
			Categories: it.Categories,
			Language:   feedLang,
		}
		var lang string
		if it.DublinCoreExt != nil && len(it.DublinCoreExt.Language) > 0 {
			lang = narrator.LanguageTag(it.DublinCoreExt.Language[0])
		}
		if lang == "" && itemLangs != nil {
			lang = narrator.LanguageTag(itemLangs[i])
		}
		if lang != "" {
			item.Language = lang
		}
		var authors []string
		for _, p := range it.Authors {
			if p != nil && strings.TrimSpace(p.Name) != "" {
				authors = append(authors, strings.TrimSpace(plainText(p.Name)))
			}
		}
		item.Author = strings.Join(authors, ", ")
		switch {
		case it.PublishedParsed != nil:
			item.Published = it.PublishedParsed.UTC()
		case it.UpdatedParsed != nil:
			item.Published = it.UpdatedParsed.UTC()
		}
		if it.UpdatedParsed != nil {
			item.Updated = it.UpdatedParsed.UTC()
		}
		item.Image = itemImage(base, it)
		out.Items = append(out.Items, item)
	}
	return out, nil
}

// firstByte returns the first byte of body after white space and a
// byte-order mark, 0 for none.
func firstByte(body []byte) byte {
	s := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("\uFEFF")), " \t\r\n")
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

// xmlDecl matches an XML declaration and its encoding, if it names one.
var xmlDecl = regexp.MustCompile(`^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([^"']*)["']`)

// toUTF8 returns body in UTF-8, read in the answer's charset, when body is
// not UTF-8 and names no encoding of its own (a byte-order mark, or an XML
// declaration's encoding, which the XML parser honours). Servers often send
// a wrong charset with a feed that is UTF-8, so a body that is valid UTF-8
// is kept as it is.
func toUTF8(body []byte, label string) []byte {
	if label == "" || utf8.Valid(body) {
		return body
	}
	if bytes.HasPrefix(body, []byte{0xFE, 0xFF}) || bytes.HasPrefix(body, []byte{0xFF, 0xFE}) || bytes.HasPrefix(body, []byte("\uFEFF")) {
		return body
	}
	if m := xmlDecl.FindSubmatch(body[:min(len(body), 200)]); m != nil {
		if _, name := charset.Lookup(string(m[1])); name != "" && name != "utf-8" {
			return body
		}
	}
	enc, name := charset.Lookup(label)
	if enc == nil || name == "utf-8" {
		return body
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return out
}

// plainText returns s with its character references decoded once more when
// it holds no markup, as feed readers do: feeds often escape a plain-text
// summary twice ("There&amp;rsquo;s"), which would otherwise be read out
// as "There and rsquo;s".
func plainText(s string) string {
	if !strings.ContainsRune(s, '&') || article.HasHTML(s) {
		return s
	}
	return html.UnescapeString(s)
}

// resolve returns link resolved against base, the feed's own URL; gofeed
// has already resolved it against the feed's xml:base, if any.
func resolve(base *url.URL, link string) string {
	link = strings.TrimSpace(link)
	if base == nil || link == "" {
		return link
	}
	u, err := url.Parse(link)
	if err != nil || u.IsAbs() {
		return link
	}
	return base.ResolveReference(u).String()
}

// xmlNamespace is the namespace of the xml: prefix.
const xmlNamespace = "http://www.w3.org/XML/1998/namespace"

// xmlItemLanguages returns the xml:lang in scope at each item of an RSS
// feed (under its channel, or its root in RSS 1.0) or each entry of an
// Atom feed, in the feed's order: the item's own, else the nearest of its
// ancestors'. It returns nil when body cannot be read to its end.
func xmlItemLanguages(body []byte) []string {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = false
	d.CharsetReader = charset.NewReaderLabel
	type open struct{ name, lang string }
	var stack []open
	var langs []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return langs
		}
		if err != nil {
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			e := open{name: strings.ToLower(t.Name.Local)}
			if len(stack) > 0 {
				e.lang = stack[len(stack)-1].lang
			}
			for _, a := range t.Attr {
				if a.Name.Local == "lang" && (a.Name.Space == "xml" || a.Name.Space == xmlNamespace) {
					e.lang = strings.TrimSpace(a.Value)
				}
			}
			switch depth := len(stack); {
			case (e.name == "entry" || e.name == "item") && depth == 1,
				e.name == "item" && depth == 2 && stack[1].name == "channel":
				langs = append(langs, e.lang)
			}
			stack = append(stack, e)
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// jsonFeedVersion matches the version URLs of JSON Feed.
var jsonFeedVersion = regexp.MustCompile(`^https?://jsonfeed\.org/version/\d`)

// checkJSONFeed returns ErrNotJSONFeed unless body is a JSON Feed, or a
// plain-words error if it is not valid JSON, and else each item's
// language, "" for items that name none.
func checkJSONFeed(body []byte) ([]string, error) {
	var doc struct {
		Version json.RawMessage   `json:"version"`
		Items   []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field == "items" {
			return nil, errors.New(`the JSON Feed is not valid: its "items" is ` + jsonKind(typeErr.Value) + `, not a list`)
		}
		return nil, errors.New("the feed is not valid JSON: " + oneLine(strings.TrimPrefix(err.Error(), "json: ")))
	}
	var version string
	if json.Unmarshal(doc.Version, &version) != nil || !jsonFeedVersion.MatchString(version) {
		return nil, ErrNotJSONFeed
	}
	langs := make([]string, len(doc.Items))
	for i, raw := range doc.Items {
		var it struct {
			Language string `json:"language"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) && typeErr.Field == "" {
				return nil, errors.New(`the JSON Feed is not valid: an item is ` + jsonKind(typeErr.Value) + `, not an object`)
			}
			continue // gofeed says what is wrong with it
		}
		langs[i] = it.Language
	}
	return langs, nil
}

// jsonKind names a JSON value's kind as UnmarshalTypeError.Value does, in
// words.
func jsonKind(v string) string {
	switch v {
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "null":
		return "null"
	}
	if strings.HasPrefix(v, "number") {
		return "a number"
	}
	return "a " + v
}

// quoteField quotes a JSON field path for an error message, at most 100
// bytes of it, without the "alias" steps of gofeed's own types.
func quoteField(s string) string {
	parts := strings.Split(s, ".")
	parts = slices.DeleteFunc(parts, func(p string) bool { return p == "alias" })
	s = strings.Join(parts, ".")
	if len(s) > 100 {
		s = strings.ToValidUTF8(s[:100], "")
	}
	return strconv.Quote(s)
}

// oneLine returns the first line of s, at most 200 bytes of it.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}

// itemImage returns the URL of an item's image, resolved against base:
// the first http or https one of its media:content of medium image (or
// an image type), media:thumbnail, image enclosure, and the image gofeed
// found (itunes:image, a JSON Feed's image); "" for none.
func itemImage(base *url.URL, it *gofeed.Item) string {
	var candidates []string
	for _, group := range it.Extensions["media"]["group"] {
		for _, c := range group.Children["content"] {
			candidates = append(candidates, mediaImage(c))
		}
	}
	for _, c := range it.Extensions["media"]["content"] {
		candidates = append(candidates, mediaImage(c))
	}
	for _, c := range it.Extensions["media"]["thumbnail"] {
		candidates = append(candidates, c.Attrs["url"])
	}
	for _, e := range it.Enclosures {
		if e != nil && strings.HasPrefix(strings.ToLower(e.Type), "image/") {
			candidates = append(candidates, e.URL)
		}
	}
	if it.ITunesExt != nil {
		candidates = append(candidates, it.ITunesExt.Image)
	}
	if it.Image != nil {
		candidates = append(candidates, it.Image.URL)
	}
	for _, c := range candidates {
		if u := narrator.ArticleImageURL(resolve(base, c)); u != "" {
			return u
		}
	}
	return ""
}

// mediaImage returns the URL of a media:content that is an image, "" for
// other media.
func mediaImage(c ext.Extension) string {
	if c.Attrs["medium"] == "image" || strings.HasPrefix(strings.ToLower(c.Attrs["type"]), "image/") {
		return c.Attrs["url"]
	}
	return ""
}
