package feed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/narrator/narrator/internal/fetch"
)

// pingTimeout bounds one ping, hub's answer included.
const pingTimeout = 15 * time.Second

// Pinger tells a WebSub hub that a feed changed: a publish ping, a POST of
// the form hub.mode=publish&hub.url=FEED-URL, which hubs answer with a 2xx
// before they read the feed and push it to its subscribers.
type Pinger struct {
	client *fetch.Client
}

// NewPinger returns a Pinger that sends its pings through client, the
// guarded fetcher.
func NewPinger(client *fetch.Client) *Pinger { return &Pinger{client: client} }

// Ping tells hub that the feed at topic changed. It returns an error,
// without the hub's URL, if the hub cannot be reached or answers other
// than 2xx: the caller retries.
func (p *Pinger) Ping(ctx context.Context, hub, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	form := url.Values{"hub.mode": {"publish"}, "hub.url": {topic}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hub, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("ping hub: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("ping hub: %s", fetch.Describe(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("ping hub: it answered %s", resp.Status)
	}
	return nil
}
