package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Progress says how far an audio's synthesis has got. Fields that do not
// apply are zero.
type Progress struct {
	AudioID int64  `json:"audio_id"`
	State   string `json:"state"`
	// Queued is true while the synthesis job waits for a worker;
	// QueuePosition is then its place, 1 for the next to start.
	Queued        bool `json:"queued"`
	QueuePosition int  `json:"queue_position"`
	// UnitsDone of UnitsTotal synthesis units (sentences) are written;
	// Share is their ratio (1 once processed).
	UnitsDone  int     `json:"units_done"`
	UnitsTotal int     `json:"units_total"`
	Share      float64 `json:"share"`
	// ETASeconds estimates the time left; nil until a unit is done.
	ETASeconds *int `json:"eta_seconds"`
	// LiveURL (HLS) and LiveMP3URL (a growing MP3) play the audio while it
	// is made, once its first segment is out.
	LiveURL    string `json:"live_url"`
	LiveMP3URL string `json:"live_mp3_url"`
}

// Progress returns how far the synthesis of an audio has got.
func (c *Client) Progress(ctx context.Context, projectID int64, ref string) (*Progress, error) {
	return call[*Progress](ctx, c, http.MethodGet, audioPath(projectID, ref, "progress"), nil, nil)
}

// Transcript is the timed text of a processed audio.
type Transcript struct {
	AudioID int64 `json:"audio_id"`
	// Duration is the MP3's, in seconds.
	Duration float64 `json:"duration"`
	// VTTURL and JSONURL are the transcript's public files.
	VTTURL    string     `json:"vtt_url"`
	JSONURL   string     `json:"json_url"`
	Sentences []Sentence `json:"sentences"`
}

// Sentence is one sentence as the engine read it; times are seconds from
// the start of the MP3.
type Sentence struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
	// Words are the words as spoken, where the engine reports them.
	Words []Word `json:"words,omitempty"`
}

// Word is one spoken word of a Sentence.
type Word struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

// Transcript returns the timed transcript of a processed audio. It is a
// 409 *Error while the audio is not processed.
func (c *Client) Transcript(ctx context.Context, projectID int64, ref string) (*Transcript, error) {
	return call[*Transcript](ctx, c, http.MethodGet, audioPath(projectID, ref, "transcript"), nil, nil)
}

// Voice is a voice of the server's catalog.
type Voice struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Gender   string `json:"gender"`
	Language string `json:"language"`
	Engine   string `json:"engine"`
	// DefaultFor lists "title" and/or "body" for a language's default voices.
	DefaultFor []string `json:"default_for"`
}

// ListVoices returns the voice catalog, or the voices of one language
// (such as "en_US") when language is not "".
func (c *Client) ListVoices(ctx context.Context, language string) ([]Voice, error) {
	q := url.Values{}
	if language != "" {
		q.Set("language", language)
	}
	return call[[]Voice](ctx, c, http.MethodGet, "/api/v3/voices", q, nil)
}

// Pronunciation is a rule of a project: wherever Phrase occurs as a whole
// word or phrase, in any letter case, the engine reads Say.
type Pronunciation struct {
	ID        int64     `json:"id"`
	Phrase    string    `json:"phrase"`
	Say       string    `json:"say"`
	CreatedAt time.Time `json:"created_at"`
	// Resynthesis is "queued" in answers to a change that asked for one:
	// the audios that contain the phrase are re-queued in the background.
	Resynthesis string `json:"resynthesis,omitempty"`
}

