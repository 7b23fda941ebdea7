// Package listens counts the embedded player's anonymous listening events
// in memory and writes them to the store in batches, so that a flood of
// events costs at most one database write per flush interval per node and
// none on the request path.
//
// Each client (an IPv4 address, or an IPv6 /64, as clientip.Key names it)
// may send a bounded number of events per window, and its repeated
// "complete" events for one audio count once per window. The client keys
// live in memory for one window only and are never written: the database
// keeps daily counts and nothing about listeners.
//
// A crash loses the counts of at most one flush interval; a clean shutdown
// (Close) writes them.
package listens

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/narrator/narrator"
)

// Store is where the counts go.
type Store interface {
	// RecordListens adds a batch of counts in one write, dropping those
	// whose audio is not a live audio of their project.
	RecordListens(ctx context.Context, tallies []narrator.ListenTally) error
}

// Config configures a Counter. Zero fields take the defaults; Store is
// required.
type Config struct {
	Store  Store
	Logger *slog.Logger
	// Interval is how often the counts are written; one second.
	Interval time.Duration
	// Window is the period of a client's budget and of its one counted
	// "complete" per audio; ten minutes.
	Window time.Duration
	// PerClient is how many events a client may send in a window; 300,
	// some fifty audios listened to through.
	PerClient int
	// MaxClients caps the clients held in a window, and MaxTallies the
	// counts waiting for a flush, so that memory stays bounded whatever
	// the flood; events beyond them are refused as rate-limited.
	// 100,000 each.
	MaxClients, MaxTallies int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// key names one tally: an event of an audio of a project on a day.
type key struct {
	project, audio int64
	event          string
	day            time.Time
}

// client is what a window holds of one client: how many events it sent,
// and the audios whose "complete" it already counted.
type client struct {
	events    int
	completes map[int64]bool
}

// Counter counts listening events and writes them every Interval from a
// goroutine it owns. Close stops it after a last write.
type Counter struct {
	cfg Config

	mu          sync.Mutex
	tallies     map[key]int64
	clients     map[string]*client
	windowStart time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Counter and starts its flusher.
func New(cfg Config) *Counter {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Window <= 0 {
		cfg.Window = 10 * time.Minute
	}
	if cfg.PerClient <= 0 {
		cfg.PerClient = 300
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 100_000
	}
	if cfg.MaxTallies <= 0 {
		cfg.MaxTallies = 100_000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Counter{cfg: cfg, tallies: map[key]int64{}, clients: map[string]*client{}, windowStart: cfg.Now(), cancel: cancel}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run(ctx)
	}()
	return c
}

// Count counts one event of an audio of a project from clientKey, in
// memory. It never touches the database, and answers the same whatever the
// IDs: pairs that do not exist are dropped when the counts are written. It
// returns EINVALID for an unknown event and ERATELIMITED when the client
// has used its window's budget, or the counter is full. A repeated
// "complete" of one audio from one client in a window is accepted and not
// counted.
func (c *Counter) Count(clientKey string, projectID, audioID int64, event string) error {
	if err := narrator.ValidateListenEvent(event); err != nil {
		return err
	}
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.windowStart) >= c.cfg.Window {
		c.clients = map[string]*client{}
		c.windowStart = now
	}
	cl := c.clients[clientKey]
	if cl == nil {
		if len(c.clients) >= c.cfg.MaxClients {
			return c.limited()
		}
		cl = &client{}
		c.clients[clientKey] = cl
	}
	if cl.events >= c.cfg.PerClient {
		return c.limited()
	}
	cl.events++
	if event == narrator.ListenComplete {
		if cl.completes[audioID] {
			return nil
		}
		if cl.completes == nil {
			cl.completes = map[int64]bool{}
		}
		cl.completes[audioID] = true
	}
	k := key{projectID, audioID, event, narrator.ListenDay(now)}
	if _, ok := c.tallies[k]; !ok && len(c.tallies) >= c.cfg.MaxTallies {
		return c.limited()
	}
	c.tallies[k]++
	return nil
}

// limited is the error of an event over a limit.
func (c *Counter) limited() error {
	return narrator.Errorf(narrator.ERATELIMITED, "too many listening events from this client; try again in %s", c.cfg.Window)
}

// run writes the counts every Interval until ctx ends, then once more.
func (c *Counter) run(ctx context.Context) {
	tick := time.NewTicker(c.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			c.flush(ctx)
		case <-ctx.Done():
			c.flush(context.WithoutCancel(ctx))
			return
		}
	}
}

// flush writes the counts held so far in one store call. Counts a failed
// write leaves are put back for the next one, as far as MaxTallies allows.
func (c *Counter) flush(ctx context.Context) {
	c.mu.Lock()
	pending := c.tallies
	c.tallies = map[key]int64{}
	c.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	batch := make([]narrator.ListenTally, 0, len(pending))
	for k, n := range pending {
		batch = append(batch, narrator.ListenTally{ProjectID: k.project, AudioID: k.audio, Event: k.event, Day: k.day, Count: n})
	}
	err := c.cfg.Store.RecordListens(ctx, batch)
	if err == nil {
		return
	}
	c.cfg.Logger.Error("listens: write counts", "tallies", len(batch), "err", fmt.Errorf("listens: %w", err))
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, n := range pending {
		if _, ok := c.tallies[k]; ok || len(c.tallies) < c.cfg.MaxTallies {
			c.tallies[k] += n
		}
	}
}

// Close stops the flusher after it has written the counts it holds.
func (c *Counter) Close() {
	c.cancel()
	c.wg.Wait()
}
