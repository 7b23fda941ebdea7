// Package web is the dashboard: server-rendered html/template pages, with
// their CSS and a little JavaScript embedded in the binary, for publishers
// who sign in with an email and a password.
//
// # Security
//
//   - Passwords are hashed with bcrypt (HashPassword).
//   - Sessions are server-side: the cookie holds a random token, the store
//     keeps only its SHA-256 hash and an expiry. Cookies are HttpOnly,
//     SameSite=Lax, and Secure when the request came over TLS or the public
//     URL is https.
//   - Every state-changing form carries a synchronizer CSRF token tied to
//     the session; a POST without it gets a 403 page. The sign-in form,
//     which has no session yet, uses a double-submit cookie instead.
//   - Sign-in attempts are recorded before the password is checked, per
//     email and client IP, per client IP and per email, in the store (so on
//     every node; see Limiter); past the limits attempts are refused. The
//     bcrypt checks under way at once are bounded.
//   - Pages are html/template, which escapes all user content; a strict
//     Content-Security-Policy allows only the embedded scripts and styles.
package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/ratelimit"
	"github.com/narrator/narrator/internal/speak"
)

// Store is what the dashboard needs from storage. Methods return
// *narrator.Error values with ENOTFOUND, EINVALID, ECONFLICT or
// EUNAUTHORIZED codes for the caller's mistakes.
type Store interface {
	FindAccount(ctx context.Context, id int64) (*narrator.Account, error)

	// CreateSource stores a feed of an rss project: EINVALID (also for a
	// project of another type) or ECONFLICT (too many).
	CreateSource(ctx context.Context, src *narrator.Source) error
	// FindSource returns a project's feed; ENOTFOUND if the project has
	// none of that ID.
	FindSource(ctx context.Context, projectID, id int64) (*narrator.Source, error)
	// ListSources returns a project's sources, oldest first.
	ListSources(ctx context.Context, projectID int64) ([]*narrator.Source, error)

	// FindUserByEmail returns ENOTFOUND if no user has that email.
	FindUserByEmail(ctx context.Context, email string) (*narrator.User, error)
	// CreateSession stores a session under the hash of its token.
	CreateSession(ctx context.Context, s *narrator.Session, tokenHash []byte) error
	// FindSession returns EUNAUTHORIZED for an unknown or expired session.
	FindSession(ctx context.Context, tokenHash []byte) (*narrator.Session, error)
	DeleteSession(ctx context.Context, tokenHash []byte) error

	ListProjects(ctx context.Context, accountID int64) ([]*narrator.Project, error)
	// FindProject returns ENOTFOUND for a missing project or one of another account.
	FindProject(ctx context.Context, accountID, projectID int64) (*narrator.Project, error)
	CreateProject(ctx context.Context, p *narrator.Project) error

	SearchAudios(ctx context.Context, projectID int64, query string, since time.Time, page, perPage int) ([]*narrator.Audio, int, error)
	FindAudiosByID(ctx context.Context, projectID int64, ids []int64) ([]*narrator.Audio, error)
	FindAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	// CreateAudio is the API's create: it updates the live audio with the
	// same external_id instead of making a duplicate.
	CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error)
	UpdateAudio(ctx context.Context, projectID int64, ref string, u narrator.AudioUpdate) (*narrator.Audio, error)
	// ResynthesizeAudio resynthesises an audio even if its text is unchanged.
	ResynthesizeAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	// AudioListens returns an audio's listening counts of all time.
	AudioListens(ctx context.Context, audioID int64) (narrator.ListenCounts, error)
	// ProjectListens returns a project's listening counts of all time and
	// of each day since the day of since.
	ProjectListens(ctx context.Context, projectID int64, since time.Time) (*narrator.ProjectListens, error)
	// ListPronunciations gives the rules the text is read with.
	ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error)

	// FindFeed returns ENOTFOUND if the project never had a podcast feed.
	FindFeed(ctx context.Context, projectID int64) (*narrator.Feed, error)
	// SaveFeed creates or updates a feed; an existing feed keeps its token.
	SaveFeed(ctx context.Context, f *narrator.Feed) error
	// RotateFeedToken returns ENOTFOUND if the project has no feed.
	RotateFeedToken(ctx context.Context, projectID int64, token string) (*narrator.Feed, error)

	CreateAPIKey(ctx context.Context, accountID int64, hash []byte, prefix string) (*narrator.APIKey, error)
	ListAPIKeys(ctx context.Context, accountID int64) ([]*narrator.APIKey, error)
	// RevokeAPIKey returns ENOTFOUND for a key of another account.
	RevokeAPIKey(ctx context.Context, accountID, keyID int64) error

	// Webhook methods return ENOTFOUND for an endpoint or delivery that is
	// not the project's.
	CreateWebhook(ctx context.Context, h *narrator.Webhook) error
	ListWebhooks(ctx context.Context, projectID int64) ([]*narrator.Webhook, error)
	FindWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error)
	DeleteWebhook(ctx context.Context, projectID, id int64) error
	RotateWebhookSecret(ctx context.Context, projectID, id int64, secret string) (*narrator.Webhook, error)
	EnableWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error)
	TestWebhook(ctx context.Context, projectID, id int64) (*narrator.WebhookDelivery, error)
	ListDeliveries(ctx context.Context, projectID, webhookID int64, limit int) ([]*narrator.WebhookDelivery, error)
	ResendDelivery(ctx context.Context, projectID, webhookID, deliveryID int64) (*narrator.WebhookDelivery, error)

	// SynthesisProgress returns ENOTFOUND while no progress on the
	// revision is reported.
	SynthesisProgress(ctx context.Context, audioID int64, revision int) (narrator.SynthesisProgress, error)

	Attempts

	// AudioPublication returns the default for an audio never decided on.
	AudioPublication(ctx context.Context, audioID int64) (narrator.Publication, error)
	// SetPublication returns ENOTFOUND unless the audio is live.
	SetPublication(ctx context.Context, p narrator.Publication) (narrator.Publication, error)
	// ProjectAccess returns the defaults for a project never changed.
	ProjectAccess(ctx context.Context, projectID int64) (narrator.ProjectAccess, error)
	// SetProjectAccess keeps the signing secret; EINVALID for a signed
	// project without one.
	SetProjectAccess(ctx context.Context, a *narrator.ProjectAccess) error
	// SetSpeechRate returns the project with its new rate: EINVALID for
	// a rate out of range, ENOTFOUND.
	SetSpeechRate(ctx context.Context, projectID int64, rate float64) (*narrator.Project, error)
	// SetClip returns EINVALID for a clip out of its limits; Clip and
	// RemoveClip return ENOTFOUND for a project without one.
	SetClip(ctx context.Context, c *narrator.Clip) error
	Clip(ctx context.Context, projectID int64, kind narrator.ClipKind) (*narrator.Clip, error)
	RemoveClip(ctx context.Context, projectID int64, kind narrator.ClipKind) error
	RotateEmbedSecret(ctx context.Context, projectID int64, secret string) (narrator.ProjectAccess, error)
}

