package client

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// FeedSource is a feed that an rss project narrates, with what its reads
// found.
type FeedSource struct {
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

// NewFeedSource is a feed to add to an rss project; only URL is required.
type NewFeedSource struct {
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

func feedPath(projectID, feedID int64, rest ...string) string {
	return projectPath(projectID, append([]string{"feeds", strconv.FormatInt(feedID, 10)}, rest...)...)
}

// AddFeed adds a feed to an rss project; it is read at once.
func (c *Client) AddFeed(ctx context.Context, projectID int64, in NewFeedSource) (*FeedSource, error) {
	return call[*FeedSource](ctx, c, http.MethodPost, projectPath(projectID, "feeds"), nil, in)
}

// ListFeeds returns a project's feeds, oldest first.
func (c *Client) ListFeeds(ctx context.Context, projectID int64) ([]FeedSource, error) {
	return call[[]FeedSource](ctx, c, http.MethodGet, projectPath(projectID, "feeds"), nil, nil)
}

// GetFeed returns one feed.
func (c *Client) GetFeed(ctx context.Context, projectID, feedID int64) (*FeedSource, error) {
	return call[*FeedSource](ctx, c, http.MethodGet, feedPath(projectID, feedID), nil, nil)
}

// RemoveFeed removes a feed and returns it; its audios stay.
func (c *Client) RemoveFeed(ctx context.Context, projectID, feedID int64) (*FeedSource, error) {
	return call[*FeedSource](ctx, c, http.MethodDelete, feedPath(projectID, feedID), nil, nil)
}

// PollFeed reads a feed now and returns it with the state the read left: a
// feed that cannot be read is no error, its Status and LastError say why.
func (c *Client) PollFeed(ctx context.Context, projectID, feedID int64) (*FeedSource, error) {
	return call[*FeedSource](ctx, c, http.MethodPost, feedPath(projectID, feedID, "poll"), nil, nil)
}
