package client

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// Source is a feed that an rss project narrates, with what its reads found.
type Source struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	URL       string `json:"url"`
	// Headers names the request headers sent with each read; their
	// values are never shown.
	Headers         []string          `json:"headers"`
	Mapping         map[string]string `json:"mapping"`
	FullText        bool              `json:"full_text"`
	BackfillItems   int               `json:"backfill_items"`
	BackfillDays    float64           `json:"backfill_days"`
	IntervalMinutes float64           `json:"interval_minutes"`
	CreatedAt       time.Time         `json:"created_at"`
	// Status is new, ok, not_modified or error; LastError says why a
	// read failed, in plain words.
	Status      string     `json:"status"`
	LastError   string     `json:"last_error"`
	LastFetchAt *time.Time `json:"last_fetch_at"`
	NextPollAt  time.Time  `json:"next_poll_at"`
	Failures    int        `json:"failures"`
	ItemsSeen   int64      `json:"items_seen"`
	Created     int64      `json:"created"`
	Updated     int64      `json:"updated"`
}

// NewSource is a source to add to an rss project; only URL is required.
type NewSource struct {
	URL string `json:"url"`
	// Headers are sent with each read (a paywalled feed's credentials).
	Headers map[string]string `json:"headers,omitempty"`
	// Mapping maps audio fields to item fields, e.g. {"body": "summary"}.
	Mapping  map[string]string `json:"mapping,omitempty"`
	FullText bool              `json:"full_text,omitempty"`
	// BackfillItems and BackfillDays bound the first read; with neither,
	// it narrates the latest 10 items.
	BackfillItems int     `json:"backfill_items,omitempty"`
	BackfillDays  float64 `json:"backfill_days,omitempty"`
	// IntervalMinutes is how often the feed is read; 10 when 0.
	IntervalMinutes float64 `json:"interval_minutes,omitempty"`
}

// FeedSource is the old name of Source.
//
// Deprecated: use Source; this alias goes in the release after next.
type FeedSource = Source

// NewFeedSource is the old name of NewSource.
//
// Deprecated: use NewSource; this alias goes in the release after next.
type NewFeedSource = NewSource

func sourcePath(projectID, sourceID int64, rest ...string) string {
	return projectPath(projectID, append([]string{"sources", strconv.FormatInt(sourceID, 10)}, rest...)...)
}

// AddSource adds a source to an rss project; it is read at once.
func (c *Client) AddSource(ctx context.Context, projectID int64, in NewSource) (*Source, error) {
	return call[*Source](ctx, c, http.MethodPost, projectPath(projectID, "sources"), nil, in)
}

// ListSources returns a project's sources, oldest first.
func (c *Client) ListSources(ctx context.Context, projectID int64) ([]Source, error) {
	return call[[]Source](ctx, c, http.MethodGet, projectPath(projectID, "sources"), nil, nil)
}

// GetSource returns one source.
func (c *Client) GetSource(ctx context.Context, projectID, sourceID int64) (*Source, error) {
	return call[*Source](ctx, c, http.MethodGet, sourcePath(projectID, sourceID), nil, nil)
}

// RemoveSource removes a source and returns it; its audios stay.
func (c *Client) RemoveSource(ctx context.Context, projectID, sourceID int64) (*Source, error) {
	return call[*Source](ctx, c, http.MethodDelete, sourcePath(projectID, sourceID), nil, nil)
}

// PollSource reads a source now and returns it with the state the read
// left: a source that cannot be read is no error, its Status and LastError
// say why.
func (c *Client) PollSource(ctx context.Context, projectID, sourceID int64) (*Source, error) {
	return call[*Source](ctx, c, http.MethodPost, sourcePath(projectID, sourceID, "poll"), nil, nil)
}

// AddFeed is the old name of AddSource.
//
// Deprecated: use AddSource; it goes in the release after next.
func (c *Client) AddFeed(ctx context.Context, projectID int64, in NewSource) (*Source, error) {
	return c.AddSource(ctx, projectID, in)
}

// ListFeeds is the old name of ListSources.
//
// Deprecated: use ListSources; it goes in the release after next.
func (c *Client) ListFeeds(ctx context.Context, projectID int64) ([]Source, error) {
	return c.ListSources(ctx, projectID)
}

// GetFeed is the old name of GetSource.
//
// Deprecated: use GetSource; it goes in the release after next.
func (c *Client) GetFeed(ctx context.Context, projectID, sourceID int64) (*Source, error) {
	return c.GetSource(ctx, projectID, sourceID)
}

// RemoveFeed is the old name of RemoveSource.
//
// Deprecated: use RemoveSource; it goes in the release after next.
func (c *Client) RemoveFeed(ctx context.Context, projectID, sourceID int64) (*Source, error) {
	return c.RemoveSource(ctx, projectID, sourceID)
}

// PollFeed is the old name of PollSource.
//
// Deprecated: use PollSource; it goes in the release after next.
func (c *Client) PollFeed(ctx context.Context, projectID, sourceID int64) (*Source, error) {
	return c.PollSource(ctx, projectID, sourceID)
}
