package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// The states of an audio.
const (
	StateUnprocessed = "unprocessed" // created or changed; its speech is being made
	StateProcessed   = "processed"   // its media are published
	StateFailed      = "failed"      // synthesis gave up; Audio.Error says why
)

// The content types of media.
const (
	ContentTypeMP3  = "mp3"
	ContentTypeM3U8 = "m3u8"
)

// Audio is an article turned into speech.
type Audio struct {
	ID int64 `json:"id"`
	// ExternalID is the client's own ID of the article; "" when none.
	ExternalID string            `json:"external_id"`
	State      string            `json:"state"`
	Media      []Media           `json:"media"`
	Deleted    bool              `json:"deleted"`
	Metadata   map[string]string `json:"metadata"`
	// Error says why synthesis failed, in state failed.
	Error string `json:"error,omitempty"`
}

// MediaURL returns the URL of the audio's media of contentType (an MP3 or
// an HLS playlist), or "" while the audio is not processed.
func (a *Audio) MediaURL(contentType string) string {
	for _, m := range a.Media {
		if m.ContentType == contentType {
			return m.URL
		}
	}
	return ""
}

// Media is one published form of an audio.
type Media struct {
	ID          int64  `json:"id"`
	ContentType string `json:"content_type"`
	// URL is the file's absolute URL once the audio is processed, else "".
	URL string `json:"-"`
}

// UnmarshalJSON reads a v3 media entry, whose url is an empty array until
// the audio is processed.
func (m *Media) UnmarshalJSON(data []byte) error {
	var raw struct {
		ID          int64           `json:"id"`
		ContentType string          `json:"content_type"`
		URL         json.RawMessage `json:"url"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.ID, m.ContentType, m.URL = raw.ID, raw.ContentType, ""
	if len(raw.URL) > 0 && raw.URL[0] == '"' {
		return json.Unmarshal(raw.URL, &m.URL)
	}
	return nil
}

// NewAudio is an article to turn into speech. Body is required.
type NewAudio struct {
	Title      string            `json:"title,omitempty"`
	Body       string            `json:"body"`
	Author     string            `json:"author,omitempty"`
	ArticleURL string            `json:"article_url,omitempty"`
	ExternalID string            `json:"external_id,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

// AudioUpdate changes an audio; nil fields keep their values. A change of
// the title, body or author makes the audio unprocessed until its new
// speech is published.
type AudioUpdate struct {
	Title      *string
	Body       *string
	Author     *string
	ArticleURL *string
	ExternalID *string
	// Metadata replaces the metadata when not nil; an empty map clears it.
	Metadata map[string]string
}

// String returns a pointer to s, for AudioUpdate fields.
func String(s string) *string { return &s }

// MarshalJSON writes the fields that are set.
func (u AudioUpdate) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	for name, v := range map[string]*string{"title": u.Title, "body": u.Body, "author": u.Author,
		"article_url": u.ArticleURL, "external_id": u.ExternalID} {
		if v != nil {
			out[name] = *v
		}
	}
	if u.Metadata != nil {
		out["metadata"] = u.Metadata
	}
	return json.Marshal(out)
}

// Project is a project of the account.
type Project struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Type     string `json:"type"`
	Language string `json:"language"`
	// URL is the project's website; "" when none.
	URL string `json:"url"`
	// TitleVoice and BodyVoice are labels such as "Sally (Female)".
	TitleVoice string `json:"title_voice"`
	BodyVoice  string `json:"body_voice"`
	AudioCount int    `json:"audio_count"`
}

// ListProjects returns the projects of the key's account.
func (c *Client) ListProjects(ctx context.Context) ([]Project, error) {
	return call[[]Project](ctx, c, http.MethodGet, "/api/v3/projects", nil, nil)
}

// CreateAudio creates an audio, which starts unprocessed. If a live audio
// of the project has the same ExternalID, that audio is updated instead,
// so a retried create never makes a duplicate.
func (c *Client) CreateAudio(ctx context.Context, projectID int64, a NewAudio) (*Audio, error) {
	return call[*Audio](ctx, c, http.MethodPost, projectPath(projectID, "audio"), nil, a)
}

// GetAudio returns an audio by its ID or its external ID (ref).
func (c *Client) GetAudio(ctx context.Context, projectID int64, ref string) (*Audio, error) {
	return call[*Audio](ctx, c, http.MethodGet, audioPath(projectID, ref), nil, nil)
}

// UpdateAudio changes an audio found by its ID or external ID.
func (c *Client) UpdateAudio(ctx context.Context, projectID int64, ref string, u AudioUpdate) (*Audio, error) {
	return call[*Audio](ctx, c, http.MethodPut, audioPath(projectID, ref), nil, u)
}

// DeleteAudio deletes an audio and its media, and returns it with
// Deleted true.
func (c *Client) DeleteAudio(ctx context.Context, projectID int64, ref string) (*Audio, error) {
	return call[*Audio](ctx, c, http.MethodDelete, audioPath(projectID, ref), nil, nil)
}

// ListOptions selects a page of a project's audios.
type ListOptions struct {
	// Period is "daily", "weekly", "monthly" or "all" (the default, "").
	Period string
	// Page counts from 1 (the default, 0).
	Page int
}

// AudiosPerPage is the size of a page of ListAudios.
const AudiosPerPage = 50

// ListAudios returns a page of a project's audios, newest first; a page
// past the end is empty.
func (c *Client) ListAudios(ctx context.Context, projectID int64, opt ListOptions) ([]Audio, error) {
	q := url.Values{}
	if opt.Period != "" {
		q.Set("period", opt.Period)
	}
	if opt.Page != 0 {
		q.Set("page", strconv.Itoa(opt.Page))
	}
	return call[[]Audio](ctx, c, http.MethodGet, projectPath(projectID, "audio"), q, nil)
}
