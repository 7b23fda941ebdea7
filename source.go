package narrator

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ProjectTypeRSS is a project whose audios also come from its feeds
// (Source); it still accepts API creates.
const ProjectTypeRSS = "rss"

// ProjectTypes are the project types, in the order the docs list them.
func ProjectTypes() []string { return []string{ProjectTypeAPI, ProjectTypeRSS} }

// Limits and defaults of feed sources.
const (
	// MaxSourcesPerProject bounds the feeds of one project.
	MaxSourcesPerProject = 20
	// MaxSourceHeaders bounds a feed's request headers.
	MaxSourceHeaders = 20
	// MaxSourceHeaderBytes bounds one header's name and value together.
	MaxSourceHeaderBytes = 4_096
	// MaxItemsPerSource is how many of a feed's items are read, in the
	// feed's order (newest first, as feeds are written); the rest are
	// ignored, so that a feed of 100,000 items costs no more than one of
	// this many.
	MaxItemsPerSource = 1_000
	// MaxItemsPerPoll caps the audios one poll creates or updates; the
	// items past it wait for the next poll.
	MaxItemsPerPoll = 100
	// DefaultPollInterval is how often a feed is read when its source
	// names no interval; MinPollInterval and MaxPollInterval bound it.
	DefaultPollInterval = 10 * time.Minute
	MinPollInterval     = time.Minute
	MaxPollInterval     = 24 * time.Hour
	// DefaultBackfillItems is the backfill rule of a source that names
	// none: the first read narrates the latest 10 items.
	DefaultBackfillItems = 10
	// MaxBackoff bounds the wait after failed reads.
	MaxBackoff = 6 * time.Hour
	// MaxReadsPerAccount is how many of one account's feeds are read at
	// once on schedule, over all nodes together (FairReads).
	MaxReadsPerAccount = 2
	// ReadBudget bounds one read of a feed as a whole: the feed's fetch,
	// its article pages for full text, and the audios it creates. Items
	// the read has not reached by then wait for the next read.
	ReadBudget = 2 * time.Minute
)

// DueSource is a feed due to be read and not being read, as a store finds it
// for FairReads.
type DueSource struct {
	ID, AccountID int64
}

// FairReads is the rule by which scheduled reads take due feeds, so that
// one account's slow feeds never hold back another account's. Of due, the
// feeds due and not being read, longest due first, it returns the IDs of
// up to limit to read now. Accounts take turns: each account's longest-due
// feed first, then each one's second, and so on, the longest due first
// within a turn. An account never has more than MaxReadsPerAccount feeds
// read at once: inFlight counts, by account, the feeds being read now
// (their leases unexpired, manual reads included). Both stores apply it
// (DueSources), and check MayRead again as they claim a feed.
func FairReads(due []DueSource, inFlight map[int64]int, limit int) []int64 {
	type pick struct {
		id   int64
		turn int
	}
	var picks []pick
	taken := map[int64]int{}
	for _, f := range due {
		n := inFlight[f.AccountID] + taken[f.AccountID]
		if !MayRead(n) {
			continue
		}
		taken[f.AccountID]++
		picks = append(picks, pick{f.ID, n})
	}
	sort.SliceStable(picks, func(i, j int) bool { return picks[i].turn < picks[j].turn })
	ids := []int64{}
	for _, p := range picks[:min(len(picks), max(limit, 0))] {
		ids = append(ids, p.id)
	}
	return ids
}

// MayRead reports whether an account that has inFlight feeds being read
// may have one more read on schedule.
func MayRead(inFlight int) bool { return inFlight < MaxReadsPerAccount }

// Statuses of a source's last read.
const (
	SourceStatusNew         = "new"          // never read yet
	SourceStatusOK          = "ok"           // read and parsed
	SourceStatusNotModified = "not_modified" // the conditional GET answered 304
	SourceStatusError       = "error"        // SourceState.LastError says why
)

