package narrator

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Audio states.
const (
	StateUnprocessed = "unprocessed" // waiting for or under synthesis
	StateProcessed   = "processed"   // media published
	StateFailed      = "failed"      // synthesis gave up; Audio.Error says why
)

// Media content types, in the order single-audio responses list them.
const (
	ContentTypeMP3  = "mp3"
	ContentTypeM3U8 = "m3u8"
)

// MediaTypes returns the content types of the media every audio has,
// created with it, in the order single-audio responses list them. Stores
// insert an audio's media in this order and read them back in it.
func MediaTypes() []string { return []string{ContentTypeMP3, ContentTypeM3U8} }

// Limits on article fields. The body limit is counted in characters.
const (
	MaxBodyChars       = 100_000
	MaxTitleChars      = 1_000
	MaxAuthorChars     = 500
	MaxURLChars        = 2_048
	MaxExternalIDChars = 255
	MaxMetadataKeys    = 100
	MaxMetadataKey     = 200
	MaxMetadataValue   = 2_000
)

// Audio is one article and the speech made from it.
type Audio struct {
	ID         int64
	ProjectID  int64
	ExternalID string // "" when the client gave none
	Title      string
	Body       string
	Author     string
	ArticleURL string
	Metadata   map[string]string
	State      string
	Error      string // why synthesis failed, in words for a publisher; "" unless failed
	// Revision counts changes to what is spoken (title, body, author). A
	// synthesis job carries the revision it was made for, so a result for an
	// older revision is never published.
	Revision   int
	DurationMS int64 // length of the published audio; 0 until processed
	Media      []Media
	Deleted    bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Media is one published rendition of an audio.
type Media struct {
	ID          int64
	AudioID     int64
	ContentType string // ContentTypeMP3 or ContentTypeM3U8
	// Key is the object key in the media store, "" until the audio is
	// processed. Keys contain a random token, so URLs built from them are
	// unguessable and each key's content never changes.
	Key string
	// Bytes is the size of the object at Key, recorded when it is
	// published (the podcast feed's enclosure length); 0 until then.
	Bytes int64
}

// Validate checks an audio's client-supplied fields.
func (a *Audio) Validate() error {
	if strings.TrimSpace(a.Body) == "" {
		return Errorf(EINVALID, "body is required and must not be blank")
	}
	checks := []struct {
		field string
		value string
		max   int
	}{
		{"body", a.Body, MaxBodyChars},
		{"title", a.Title, MaxTitleChars},
		{"author", a.Author, MaxAuthorChars},
		{"article_url", a.ArticleURL, MaxURLChars},
		{"external_id", a.ExternalID, MaxExternalIDChars},
	}
	for _, c := range checks {
		if err := checkText(c.field, c.value); err != nil {
			return err
		}
		if n := utf8.RuneCountInString(c.value); n > c.max {
			return Errorf(EINVALID, "%s is %d characters long; at most %d are allowed", c.field, n, c.max)
		}
	}
	if strings.ContainsRune(a.ExternalID, 0) || strings.TrimSpace(a.ExternalID) != a.ExternalID {
		return Errorf(EINVALID, "external_id must not have leading or trailing spaces or NUL characters")
	}
	if a.ArticleURL != "" {
		if err := validateURL(a.ArticleURL); err != nil {
			return Errorf(EINVALID, "article_url %s", err.Message)
		}
	}
	if len(a.Metadata) > MaxMetadataKeys {
		return Errorf(EINVALID, "metadata has %d keys; at most %d are allowed", len(a.Metadata), MaxMetadataKeys)
	}
	for k, v := range a.Metadata {
		if k == "" || len(k) > MaxMetadataKey || checkText("", k) != nil {
			return Errorf(EINVALID, "metadata keys must be 1 to %d bytes of UTF-8 without NUL characters", MaxMetadataKey)
		}
		if len(v) > MaxMetadataValue || checkText("", v) != nil {
			return Errorf(EINVALID, "metadata value of %q must be at most %d bytes of UTF-8 without NUL characters", k, MaxMetadataValue)
		}
	}
	return validateImageMetadata(a.Metadata)
}

// SpokenEqual reports whether a and b would be read the same way, that is
// whether their title, body and author are equal.
func (a *Audio) SpokenEqual(b *Audio) bool {
	return a.Title == b.Title && a.Body == b.Body && a.Author == b.Author
}

// SortMedia orders an audio's media as MediaTypes lists their content
// types, then by ID: the order stores return them in.
func SortMedia(media []Media) {
	types := MediaTypes()
	rank := func(ct string) int {
		if i := slices.Index(types, ct); i >= 0 {
			return i
		}
		return len(types)
	}
	slices.SortStableFunc(media, func(a, b Media) int {
		return cmp.Or(cmp.Compare(rank(a.ContentType), rank(b.ContentType)), cmp.Compare(a.ID, b.ID))
	})
}

// MediaOf returns the audio's media of the given content type.
func (a *Audio) MediaOf(contentType string) (Media, bool) {
	for _, m := range a.Media {
		if m.ContentType == contentType {
			return m, true
		}
	}
	return Media{}, false
}