// PreviewRequester asks a worker node for a voice preview: the job queue.
type PreviewRequester interface {
	// RequestPreview enqueues the job, once however often it is asked.
	RequestPreview(ctx context.Context, job narrator.PreviewJob) error
}

// PageReader reads the article of a web page, for "Import from URL".
type PageReader interface {
	// ReadPage returns EINVALID for a URL that is not absolute http or
	// https, and EUNREADABLE, with a reason a user can read, for a page
	// that cannot be fetched or holds no article.
	ReadPage(ctx context.Context, url string) (*narrator.Page, error)
}

// ArtworkChecker checks a podcast image at a URL (narrator.CheckArtwork).
type ArtworkChecker interface {
	// CheckArtwork returns an EINVALID *narrator.Error, with a reason a
	// user can read, for an image that cannot be fetched or is not fit.
	CheckArtwork(ctx context.Context, url string) error
}

// MediaOpener reads the media store, where previews are kept.
type MediaOpener interface {
	// Open returns an error matching narrator.ErrBlobNotFound for a
	// missing key.
	Open(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error)
}

// CatalogSource gives the current voice catalog.
type CatalogSource interface {
	Catalog(ctx context.Context) *narrator.Catalog
}

// Deps are the collaborators of the dashboard.
type Deps struct {
	Store  Store
	Logger *slog.Logger
	// MediaURL turns a media key into the absolute URL it is served at.
	MediaURL func(key string) string
	// FeedURL turns a feed token into the feed's absolute URL; when nil,
	// pages show the path (narrator.FeedPath).
	FeedURL func(token string) string
	// Previews asks workers for voice previews, which Media then holds;
	// nil turns previews off (404).
	Previews PreviewRequester
	Media    MediaOpener
	// Voices gives the voice catalog; nil means the built-in voices.
	Voices CatalogSource
	// Pages reads the pages "Import from URL" imports; nil hides the form
	// and turns its routes off (404).
	Pages PageReader
	// Sources reads an rss project's source for "Poll now"; nil turns the
	// button's route off (404).
	Sources SourcePoller
	// Artwork checks a podcast feed's image when it changes; nil saves
	// any image URL unchecked.
	Artwork ArtworkChecker
	// Clips decodes the intros and outros the Speech page uploads; nil
	// refuses uploads.
	Clips ClipDecoder
	// ClipSpeaker speaks the intros and outros the Speech page sets as a
	// text; nil refuses them.
	ClipSpeaker ClipSpeaker
	// Queue gives the place in line of audios waiting for synthesis; nil
	// leaves it out.
	Queue QueuePositioner
	// Resynthesis queues the resynthesis of every audio of a project,
	// which the Speech page offers; nil hides the button and turns its
	// route off (404).
	Resynthesis ResynthesisQueue
	// PreviewTimeout bounds the wait for a preview a worker is making;
	// 30 seconds when zero.
	PreviewTimeout time.Duration
	// MaxAudioDuration caps an audio's length: a form whose article is
	// estimated longer (speak.Estimate) is refused.
	// narrator.MaxAudioDuration when zero.
	MaxAudioDuration time.Duration
	// SecureCookies marks every cookie Secure, as when the public URL is
	// https behind a TLS-terminating proxy. Cookies of requests that came
	// over TLS are Secure anyway.
	SecureCookies bool
	// PublicOrigin is the scheme://host of the public URL, if it may differ
	// from the Host the server sees (behind a proxy). Media and transcripts
	// are served from there, so the Content-Security-Policy allows it for
	// audio and fetches; embed snippets name it; and the sign-in form
	// may be posted from there.
	PublicOrigin string
	// MediaOrigin is the scheme://host media are served from when
	// --media-base-url moves them off the public URL; the
	// Content-Security-Policy allows it for audio and the transcripts the
	// player fetches. "" when media are served with the pages.
	MediaOrigin string
	// NotFound answers requests for unknown paths that do not ask for HTML
	// (API clients); nil gives a plain 404.
	NotFound http.Handler
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Limiter limits sign-in attempts; NewLimiter's defaults when nil.
	Limiter *Limiter
	// SessionTTL is how long a session lasts; DefaultSessionTTL when zero.
	SessionTTL time.Duration
	// ComparePasswordFunc checks a password against its hash;
	// bcrypt.CompareHashAndPassword when nil. Tests count the checks
	// through it.
	ComparePasswordFunc func(hash, password []byte) error
	// PasswordChecks bounds the password checks (bcrypt) under way at
	// once; one per core when zero. A sign-in beyond them is answered 503
	// at once.
	PasswordChecks int
	// RuleCache keeps the compiled pronunciation rules of the spoken text
	// shown on audio pages; a cache of its own when nil.
	RuleCache *speak.RuleCache
	// TrustedProxies are the addresses of the reverse proxies whose
	// X-Forwarded-For header names the client; none when empty, and then
	// the peer is the client.
	TrustedProxies []netip.Prefix
	// WebhookTriggers counts the test and resend calls of webhook
	// endpoints (ratelimit.WebhookTriggers); share it with the API. One of
	// the dashboard's own when nil.
	WebhookTriggers *ratelimit.Limiter
}