// PageImport is an article page to import.
type PageImport struct {
	// URL is the article's page, absolute http or https.
	URL string `json:"url"`
	// ExternalID is the audio's; the page's canonical URL when empty.
	ExternalID string `json:"external_id,omitempty"`
	// Metadata is kept as given; the page's language is added under
	// "language" unless it names one.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// ImportAudio creates an audio from an article's web page: the server
// fetches the page while the call waits, extracts its title, author and
// text, and creates the audio as CreateAudio does. A page that cannot be
// imported (refused address, no answer, not HTML, no article) is an
// *Error with status 422 whose message says why.
func (c *Client) ImportAudio(ctx context.Context, projectID int64, in PageImport) (*Audio, error) {
	return call[*Audio](ctx, c, http.MethodPost, projectPath(projectID, "audio", "import"), nil, in)
}

// ListPronunciations returns a project's pronunciation rules.
func (c *Client) ListPronunciations(ctx context.Context, projectID int64) ([]Pronunciation, error) {
	return call[[]Pronunciation](ctx, c, http.MethodGet, projectPath(projectID, "pronunciations"), nil, nil)
}

// SetPronunciation adds a rule, or replaces the rule for the same phrase.
// With resynthesize, the project's audios that contain the phrase are
// synthesised again.
func (c *Client) SetPronunciation(ctx context.Context, projectID int64, phrase, say string, resynthesize bool) (*Pronunciation, error) {
	in := map[string]any{"phrase": phrase, "say": say, "resynthesize": resynthesize}
	return call[*Pronunciation](ctx, c, http.MethodPost, projectPath(projectID, "pronunciations"), nil, in)
}

// RemovePronunciation removes a rule and returns it.
func (c *Client) RemovePronunciation(ctx context.Context, projectID, ruleID int64, resynthesize bool) (*Pronunciation, error) {
	in := map[string]any{"resynthesize": resynthesize}
	return call[*Pronunciation](ctx, c, http.MethodDelete, projectPath(projectID, "pronunciations", strconv.FormatInt(ruleID, 10)), nil, in)
}

// ProjectResynthesis answers ResynthesizeProject.
type ProjectResynthesis struct {
	ProjectID int64 `json:"project_id"`
	// Resynthesis is "queued".
	Resynthesis string `json:"resynthesis"`
	// AudioCount is the project's live audios, which the job looks at.
	AudioCount int `json:"audio_count"`
}

// ResynthesizeProject queues the resynthesis of every live audio of a
// project, as after a change of its intro, outro or speaking rate, which
// re-render nothing by themselves. A background job re-queues them within
// the account's limits. While a resynthesis of the project is under way,
// it returns an *Error for which IsConflict is true.
func (c *Client) ResynthesizeProject(ctx context.Context, projectID int64) (*ProjectResynthesis, error) {
	return call[*ProjectResynthesis](ctx, c, http.MethodPost, projectPath(projectID, "resynthesize"), nil, nil)
}

// The webhook events.
const (
	EventAudioProcessed = "audio.processed"
	EventAudioFailed    = "audio.failed"
	EventAudioUpdated   = "audio.updated"
	EventAudioDeleted   = "audio.deleted"
)

// Webhook is an endpoint that receives a project's events.
type Webhook struct {
	ID           int64      `json:"id"`
	ProjectID    int64      `json:"project_id"`
	URL          string     `json:"url"`
	Events       []string   `json:"events"`
	Enabled      bool       `json:"enabled"`
	DisabledAt   *time.Time `json:"disabled_at"`
	FailingSince *time.Time `json:"failing_since"`
	CreatedAt    time.Time  `json:"created_at"`
	// Secret signs the messages; it is only in the answers to
	// CreateWebhook and RotateWebhookSecret.
	Secret string `json:"secret,omitempty"`
}

// Delivery is one message to one endpoint, with its attempts.
type Delivery struct {
	ID        int64  `json:"id"`
	WebhookID int64  `json:"webhook_id"`
	MessageID string `json:"message_id"`
	Event     string `json:"event"`
	// AudioID is 0 for a test message.
	AudioID  int64  `json:"audio_id"`
	State    string `json:"state"` // pending, delivered or failed
	Attempts int    `json:"attempts"`
	// ResponseCode is the last answer's status; 0 before any.
	ResponseCode  int             `json:"response_code"`
	LastError     string          `json:"last_error"`
	CreatedAt     time.Time       `json:"created_at"`
	LastAttemptAt *time.Time      `json:"last_attempt_at"`
	Payload       json.RawMessage `json:"payload"`
}

func webhookPath(projectID, webhookID int64, rest ...string) string {
	return projectPath(projectID, append([]string{"webhooks", strconv.FormatInt(webhookID, 10)}, rest...)...)
}

// CreateWebhook adds an endpoint for events (all of them when empty) and
// returns it with its secret.
func (c *Client) CreateWebhook(ctx context.Context, projectID int64, endpointURL string, events []string) (*Webhook, error) {
	in := map[string]any{"url": endpointURL}
	if len(events) > 0 {
		in["events"] = events
	}
	return call[*Webhook](ctx, c, http.MethodPost, projectPath(projectID, "webhooks"), nil, in)
}

// ListWebhooks returns a project's endpoints, without secrets.
func (c *Client) ListWebhooks(ctx context.Context, projectID int64) ([]Webhook, error) {
	return call[[]Webhook](ctx, c, http.MethodGet, projectPath(projectID, "webhooks"), nil, nil)
}

// GetWebhook returns one endpoint, without its secret.
func (c *Client) GetWebhook(ctx context.Context, projectID, webhookID int64) (*Webhook, error) {
	return call[*Webhook](ctx, c, http.MethodGet, webhookPath(projectID, webhookID), nil, nil)
}

// DeleteWebhook removes an endpoint and returns it.
func (c *Client) DeleteWebhook(ctx context.Context, projectID, webhookID int64) (*Webhook, error) {
	return call[*Webhook](ctx, c, http.MethodDelete, webhookPath(projectID, webhookID), nil, nil)
}

// RotateWebhookSecret gives an endpoint a new secret, which signs every
// attempt from then on, and returns the endpoint with it.
func (c *Client) RotateWebhookSecret(ctx context.Context, projectID, webhookID int64) (*Webhook, error) {
	return call[*Webhook](ctx, c, http.MethodPost, webhookPath(projectID, webhookID, "rotate-secret"), nil, nil)
}

// EnableWebhook enables a disabled endpoint again.
func (c *Client) EnableWebhook(ctx context.Context, projectID, webhookID int64) (*Webhook, error) {
	return call[*Webhook](ctx, c, http.MethodPost, webhookPath(projectID, webhookID, "enable"), nil, nil)
}

// TestWebhook queues a test message to an endpoint.
func (c *Client) TestWebhook(ctx context.Context, projectID, webhookID int64) (*Delivery, error) {
	return call[*Delivery](ctx, c, http.MethodPost, webhookPath(projectID, webhookID, "test"), nil, nil)
}

// ListDeliveries returns an endpoint's latest deliveries, newest first:
// at most limit (1 to 100), or 100 when limit is 0.
func (c *Client) ListDeliveries(ctx context.Context, projectID, webhookID int64, limit int) ([]Delivery, error) {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[[]Delivery](ctx, c, http.MethodGet, webhookPath(projectID, webhookID, "deliveries"), q, nil)
}

// ResendDelivery queues a delivery again, with the same message ID and
// body.
func (c *Client) ResendDelivery(ctx context.Context, projectID, webhookID, deliveryID int64) (*Delivery, error) {
	return call[*Delivery](ctx, c, http.MethodPost, webhookPath(projectID, webhookID, "deliveries", strconv.FormatInt(deliveryID, 10), "resend"), nil, nil)
}
