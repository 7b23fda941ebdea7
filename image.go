package narrator

import (
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// MetadataImage is the metadata key of the URL of an audio's article
// image, which its podcast feed item shows as its itunes:image. Feed and
// page imports set it from the article; API clients may give it. Narrator
// never fetches it.
const MetadataImage = "image_url"

// ArticleImageURL returns s, trimmed, if it is an absolute http or https
// URL of at most MaxURLChars characters, and "" otherwise: an image URL
// that feeds and pages may give.
func ArticleImageURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || utf8.RuneCountInString(s) > MaxURLChars || !ValidText(s) || validateURL(s) != nil {
		return ""
	}
	return s
}

// ArticleImage returns the URL of the image of a's article: its metadata's
// MetadataImage if that is a valid image URL (ArticleImageURL), else "".
func ArticleImage(a *Audio) string {
	return ArticleImageURL(a.Metadata[MetadataImage])
}

// validateImageMetadata checks an audio's MetadataImage, if set: an
// absolute http or https URL.
func validateImageMetadata(metadata map[string]string) error {
	if v, ok := metadata[MetadataImage]; ok && v != "" && ArticleImageURL(v) != v {
		return Errorf(EINVALID, "metadata.%s must be an absolute http or https URL of at most %d characters", MetadataImage, MaxURLChars)
	}
	return nil
}

// withDefault returns metadata with key set to v unless metadata names
// key already or v is empty; metadata itself is not changed.
func withDefault(metadata map[string]string, key, v string) map[string]string {
	if _, ok := metadata[key]; ok || v == "" {
		return metadata
	}
	m := make(map[string]string, len(metadata)+1)
	for k, x := range metadata {
		m[k] = x
	}
	m[key] = v
	return m
}

// PlayerArtwork returns the image the player shows for a on the lock
// screen (Media Session): its article image (ArticleImage) if that is on
// the article's own origin or on one of the project's allowed origins,
// else "". The listener's browser fetches it; an image anywhere else, such
// as a third party's CDN, would tell that site who listens to what.
func PlayerArtwork(a *Audio, access *ProjectAccess) string {
	img := ArticleImage(a)
	if img == "" {
		return ""
	}
	origin, err := CanonicalOrigin(originOf(img))
	if err != nil {
		return ""
	}
	if article, err := CanonicalOrigin(originOf(a.ArticleURL)); err == nil && article == origin {
		return img
	}
	if access != nil && slices.Contains(access.AllowedOrigins, origin) {
		return img
	}
	return ""
}

// originOf returns the scheme and host of an absolute URL, "" if s is not
// one.
func originOf(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