// Source is a feed that a project narrates: RSS 0.9x, 1.0 or 2.0, Atom, or
// JSON Feed. Each new item becomes an audio, each changed item updates its
// audio, and an item that leaves the feed keeps its audio.
type Source struct {
	ID        int64
	ProjectID int64
	URL       string
	// Header holds request headers sent with each read of the feed (a
	// paywalled feed's credentials); never sent to another host after a
	// redirect. API answers show their names only.
	Header map[string]string
	// Mapping maps audio fields (SourceAudioFields) to item fields
	// (SourceItemFields); a field not mapped takes its default.
	Mapping map[string]string
	// FullText has each new or changed item's body read from its
	// article page, for feeds that carry only a summary.
	FullText bool
	// BackfillItems and BackfillSince are the rule of the first read: at
	// most the latest BackfillItems items (0: no limit by count), of
	// those published within BackfillSince (0: no limit by age). Both 0
	// means the latest DefaultBackfillItems. Later reads narrate every new
	// item.
	BackfillItems int
	BackfillSince time.Duration
	// Interval is how often the feed is read.
	Interval  time.Duration
	CreatedAt time.Time
	State     SourceState
}

// SourceState is what the reads of a source have found so far.
type SourceState struct {
	Status string // a SourceStatus constant
	// LastError says in plain words why the last read failed, or, after
	// a read that succeeded, which items it skipped, cut or left for the
	// next read; "" when all went well.
	LastError   string
	LastFetchAt time.Time // the last read, successful or not; zero before the first
	NextPollAt  time.Time // when the feed is next read
	Failures    int       // reads failed in a row
	// ETag and LastModified are the validators of the last answer read
	// whole (parsed, no item left for the next read), sent back in a
	// conditional GET.
	ETag, LastModified string
	// ItemsSeen counts the items recorded; Created and Updated the audios
	// the feed's items created and updated.
	ItemsSeen, Created, Updated int64
	// WebSub is the feed's subscription at its WebSub hub, if it
	// advertises one.
	WebSub Subscription
}

// Subscription is a feed's WebSub subscription: the hub pushes the feed
// to Narrator's callback as it changes, signed with Secret.
type Subscription struct {
	Hub   string // the hub's URL; "" when the feed advertises none
	Topic string // the feed's URL as the hub knows it (its rel=self)
	// Secret signs the hub's pushes (X-Hub-Signature); it never leaves
	// the server but in the subscription request, and only to an https
	// hub.
	Secret string
	// Nonce is the unguessable last segment of the subscription's callback
	// URL, made with the secret and sent only with it: the feed's ID is
	// public and sequential, so only a hub that got the request can reach
	// the callback (Called). "" for a subscription made before it existed,
	// which Subscribe then makes again.
	Nonce string
	// RequestedAt is when Narrator last asked the hub; ExpiresAt when the
	// lease the hub granted ends, zero until the hub verifies it.
	RequestedAt, ExpiresAt time.Time
	// Pending is the request Narrator sent the hub that the hub has not
	// verified yet; zero when there is none. Only it can be verified.
	Pending WebSubRequest
}

// NewSubscription returns a subscription to topic at hub, not yet asked
// for, with a new random Secret and Nonce.
func NewSubscription(hub, topic string) Subscription {
	var secret [24]byte
	_, _ = rand.Read(secret[:]) // crypto/rand never fails
	return Subscription{Hub: hub, Topic: topic, Secret: hex.EncodeToString(secret[:]), Nonce: NewWebSubNonce()}
}

// NewWebSubNonce returns a new callback nonce: 128 random bits, base64url
// without padding.
func NewWebSubNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// WebSubRequest is a request Narrator sent a hub: its mode (WebSubSubscribe
// or WebSubUnsubscribe), its topic, and when it was sent.
type WebSubRequest struct {
	Mode   string
	Topic  string
	SentAt time.Time
}

// Modes of a WebSub request.
const (
	WebSubSubscribe   = "subscribe"
	WebSubUnsubscribe = "unsubscribe"
)

// WebSubLease is the lease Narrator asks a hub for, and the longest it
// records whatever the hub grants: a lease is renewed in its last quarter,
// so a longer one would only keep a forgotten subscription alive.
const WebSubLease = 10 * 24 * time.Hour