// DefaultSessionTTL is how long a dashboard session lasts after sign-in.
const DefaultSessionTTL = 7 * 24 * time.Hour

// AudiosPerPage is the page size of a project's audio list.
const AudiosPerPage = 25

// maxFormBytes caps form bodies: the largest article, 100,000 characters,
// fits even when each is four bytes and URL-encoded.
const maxFormBytes = 2 << 20

// maxSigninFormBytes caps the sign-in form: an email, a password, a
// return path and a token, read before anyone is authenticated.
const maxSigninFormBytes = 8 << 10

// Server is the dashboard as an http.Handler.
type Server struct {
	store        Store
	logger       *slog.Logger
	mediaURL     func(string) string
	feedURL      func(string) string
	previews     PreviewRequester
	voices       CatalogSource
	importer     PageReader
	artwork      ArtworkChecker
	clips        ClipDecoder
	clipSpeaker  ClipSpeaker
	sources      SourcePoller
	media        MediaOpener
	queue        QueuePositioner
	resynth      ResynthesisQueue
	previewWait  time.Duration
	secure       bool
	publicOrigin string
	mediaOrigin  string
	notFound     http.Handler
	now          func() time.Time
	limiter      *Limiter
	ttl          time.Duration
	compare      func(hash, password []byte) error
	checks       chan struct{} // a semaphore of password checks
	clients      *clientip.Resolver
	triggers     *ratelimit.Limiter
	rules        *speak.RuleCache
	pages        *pages
	mux          *http.ServeMux
	dummyOnce    sync.Once
	dummyHash    []byte
	length       narrator.LengthCheck
}

