package client

import (
	"context"
	"net/http"
	"time"
)

// Publication states.
const (
	PublicationPublished = "published"
	PublicationDraft     = "draft"
	PublicationScheduled = "scheduled"
)

// Publication is the publisher's decision about an audio: whether the
// embedded player, its live stream and the podcast feed show it.
type Publication struct {
	AudioID int64  `json:"audio_id"`
	State   string `json:"state"`
	// PublishAt is when a scheduled audio is, or was, published; nil
	// otherwise.
	PublishAt *time.Time `json:"publish_at"`
	// Public says whether anonymous listeners reach the audio now.
	Public    bool       `json:"public"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// Publication returns the publication of an audio, found by ID or
// external_id.
func (c *Client) Publication(ctx context.Context, projectID int64, ref string) (*Publication, error) {
	return call[*Publication](ctx, c, http.MethodGet, audioPath(projectID, ref, "publication"), nil, nil)
}

// SetPublication publishes an audio (PublicationPublished), takes it back
// (PublicationDraft) or schedules it (PublicationScheduled, at publishAt;
// the zero time for the other states).
func (c *Client) SetPublication(ctx context.Context, projectID int64, ref, state string, publishAt time.Time) (*Publication, error) {
	in := map[string]any{"state": state}
	if !publishAt.IsZero() {
		in["publish_at"] = publishAt.UTC().Format(time.RFC3339Nano)
	}
	return call[*Publication](ctx, c, http.MethodPut, audioPath(projectID, ref, "publication"), nil, in)
}

// Access modes of a project.
const (
	AccessPublic = "public"
	AccessSigned = "signed"
)

// Access is who may play a project's audios without an API key.
type Access struct {
	ProjectID        int64      `json:"project_id"`
	Mode             string     `json:"mode"`
	AllowedOrigins   []string   `json:"allowed_origins"`
	DraftNewAudios   bool       `json:"draft_new_audios"`
	DownloadButton   bool       `json:"download_button"`
	HasSigningSecret bool       `json:"has_signing_secret"`
	UpdatedAt        *time.Time `json:"updated_at"`
	// SigningSecret is only in the answer of RotateEmbedSecret.
	SigningSecret string `json:"signing_secret,omitempty"`
}

// AccessUpdate changes a project's access; nil fields keep their values.
type AccessUpdate struct {
	Mode           *string  `json:"mode,omitempty"`
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	DraftNewAudios *bool    `json:"draft_new_audios,omitempty"`
	DownloadButton *bool    `json:"download_button,omitempty"`
}

// Access returns a project's access settings.
func (c *Client) Access(ctx context.Context, projectID int64) (*Access, error) {
	return call[*Access](ctx, c, http.MethodGet, projectPath(projectID, "access"), nil, nil)
}

// SetAccess changes a project's access settings.
func (c *Client) SetAccess(ctx context.Context, projectID int64, u AccessUpdate) (*Access, error) {
	return call[*Access](ctx, c, http.MethodPut, projectPath(projectID, "access"), nil, u)
}

// RotateEmbedSecret gives a project a new signing secret, returned in
// SigningSecret this once; tokens signed with the old one are refused.
func (c *Client) RotateEmbedSecret(ctx context.Context, projectID int64) (*Access, error) {
	return call[*Access](ctx, c, http.MethodPost, projectPath(projectID, "access", "rotate-secret"), nil, nil)
}

// SpeechSettings are a project's speech settings (an extension).
type SpeechSettings struct {
	ProjectID int64 `json:"project_id"`
	// SpeechRate is the speaking-rate factor of the project's renderings,
	// from 0.5 to 2.0: 1 is each voice's own pace.
	SpeechRate float64 `json:"speech_rate"`
}

// SpeechSettings returns a project's speech settings.
func (c *Client) SpeechSettings(ctx context.Context, projectID int64) (*SpeechSettings, error) {
	return call[*SpeechSettings](ctx, c, http.MethodGet, projectPath(projectID, "speech"), nil, nil)
}

// SetSpeechRate sets a project's speaking rate. Audios keep their speech;
// renderings from then on speak at the new rate.
func (c *Client) SetSpeechRate(ctx context.Context, projectID int64, rate float64) (*SpeechSettings, error) {
	return call[*SpeechSettings](ctx, c, http.MethodPut, projectPath(projectID, "speech"), nil, map[string]float64{"speech_rate": rate})
}