// webSubRetry is how long an unverified request waits before it is
// made again, and how long a hub has to verify it.
const webSubRetry = time.Hour

// WebSubHub reports whether Narrator subscribes at hub: an https URL only,
// since the subscription request carries the secret that authenticates the
// hub's pushes, and a plain-http hub would let anyone on the way read it
// and sign pushes of their own.
func WebSubHub(hub string) bool {
	u, err := url.Parse(hub)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

// Subscribe reports whether a read at now that found hub and topic
// advertised should ask the hub for a subscription: an https hub
// (WebSubHub) that is new, or a new topic, a request the hub never
// verified after webSubRetry, or a lease in its last quarter.
func (s *Subscription) Subscribe(hub, topic string, now time.Time) bool {
	switch {
	case hub == "" || !WebSubHub(hub):
		return false
	case hub != s.Hub || topic != s.Topic || s.Secret == "" || s.Nonce == "":
		return true
	case s.ExpiresAt.IsZero():
		return now.Sub(s.RequestedAt) >= webSubRetry
	}
	return now.After(s.ExpiresAt.Add(-WebSubLease/4)) && now.Sub(s.RequestedAt) >= webSubRetry
}

// Request records a request of mode for topic sent at now as the pending
// one, which replaces any other.
func (s *Subscription) Request(mode, topic string, now time.Time) {
	s.RequestedAt = now
	s.Pending = WebSubRequest{Mode: mode, Topic: topic, SentAt: now}
}

// Verify decides a hub's verification of intent at now, of mode and topic
// with the lease it grants (0 when it names none), that came to the
// callback URL with nonce: it is accepted only for the request Narrator
// sent and still waits for it, of that mode and topic, sent less than
// webSubRetry ago, at the subscription's own callback (Called). Accepting it ends the request; a
// subscribe records the lease, WebSubLease at most (and when the hub names
// none), and an unsubscribe forgets the subscription. It reports whether it
// accepted the verification; a refused one changes nothing.
func (s *Subscription) Verify(mode, topic, nonce string, lease time.Duration, now time.Time) bool {
	if !s.pending(mode, topic, nonce, now) {
		return false
	}
	s.Pending = WebSubRequest{}
	if mode == WebSubUnsubscribe {
		*s = Subscription{}
		return true
	}
	if lease <= 0 || lease > WebSubLease {
		lease = WebSubLease
	}
	s.ExpiresAt = now.Add(lease)
	return true
}

// Deny records at now the hub's refusal of a subscription to topic, that
// came to the callback URL with nonce: only of the pending subscribe
// request, at the subscription's own callback (Called), which it ends. It
// reports whether it accepted the refusal.
func (s *Subscription) Deny(topic, nonce string, now time.Time) bool {
	if !s.pending(WebSubSubscribe, topic, nonce, now) {
		return false
	}
	s.Pending = WebSubRequest{}
	return true
}

// pending reports whether a request of mode and topic waits for the hub
// at now, and nonce is the callback's.
func (s *Subscription) pending(mode, topic, nonce string, now time.Time) bool {
	p := s.Pending
	return s.Called(nonce) && p.Mode != "" && p.Mode == mode && p.Topic == topic && topic != "" &&
		!now.Before(p.SentAt) && now.Sub(p.SentAt) < webSubRetry
}

// Called reports whether a request to the callback URL with nonce came to
// s's callback: s has a nonce, and it is nonce, compared in constant time.
func (s *Subscription) Called(nonce string) bool {
	return s.Nonce != "" && subtle.ConstantTimeCompare([]byte(s.Nonce), []byte(nonce)) == 1
}

// Authenticates reports whether a push signed with s's secret is the hub's:
// a secret was sent, and only over https.
func (s *Subscription) Authenticates() bool {
	return s.Secret != "" && WebSubHub(s.Hub)
}

// Limits of WebSub pushes, per feed and per node: a hub may push
// WebSubPushBurst times at once, then once per WebSubPushEvery. A push
// over the limit is answered 429 and the hub retries it; the feed's own
// reads go on meanwhile.
const (
	WebSubPushBurst = 10
	WebSubPushEvery = time.Minute
)

// Audio fields a source's Mapping may set, and the item fields they may
// take.
var (
	SourceAudioFields = []string{"external_id", "title", "body", "author", "article_url"}
	SourceItemFields  = []string{"guid", "link", "title", "content", "summary", "author"}
)

// defaultMapping is the mapping of a field the source does not map; a
// field maps to its first non-empty item field.
var defaultMapping = map[string][]string{
	"external_id": {"guid", "link"},
	"title":       {"title"},
	"body":        {"content", "summary"},
	"author":      {"author"},
	"article_url": {"link"},
}

// NewSource returns a source of the feed at url in a project, with the
// default interval; the caller sets the other fields, then Validate.
func NewSource(projectID int64, url string) *Source {
	return &Source{ProjectID: projectID, URL: url, Interval: DefaultPollInterval}
}

// Validate checks a source's settings.
func (s *Source) Validate() error {
	if s.URL == "" {
		return Errorf(EINVALID, "url is required")
	}
	if n := utf8.RuneCountInString(s.URL); n > MaxURLChars {
		return Errorf(EINVALID, "url is %d characters long; at most %d are allowed", n, MaxURLChars)
	}
	if err := checkText("url", s.URL); err != nil {
		return err
	}
	if err := validateURL(s.URL); err != nil {
		return Errorf(EINVALID, "url: %s", err.Message)
	}
	if len(s.Header) > MaxSourceHeaders {
		return Errorf(EINVALID, "headers: at most %d are allowed", MaxSourceHeaders)
	}
	for k, v := range s.Header {
		if !validHeaderName(k) {
			return Errorf(EINVALID, "headers: %q is not a header name", k)
		}
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Te", "Upgrade", "Accept-Encoding",
			"If-None-Match", "If-Modified-Since", "User-Agent", "Cookie2", "Keep-Alive", "Proxy-Authorization", "Trailer":
			return Errorf(EINVALID, "headers: %s is set by Narrator and cannot be given", http.CanonicalHeaderKey(k))
		}
		if len(k)+len(v) > MaxSourceHeaderBytes || !ValidText(v) || strings.ContainsAny(v, "\r\n") {
			return Errorf(EINVALID, "headers: the value of %s must be one line of at most %d bytes", k, MaxSourceHeaderBytes)
		}
	}
	for field, item := range s.Mapping {
		if !slices.Contains(SourceAudioFields, field) {
			return Errorf(EINVALID, "mapping: %q is not one of %s", field, strings.Join(SourceAudioFields, ", "))
		}
		if !slices.Contains(SourceItemFields, item) {
			return Errorf(EINVALID, "mapping: %s maps to %q, which is not one of %s", field, item, strings.Join(SourceItemFields, ", "))
		}
	}
	if s.BackfillItems < 0 || s.BackfillItems > MaxItemsPerSource {
		return Errorf(EINVALID, "backfill_items must be 0 to %d", MaxItemsPerSource)
	}
	if s.BackfillSince < 0 {
		return Errorf(EINVALID, "backfill_days must not be negative")
	}
	if s.Interval < MinPollInterval || s.Interval > MaxPollInterval {
		return Errorf(EINVALID, "interval must be %d to %d minutes", int(MinPollInterval.Minutes()), int(MaxPollInterval.Minutes()))
	}
	return nil
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, c := range s {
		if c >= 0x7f || c <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c) {
			return false
		}
	}
	return true
}