// New parses the embedded templates and returns the dashboard handler.
func New(d Deps) (*Server, error) {
	pg, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{
		store:        d.Store,
		logger:       d.Logger,
		mediaURL:     d.MediaURL,
		feedURL:      d.FeedURL,
		previews:     d.Previews,
		voices:       d.Voices,
		importer:     d.Pages,
		artwork:      d.Artwork,
		clips:        d.Clips,
		clipSpeaker:  d.ClipSpeaker,
		sources:      d.Sources,
		media:        d.Media,
		queue:        d.Queue,
		resynth:      d.Resynthesis,
		previewWait:  d.PreviewTimeout,
		secure:       d.SecureCookies,
		publicOrigin: d.PublicOrigin,
		mediaOrigin:  d.MediaOrigin,
		notFound:     d.NotFound,
		now:          d.Now,
		limiter:      d.Limiter,
		ttl:          d.SessionTTL,
		compare:      d.ComparePasswordFunc,
		clients:      clientip.New(d.TrustedProxies),
		triggers:     d.WebhookTriggers,
		rules:        d.RuleCache,
		pages:        pg,
		mux:          http.NewServeMux(),
		length:       speak.LengthCheck(d.MaxAudioDuration),
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.limiter == nil {
		s.limiter = NewLimiter(LimiterConfig{Store: s.store, Now: s.now})
	}
	if s.triggers == nil {
		s.triggers = ratelimit.New(s.now)
	}
	checks := d.PasswordChecks
	if checks <= 0 {
		checks = runtime.NumCPU()
	}
	s.checks = make(chan struct{}, checks)
	if s.rules == nil {
		s.rules = speak.NewRuleCache(0)
	}
	if s.compare == nil {
		s.compare = bcrypt.CompareHashAndPassword
	}
	if s.previewWait <= 0 {
		s.previewWait = previewTimeout
	}
	if s.ttl <= 0 {
		s.ttl = DefaultSessionTTL
	}
	if s.mediaURL == nil {
		s.mediaURL = func(key string) string { return "/media/" + key }
	}
	if s.feedURL == nil {
		s.feedURL = narrator.FeedPath
	}
	s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler. It sets the security headers of every
// dashboard response and turns a panic into a 500 page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("panic in dashboard handler", "method", r.Method, "path", r.URL.Path, "panic", v)
			s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "The server could not complete the request. Try again in a moment.")
		}
	}()
	h := w.Header()
	media := "'self'"
	if s.publicOrigin != "" {
		media += " " + s.publicOrigin
	}
	if s.mediaOrigin != "" && s.mediaOrigin != s.publicOrigin {
		media += " " + s.mediaOrigin
	}
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src "+media+"; connect-src "+media+"; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	s.mux.ServeHTTP(w, r)
}
