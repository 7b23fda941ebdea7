package narrator

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Feed is a project's podcast feed: its settings and the token in its URL.
// A project has at most one.
type Feed struct {
	ProjectID   int64
	Enabled     bool // a feed turned off answers 404, as an unknown one does
	Title       string
	Description string
	Author      string
	ImageURL    string // "" when not set
	Language    string // a language tag such as "en-US"
	Category    string // "" or an Apple Podcasts category, "Top" or "Top > Sub"
	Explicit    bool
	// OwnerName and OwnerEmail are the feed's itunes:owner, whom
	// directories write to verify the feed; "" when not set. An email
	// needs a name.
	OwnerName, OwnerEmail string
	// Token is the secret part of the feed's URL (NewFeedToken). Rotating
	// it makes the old URL answer 404.
	Token     string
	CreatedAt time.Time
	UpdatedAt time.Time // last change of the settings or the token
}

// Limits on feed settings, in characters.
const (
	MaxFeedTitleChars       = 255
	MaxFeedDescriptionChars = 4_000
	MaxFeedAuthorChars      = 255
	MaxFeedLanguageChars    = 35
)

// MaxFeedItems is how many audios a feed lists at most: the newest ones.
const MaxFeedItems = 300

// FeedBodyChars is how much of each audio's body a feed reads, in
// characters: enough for an item's description, and a bounded read
// however long the articles are.
const FeedBodyChars = 2_000

// FeedBodyCharsOf returns how much of each audio's body the podcast feed
// of a project with access settings a shows: FeedBodyChars for a public
// project, and none for a signed one, whose articles are for the readers
// it signs tokens for (a paywall): its feed's items say only their title.
func FeedBodyCharsOf(a ProjectAccess) int {
	if a.Mode == AccessSigned {
		return 0
	}
	return FeedBodyChars
}

// feedTokenBytes is the randomness in a feed token: 256 bits, far beyond
// guessing, written as 43 characters of URL-safe base64.
const feedTokenBytes = 32

