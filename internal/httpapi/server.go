// Package httpapi serves the Audio Generation Service API v3 over JSON.
//
// It owns the wire types, which match the specification exactly, and maps
// narrator errors to statuses and to the v3 error body through one table.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/ratelimit"
	"github.com/narrator/narrator/internal/speak"
)

// Store is what the API needs from storage. Methods return *narrator.Error
// values with ENOTFOUND, EINVALID or EUNAUTHORIZED codes for client mistakes.
type Store interface {
	// CreateSource stores a feed of an rss project: ENOTFOUND, EINVALID
	// (also for a project of another type) or ECONFLICT (too many).
	CreateSource(ctx context.Context, src *narrator.Source) error
	// FindSource returns a project's feed; ENOTFOUND if the project has
	// none of that ID.
	FindSource(ctx context.Context, projectID, id int64) (*narrator.Source, error)
	// ListSources returns a project's sources, oldest first.
	ListSources(ctx context.Context, projectID int64) ([]*narrator.Source, error)
	// DeleteSource removes a feed, keeping its audios; ENOTFOUND if the
	// project has no such feed.
	DeleteSource(ctx context.Context, projectID, id int64) error
	// AuthenticateAPIKey returns the account of a key hash; EUNAUTHORIZED if
	// the key is unknown or revoked.
	AuthenticateAPIKey(ctx context.Context, hash []byte) (int64, error)
	// AuthorizeProject returns a project through a live key of its account,
	// in one read: EUNAUTHORIZED if the key is unknown or revoked, ENOTFOUND
	// for a missing project or one of another account.
	AuthorizeProject(ctx context.Context, hash []byte, projectID int64) (*narrator.Project, error)
	ListProjects(ctx context.Context, accountID int64) ([]*narrator.Project, error)
	// CreateAudio inserts a, or updates the live audio with a's external_id.
	CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error)
	// CreateAudioWithKey is CreateAudio once the API key with this hash
	// is read, no earlier than the call, and found to be a live key of
	// a.ProjectID's account; it returns AuthorizeProject's errors
	// otherwise, storing nothing.
	CreateAudioWithKey(ctx context.Context, hash []byte, a *narrator.Audio) (created bool, err error)
	FindAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	UpdateAudio(ctx context.Context, projectID int64, ref string, u narrator.AudioUpdate) (*narrator.Audio, error)
	DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	ListAudios(ctx context.Context, projectID int64, since time.Time, page, perPage int) ([]*narrator.Audio, error)

	ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error)
	// SetPronunciation adds a rule or replaces the one for the same phrase.
	SetPronunciation(ctx context.Context, p *narrator.Pronunciation) error
	RemovePronunciation(ctx context.Context, projectID, id int64) (*narrator.Pronunciation, error)

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

	// AudioPublication returns the default for an audio never decided on.
	AudioPublication(ctx context.Context, audioID int64) (narrator.Publication, error)
	// SetPublication returns ENOTFOUND unless the audio is live.
	SetPublication(ctx context.Context, p narrator.Publication) (narrator.Publication, error)
	// ProjectAccess returns the defaults for a project never changed.
	ProjectAccess(ctx context.Context, projectID int64) (narrator.ProjectAccess, error)
	// SetProjectAccess keeps the signing secret; EINVALID for a signed
	// project without one.
	SetProjectAccess(ctx context.Context, a *narrator.ProjectAccess) error
	RotateEmbedSecret(ctx context.Context, projectID int64, secret string) (narrator.ProjectAccess, error)
	// SetSpeechRate returns the project with its new rate: EINVALID for
	// a rate out of range, ENOTFOUND.
	SetSpeechRate(ctx context.Context, projectID int64, rate float64) (*narrator.Project, error)
	// SetClip returns EINVALID for a clip out of its limits, ENOTFOUND.
	SetClip(ctx context.Context, c *narrator.Clip) error
	// Clip and RemoveClip return ENOTFOUND for a project without one.
	Clip(ctx context.Context, projectID int64, kind narrator.ClipKind) (*narrator.Clip, error)
	RemoveClip(ctx context.Context, projectID int64, kind narrator.ClipKind) error

	// FindFeed returns ENOTFOUND for a project that never had a podcast
	// feed.
	FindFeed(ctx context.Context, projectID int64) (*narrator.Feed, error)
	// SaveFeed creates or updates a feed; EINVALID for invalid settings.
	SaveFeed(ctx context.Context, f *narrator.Feed) error
	// RotateFeedToken returns ENOTFOUND for a project without a feed.
	RotateFeedToken(ctx context.Context, projectID int64, token string) (*narrator.Feed, error)
}

// ClipDecoder decodes an uploaded intro or outro (pipeline.ClipDecoder).
type ClipDecoder interface {
	// DecodeClip returns EINVALID for a content type it does not read,
	// audio it cannot decode, or a clip out of its limits.
	DecodeClip(ctx context.Context, kind narrator.ClipKind, contentType string, data []byte) (*narrator.Clip, error)
}

// PageReader reads the article of a web page, for the import extension.
type PageReader interface {
	// ReadPage returns EINVALID for a URL that is not absolute http or
	// https, and EUNREADABLE, with a reason a user can read, for a page
	// that cannot be fetched or holds no article.
	ReadPage(ctx context.Context, url string) (*narrator.Page, error)
}

