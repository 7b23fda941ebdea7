package narrator

import (
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// EUNREADABLE: a web page to import could not be fetched or holds no
// article; the message says why, in words a user can read.
const EUNREADABLE = "page_unreadable"

// Page is an article read from its web page, to be imported as an audio.
type Page struct {
	// URL is the page's canonical URL: its <link rel=canonical> when that
	// is on the page's own site (its registrable domain), else where it
	// was fetched from, so that a page never claims another site's
	// article (internal/extract applies this, with the public suffix list).
	URL    string
	Title  string
	Author string
	// Language is the page's language tag ("en-GB"), "" when it names none.
	Language string
	// Body is the article as HTML of headings, paragraphs, lists and quotes.
	Body string
	// Image is the URL of the article's image (its og:image), "" when the
	// page names none.
	Image string
}

// MetadataLanguage is the metadata key under which an imported audio keeps
// its page's language.
const MetadataLanguage = "language"

// languageTagRE matches a plausible language tag: "en", "en-GB",
// "zh-Hant-TW", "pt_BR".
var languageTagRE = regexp.MustCompile(`^[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8})*$`)

// LanguageTag returns s, trimmed, if it is a plausible language tag of at
// most 35 characters (the longest a tag needs in practice), "" otherwise:
// pages and feeds may say anything in their lang attributes.
func LanguageTag(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 35 || !languageTagRE.MatchString(s) {
		return ""
	}
	return s
}

// Audio returns the audio that importing p into a project creates. This is
// the one rule the API and the dashboard follow: p's title, author and
// body, p's URL in its canonical form (CanonicalURL) as the article URL,
// externalID as given or else that same URL, and metadata with p's
// language under MetadataLanguage and its image under MetadataImage,
// unless metadata names them. A title or
// author longer than its limit is cut at the limit, so that a page with a
// huge title still imports. It returns EUNREADABLE for an article longer
// than an audio may hold, and EINVALID when no external ID is given and
// the URL is too long to be one.
func (p *Page) Audio(projectID int64, externalID string, metadata map[string]string) (*Audio, error) {
	if n := utf8.RuneCountInString(p.Body); n > MaxBodyChars {
		return nil, Errorf(EUNREADABLE, "the page could not be imported: its article is %d characters long, and an audio holds at most %d", n, MaxBodyChars)
	}
	u := CanonicalURL(p.URL)
	if externalID == "" {
		if n := utf8.RuneCountInString(u); n > MaxExternalIDChars {
			return nil, Errorf(EINVALID, "external_id is required for this page: its canonical URL is %d characters long, and an external ID at most %d", n, MaxExternalIDChars)
		}
		externalID = u
	}
	metadata = withDefault(metadata, MetadataLanguage, p.Language)
	metadata = withDefault(metadata, MetadataImage, ArticleImageURL(p.Image))
	return &Audio{
		ProjectID:  projectID,
		ExternalID: externalID,
		Title:      cut(p.Title, MaxTitleChars),
		Author:     cut(p.Author, MaxAuthorChars),
		Body:       p.Body,
		ArticleURL: u,
		Metadata:   metadata,
	}, nil
}

// cut returns s cut to at most n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:n]))
}

// CanonicalURL returns the canonical form of an http or https URL: scheme
// and host in lower case, without the default port, the fragment or a
// trailing "?", and with "/" for an empty path. Anything else is returned
// as it is.
func CanonicalURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return s
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return s
	}
	u.Host = strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		u.Host = strings.TrimSuffix(u.Host, ":"+port)
	}
	u.Fragment, u.RawFragment = "", ""
	u.ForceQuery = false
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}