// HeaderNames returns the names of s's request headers, sorted.
func (s *Source) HeaderNames() []string {
	names := make([]string, 0, len(s.Header))
	for k := range s.Header {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	sort.Strings(names)
	return names
}

// SourceItem is one item of a feed as parsed, before mapping.
type SourceItem struct {
	GUID, Link, Title, Content, Summary, Author string
	Categories                                  []string
	Published                                   time.Time // zero when the feed gives no date
	Updated                                     time.Time // when it last changed; zero when the feed does not say
	// Language is the item's language tag (its xml:lang, or its feed's
	// language when it names none); "" when neither names one.
	Language string
	// Image is the URL of the item's image (its media:content or
	// media:thumbnail, image enclosure or itunes:image), "" for none.
	Image string
}

// Date is the item's version date: when it last changed, else when it was
// published; zero when the feed gives neither.
func (it *SourceItem) Date() time.Time {
	if !it.Updated.IsZero() {
		return it.Updated
	}
	return it.Published
}

// field returns the item field of that name.
func (it *SourceItem) field(name string) string {
	switch name {
	case "guid":
		return it.GUID
	case "link":
		return it.Link
	case "title":
		return it.Title
	case "content":
		return it.Content
	case "summary":
		return it.Summary
	case "author":
		return it.Author
	}
	return ""
}

// value returns the audio field's value for it under s's mapping.
func (s *Source) value(it *SourceItem, field string) string {
	if name, ok := s.Mapping[field]; ok {
		return strings.TrimSpace(it.field(name))
	}
	for _, name := range defaultMapping[field] {
		if v := strings.TrimSpace(it.field(name)); v != "" {
			return v
		}
	}
	return ""
}

// Metadata keys under which a feed item's audio keeps what has no field of
// its own.
const (
	MetadataCategories = "categories"
	MetadataPublished  = "published"
	MetadataFeed       = "feed"
)

// ItemExternalID returns the external ID of the audio of an item whose key
// (its guid, or what the mapping says) is key: "feed-<source ID>:" and the
// key, so that two feeds' items never meet, or the key's SHA-256 in hex
// when that would be too long for an external ID. It is stable: the same
// item always has the same ID, which makes its create idempotent.
func ItemExternalID(sourceID int64, key string) string {
	prefix := "feed-" + strconv.FormatInt(sourceID, 10) + ":"
	if id := prefix + key; utf8.RuneCountInString(id) <= MaxExternalIDChars && ValidText(id) {
		return id
	}
	sum := sha256.Sum256([]byte(key))
	return prefix + "sha256:" + hex.EncodeToString(sum[:])
}

// ItemID returns the external ID of the audio of an item (ItemExternalID
// of its key: its guid, or what the mapping says), "" for an item without
// a key.
func (s *Source) ItemID(it *SourceItem) string {
	key := s.value(it, "external_id")
	if key == "" {
		return ""
	}
	return ItemExternalID(s.ID, key)
}

// SourceAudio is the audio an item of a source's feed makes.
type SourceAudio struct {
	Audio *Audio
	// Hash is the hash of what the audio is made from: when it changes,
	// the item changed.
	Hash string
	// Cut names the fields cut to their limit ("title", "author"), which
	// a read notes on its feed.
	Cut []string
	// Date is the item's version date (SourceItem.Date), which holds a
	// pushed change to ItemChanged's rule.
	Date time.Time
}

// ItemAudio returns the audio an item makes, by s's mapping. An item
// without a title makes an audio without one, which is read without a
// spoken title. A title or author over its limit is cut; a body over its
// limit makes EINVALID, as does an item with no key or no body. The item's
// language, if it names one, goes in the metadata under
// MetadataLanguage and its image under MetadataImage; they are not
// hashed, so that items read before they were kept are not narrated again.
func (s *Source) ItemAudio(it *SourceItem) (*SourceAudio, error) {
	key := s.value(it, "external_id")
	if key == "" {
		return nil, Errorf(EINVALID, "an item has neither guid nor link")
	}
	title, author := s.value(it, "title"), s.value(it, "author")
	a := &Audio{
		ProjectID:  s.ProjectID,
		ExternalID: ItemExternalID(s.ID, key),
		Title:      cut(title, MaxTitleChars),
		Body:       s.value(it, "body"),
		Author:     cut(author, MaxAuthorChars),
		Metadata:   map[string]string{MetadataFeed: strconv.FormatInt(s.ID, 10)},
	}
	fa := &SourceAudio{Audio: a, Date: it.Date()}
	if a.Title != title {
		fa.Cut = append(fa.Cut, "title")
	}
	if a.Author != author {
		fa.Cut = append(fa.Cut, "author")
	}
	if u := s.value(it, "article_url"); u != "" && validateURL(u) == nil && utf8.RuneCountInString(u) <= MaxURLChars {
		a.ArticleURL = u
	}
	if len(it.Categories) > 0 {
		a.Metadata[MetadataCategories] = cut(strings.Join(it.Categories, ", "), MaxMetadataValue/4)
	}
	if !it.Published.IsZero() {
		a.Metadata[MetadataPublished] = it.Published.UTC().Format(time.RFC3339)
	}
	if lang := LanguageTag(it.Language); lang != "" {
		a.Metadata[MetadataLanguage] = lang
	}
	a.Metadata = withDefault(a.Metadata, MetadataImage, ArticleImageURL(it.Image))
	h := sha256.New()
	for _, v := range []string{a.ExternalID, a.Title, a.Author, a.Body, a.ArticleURL, a.Metadata[MetadataCategories], a.Metadata[MetadataPublished]} {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	fa.Hash = hex.EncodeToString(h.Sum(nil))
	if !s.FullText && strings.TrimSpace(a.Body) == "" {
		return nil, Errorf(EINVALID, "item %q has no text", key)
	}
	if n := utf8.RuneCountInString(a.Body); n > MaxBodyChars {
		return nil, Errorf(EINVALID, "item %q is %d characters long; an audio holds at most %d", key, n, MaxBodyChars)
	}
	return fa, nil
}

// Backfill returns the items of a feed's first read to narrate: of items
// (in the feed's order), those published within s.BackfillSince of now,
// then the latest s.BackfillItems of those, by date where items have one.
// With neither set it keeps the latest DefaultBackfillItems.
func (s *Source) Backfill(items []*SourceItem, now time.Time) []*SourceItem {
	n, since := s.BackfillItems, s.BackfillSince
	if n == 0 && since == 0 {
		n = DefaultBackfillItems
	}
	var keep []*SourceItem
	for _, it := range items {
		if since > 0 && (it.Published.IsZero() || it.Published.Before(now.Add(-since))) {
			continue
		}
		keep = append(keep, it)
	}
	// Newest first; items without a date keep their place in the feed,
	// which lists the newest first.
	sort.SliceStable(keep, func(i, j int) bool {
		a, b := keep[i].Published, keep[j].Published
		return !a.IsZero() && !b.IsZero() && a.After(b)
	})
	if n > 0 && len(keep) > n {
		keep = keep[:n]
	}
	return keep
}

// NextPoll returns when a source is read next after a read at now that
// failed failures times in a row (0: it succeeded): its interval, doubled
// for each failure up to MaxBackoff.
func (s *Source) NextPoll(now time.Time, failures int) time.Time {
	d := s.Interval
	for i := 0; i < failures && d < MaxBackoff; i++ {
		d *= 2
	}
	return now.Add(min(max(d, s.Interval), max(MaxBackoff, s.Interval)))
}

// SeenItem is an item a read recorded: its audio's external ID, the hash
// of what the audio was made from, and the item's Date (zero when the
// feed gives none).
type SeenItem struct {
	ExternalID string
	Hash       string
	Date       time.Time
}

// ItemChanged reports whether an item found with hash and date is to be
// narrated, given what the reads recorded of it (ok: whether they recorded
// it at all). A new item is; an item the backfill rule left out ("-") never
// is; a changed item is when Narrator fetched the feed itself, but when a
// hub pushed it (pushed) only if it is dated after the recorded version: a
// signed push can be replayed by whoever saw it, so an older or equal
// version, or one without a date, waits for the next read of the feed.
func ItemChanged(seen SeenItem, ok bool, hash string, date time.Time, pushed bool) bool {
	switch {
	case !ok:
		return true
	case seen.Hash == hash || seen.Hash == "-":
		return false
	case pushed:
		return !date.IsZero() && date.After(seen.Date)
	}
	return true
}

// SourceRead is what one read of a source found, which the store records
// at once: the state after it and the items it saw.
type SourceRead struct {
	SourceID int64
	State    SourceState
	// Seen are items to record, new or with a new hash.
	Seen []SeenItem
	// Created and Updated are added to the source's counts.
	Created, Updated int64
}