// Deps are the collaborators of the API server.
type Deps struct {
	Store  Store
	Logger *slog.Logger
	// MediaURL turns a media key into the absolute URL clients fetch it from.
	MediaURL func(key string) string
	// Media reads published media, for the transcript extension.
	Media MediaOpener
	// Queue gives queue positions to the progress extension; nil leaves
	// them out.
	Queue QueuePositioner
	// Resynthesis queues the resyntheses that a pronunciation change may
	// ask for and …/resynthesize asks for (jobs.Queue); without it, both
	// are refused.
	Resynthesis ResynthesisQueue
	// Pages reads the pages the import extension imports; nil turns the
	// extension off (404).
	Pages PageReader
	// Sources reads sources when asked (the poll extension); nil turns the
	// extension off (404).
	Sources SourcePoller
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Voices gives the voice catalog; nil means the built-in voices.
	Voices CatalogSource
	// MaxBodyBytes caps request bodies; DefaultMaxBodyBytes when zero.
	MaxBodyBytes int64
	// MaxAudioDuration caps an audio's length: a create or update whose
	// article is estimated longer (speak.Estimate) is refused.
	// narrator.MaxAudioDuration when zero.
	MaxAudioDuration time.Duration
	// Speaker speaks the requests of the OpenAI speech convention
	// (/v1/audio/speech); nil on a node that does not synthesise, which
	// answers them 503.
	Speaker Speaker
	// Clips decodes the intros and outros the clip extension uploads;
	// nil refuses uploads (503).
	Clips ClipDecoder
	// ClipSpeaker speaks the intros and outros set as a text; nil
	// refuses them (503).
	ClipSpeaker ClipSpeaker
	// MaxSpeeches caps the speech requests synthesised at once; one per
	// core when zero.
	MaxSpeeches int
	// SpeechLimits counts each API key's speech requests
	// (narrator.SpeechBurst); one of the server's own when nil.
	SpeechLimits *ratelimit.Limiter
	// FeedURL turns a podcast feed's token into the feed's URL; nil
	// leaves feed_url out of the podcast extension.
	FeedURL func(token string) string
	// WebSubHub is the WebSub hub podcast feeds name, "" for none.
	WebSubHub string
	// Artwork checks a podcast feed's new image; nil saves it unchecked.
	Artwork ArtworkChecker
	// WebhookTriggers counts the test and resend calls of webhook
	// endpoints (ratelimit.WebhookTriggers); share it with the dashboard.
	// One of the server's own when nil.
	WebhookTriggers *ratelimit.Limiter
}

// DefaultMaxBodyBytes is the default request body limit. A body of the
// largest allowed article, 100,000 characters, fits even when every
// character is escaped as a JSON \u sequence.
const DefaultMaxBodyBytes = 2 << 20

// AudiosPerPage is the list page size fixed by the specification.
const AudiosPerPage = 50

// CatalogSource gives the current voice catalog.
type CatalogSource interface {
	Catalog(ctx context.Context) *narrator.Catalog
}

// catalog returns the current voice catalog.
func (s *Server) catalog(ctx context.Context) *narrator.Catalog {
	if s.voices == nil {
		return narrator.BuiltinCatalog()
	}
	return s.voices.Catalog(ctx)
}

// Server is the v3 API as an http.Handler.
type Server struct {
	store    Store
	logger   *slog.Logger
	mediaURL func(string) string
	media    MediaOpener
	queue    QueuePositioner
	resynth  ResynthesisQueue
	voices   CatalogSource
	pages    PageReader
	sources  SourcePoller
	now      func() time.Time
	maxBody  int64
	length   narrator.LengthCheck
	triggers *ratelimit.Limiter
	feedURL  func(string) string
	hub      string
	artwork  ArtworkChecker
	known    knownKeys
	mux      *http.ServeMux

	speaker      Speaker
	clips        ClipDecoder
	clipSpeaker  ClipSpeaker
	speaking     chan struct{} // a token per speech being synthesised
	speechLimits *ratelimit.Limiter
}

// NewServer returns the API handler. Paths outside the API answer a JSON 404.
func NewServer(d Deps) *Server {
	s := &Server{
		store:    d.Store,
		logger:   d.Logger,
		mediaURL: d.MediaURL,
		media:    d.Media,
		queue:    d.Queue,
		resynth:  d.Resynthesis,
		voices:   d.Voices,
		pages:    d.Pages,
		sources:  d.Sources,
		feedURL:  d.FeedURL,
		hub:      d.WebSubHub,
		artwork:  d.Artwork,
		now:      d.Now,
		maxBody:  d.MaxBodyBytes,
		length:   speak.LengthCheck(d.MaxAudioDuration),
		triggers: d.WebhookTriggers,
		mux:      http.NewServeMux(),

		speaker:      d.Speaker,
		clips:        d.Clips,
		clipSpeaker:  d.ClipSpeaker,
		speechLimits: d.SpeechLimits,
	}
	maxSpeeches := d.MaxSpeeches
	if maxSpeeches <= 0 {
		maxSpeeches = runtime.NumCPU()
	}
	s.speaking = make(chan struct{}, maxSpeeches)
	if s.now == nil {
		s.now = time.Now
	}
	if s.speechLimits == nil {
		s.speechLimits = ratelimit.New(s.now)
	}
	if s.triggers == nil {
		s.triggers = ratelimit.New(s.now)
	}
	if s.maxBody == 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v)
			writeError(w, narrator.Errorf(narrator.EINTERNAL, "internal error"))
		}
	}()
	w.Header().Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}

// handlerFunc is a handler that reports failure by returning an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc: a returned error is logged once here and
// written as the v3 error body.
func (s *Server) handle(h handlerFunc) http.Handler {
	return s.handleWith(h, writeError)
}

// handleWith is handle with write, the edge's error writer: each edge
// answers in its own shape, and all log and map errors alike.
func (s *Server) handleWith(h handlerFunc, write func(http.ResponseWriter, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		err = narrator.ClientGone(r.Context(), err)
		if narrator.ErrorCode(err) == narrator.EINTERNAL {
			s.logger.ErrorContext(r.Context(), "api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		write(w, err)
	})
}