// NewFeedToken returns a new random feed token.
func NewFeedToken() (string, error) {
	b := make([]byte, feedTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("feed token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ValidateFeedToken reports whether token has the form NewFeedToken gives,
// and returns an EINVALID *Error otherwise.
func ValidateFeedToken(token string) error {
	if len(token) != base64.RawURLEncoding.EncodedLen(feedTokenBytes) {
		return Errorf(EINVALID, "a feed token is %d characters long", base64.RawURLEncoding.EncodedLen(feedTokenBytes))
	}
	if _, err := base64.RawURLEncoding.Strict().DecodeString(token); err != nil {
		return Errorf(EINVALID, "a feed token is URL-safe base64")
	}
	return nil
}

// FeedPath returns the path, under the public URL, of the feed with token.
func FeedPath(token string) string { return "/feeds/" + token + ".xml" }

// Validate checks the feed's settings. The title is required; the category,
// if set, must be one of FeedCategories; the language a language tag
// (letters, digits and hyphens, such as "en" or "en-US"). The token is not
// checked: stores check it where they take one.
func (f *Feed) Validate() error {
	if strings.TrimSpace(f.Title) == "" {
		return Errorf(EINVALID, "title is required")
	}
	checks := []struct {
		field string
		value string
		max   int
	}{
		{"title", f.Title, MaxFeedTitleChars},
		{"description", f.Description, MaxFeedDescriptionChars},
		{"author", f.Author, MaxFeedAuthorChars},
		{"image URL", f.ImageURL, MaxURLChars},
		{"language", f.Language, MaxFeedLanguageChars},
		{"owner name", f.OwnerName, MaxFeedAuthorChars},
		{"owner email", f.OwnerEmail, MaxFeedAuthorChars},
	}
	for _, c := range checks {
		if err := checkText(c.field, c.value); err != nil {
			return err
		}
		if n := utf8.RuneCountInString(c.value); n > c.max {
			return Errorf(EINVALID, "%s is %d characters long; at most %d are allowed", c.field, n, c.max)
		}
	}
	if f.ImageURL != "" {
		if err := validateURL(f.ImageURL); err != nil {
			return Errorf(EINVALID, "image URL %s", err.Message)
		}
	}
	if err := f.validateOwner(); err != nil {
		return err
	}
	if !validLanguageTag(f.Language) {
		return Errorf(EINVALID, "language must be a language tag such as en or en-US")
	}
	if f.Category != "" && !validFeedCategory(f.Category) {
		return Errorf(EINVALID, "category %q is not an Apple Podcasts category", f.Category)
	}
	return nil
}

// validateOwner checks the owner: an email, if set, is an address
// (local@domain, without spaces or angle brackets), and needs a name.
func (f *Feed) validateOwner() error {
	if f.OwnerEmail == "" {
		return nil
	}
	if f.OwnerName == "" {
		return Errorf(EINVALID, "owner name is required with an owner email")
	}
	local, domain, ok := strings.Cut(f.OwnerEmail, "@")
	if !ok || local == "" || !strings.Contains(domain, ".") || strings.ContainsAny(f.OwnerEmail, " \t<>,;\"") || strings.Contains(domain, "@") {
		return Errorf(EINVALID, "owner email must be an email address such as podcasts@example.com")
	}
	return nil
}

// validLanguageTag accepts tags of the form of RFC 5646 ("en", "en-US",
// "zh-Hant-TW"): a primary subtag of 2 or 3 letters, then subtags of 1 to
// 8 letters or digits, separated by hyphens.
func validLanguageTag(s string) bool {
	for i, sub := range strings.Split(s, "-") {
		if i == 0 && (len(sub) < 2 || len(sub) > 3) || len(sub) < 1 || len(sub) > 8 {
			return false
		}
		for _, c := range sub {
			letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
			if !letter && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return true
}

// FeedLanguage returns the feed language tag of a project locale: "en_US"
// gives "en-US".
func FeedLanguage(locale string) string { return strings.ReplaceAll(locale, "_", "-") }

// NewFeedSettings returns the settings a new feed of p starts from: its
// title and language, turned on, without a token.
func NewFeedSettings(p *Project) *Feed {
	return &Feed{ProjectID: p.ID, Enabled: true, Title: p.Title, Language: FeedLanguage(p.Language)}
}

// FeedCategory is a top-level Apple Podcasts category and its
// subcategories.
type FeedCategory struct {
	Name string
	Subs []string
}

// FeedCategories returns the Apple Podcasts categories, in Apple's order.
// A feed's category is a top-level name ("News") or a top-level name and a
// subcategory joined by " > " ("News > Tech News").
func FeedCategories() []FeedCategory {
	return []FeedCategory{
		{"Arts", []string{"Books", "Design", "Fashion & Beauty", "Food", "Performing Arts", "Visual Arts"}},
		{"Business", []string{"Careers", "Entrepreneurship", "Investing", "Management", "Marketing", "Non-Profit"}},
		{"Comedy", []string{"Comedy Interviews", "Improv", "Stand-Up"}},
		{"Education", []string{"Courses", "How To", "Language Learning", "Self-Improvement"}},
		{"Fiction", []string{"Comedy Fiction", "Drama", "Science Fiction"}},
		{"Government", nil},
		{"History", nil},
		{"Health & Fitness", []string{"Alternative Health", "Fitness", "Medicine", "Mental Health", "Nutrition", "Sexuality"}},
		{"Kids & Family", []string{"Education for Kids", "Parenting", "Pets & Animals", "Stories for Kids"}},
		{"Leisure", []string{"Animation & Manga", "Automotive", "Aviation", "Crafts", "Games", "Hobbies", "Home & Garden", "Video Games"}},
		{"Music", []string{"Music Commentary", "Music History", "Music Interviews"}},
		{"News", []string{"Business News", "Daily News", "Entertainment News", "News Commentary", "Politics", "Sports News", "Tech News"}},
		{"Religion & Spirituality", []string{"Buddhism", "Christianity", "Hinduism", "Islam", "Judaism", "Religion", "Spirituality"}},
		{"Science", []string{"Astronomy", "Chemistry", "Earth Sciences", "Life Sciences", "Mathematics", "Natural Sciences", "Nature", "Physics", "Social Sciences"}},
		{"Society & Culture", []string{"Documentary", "Personal Journals", "Philosophy", "Places & Travel", "Relationships"}},
		{"Sports", []string{"Baseball", "Basketball", "Cricket", "Fantasy Sports", "Football", "Golf", "Hockey", "Rugby", "Running", "Soccer", "Swimming", "Tennis", "Volleyball", "Wilderness", "Wrestling"}},
		{"Technology", nil},
		{"True Crime", nil},
		{"TV & Film", []string{"After Shows", "Film History", "Film Interviews", "Film Reviews", "TV Reviews"}},
	}
}

// FeedCategorySeparator joins a top-level category and a subcategory.
const FeedCategorySeparator = " > "

// SplitFeedCategory returns the top-level category and the subcategory
// ("" if none) of a valid category.
func SplitFeedCategory(category string) (top, sub string) {
	top, sub, _ = strings.Cut(category, FeedCategorySeparator)
	return top, sub
}

func validFeedCategory(category string) bool {
	top, sub := SplitFeedCategory(category)
	for _, c := range FeedCategories() {
		if c.Name != top {
			continue
		}
		if sub == "" && !strings.Contains(category, FeedCategorySeparator) {
			return true
		}
		for _, s := range c.Subs {
			if s == sub {
				return true
			}
		}
	}
	return false
}

// FeedContent is what a feed shows, read in one transaction: the feed, its
// project, its newest processed audios with their media, and when the
// project's audios last changed.
type FeedContent struct {
	Feed    *Feed
	Project *Project
	// Audios are the project's processed, live audios, newest first (by
	// creation, then ID), with their media. Their Body holds only its first
	// FeedBodyCharsOf(the project's access) characters: none in a signed
	// project.
	Audios []*Audio
	// Publications are the publications of the listed audios whose
	// publisher decided one, by audio ID; the others are published
	// (DefaultPublication).
	Publications map[int64]Publication
	// Signed reports whether the project is signed (AccessSigned): its
	// items then point to nothing that would give its articles' text to
	// anyone who reads the feed, such as transcripts.
	Signed bool
	// AudiosChangedAt is the latest time any audio of the project, listed
	// or not, was created, changed or deleted; zero if it has none. An
	// audio leaving the feed moves it too.
	AudiosChangedAt time.Time
}

// LastModified returns when what the feed shows last changed: the later of
// its settings' and its audios' last change.
func (c *FeedContent) LastModified() time.Time {
	if c.AudiosChangedAt.After(c.Feed.UpdatedAt) {
		return c.AudiosChangedAt
	}
	return c.Feed.UpdatedAt
}

// ArticlePublished returns when the article of a is said to have been
// published: its metadata's MetadataPublished (set by feed imports, or
// given to the API) as an RFC 3339 time or a date ("2026-05-06", midnight
// UTC), and false when it has none or one that is neither.
func ArticlePublished(a *Audio) (time.Time, bool) {
	v := strings.TrimSpace(a.Metadata[MetadataPublished])
	if v == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil && t.Year() >= 1900 && t.Year() <= 9999 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// FeedItemDate returns the date of a's podcast feed item, p being its
// publication: when its article was published (ArticlePublished), or else
// when the audio was (Publication.PublishedAt).
func FeedItemDate(a *Audio, p Publication) time.Time {
	if t, ok := ArticlePublished(a); ok {
		return t
	}
	return p.PublishedAt(a.CreatedAt).UTC()
}

// ItemDate returns the date of the feed item of a, one of c.Audios
// (FeedItemDate).
func (c *FeedContent) ItemDate(a *Audio) time.Time {
	p, ok := c.Publications[a.ID]
	if !ok {
		p = DefaultPublication(a.ID)
	}
	return FeedItemDate(a, p)
}
