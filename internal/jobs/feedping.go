package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
)

// FeedPingArgs is narrator.FeedPingJob as River stores it.
type FeedPingArgs struct {
	ProjectID int64     `json:"project_id"`
	At        time.Time `json:"at"`
}

// Kind implements river.JobArgs.
func (FeedPingArgs) Kind() string { return narrator.FeedPingJob{}.JobKind() }

// FeedPingMaxAttempts is how often a ping is tried: with the default
// backoff (FeedPingConfig.RetryBase) the last try comes about an hour and
// a half after the first. A later change of the feed pings again anyway.
const FeedPingMaxAttempts = 10

// InsertOpts implements river.JobArgsWithInsertOpts. Pings wait on the
// network, as deliveries do, and share their queue. A ping is unique by
// its feed and due time while it waits, runs or waits to retry: the
// changes of one window (narrator.FeedPing) make one job. A finished one
// does not count, so that a change that comes after it still pings.
func (FeedPingArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueWebhook, MaxAttempts: FeedPingMaxAttempts, UniqueOpts: river.UniqueOpts{
		ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateScheduled, rivertype.JobStateRetryable},
	}}
}

// FeedPingStore is what the ping worker needs from storage.
type FeedPingStore interface {
	// FindFeed returns a project's feed, or ENOTFOUND.
	FindFeed(ctx context.Context, projectID int64) (*narrator.Feed, error)
}

// HubPinger tells a WebSub hub that the feed at topic changed.
type HubPinger interface {
	// Ping returns an error if the hub did not take the ping; it bounds
	// its time itself.
	Ping(ctx context.Context, hub, topic string) error
}

// FeedPingConfig configures the ping worker.
type FeedPingConfig struct {
	// Hub is the WebSub hub's URL; "" makes pings do nothing (no store
	// enqueues them then: a job left from a configuration with a hub).
	Hub string
	// PublicURL is the base of the feeds' URLs, without a trailing slash:
	// a ping names the feed at PublicURL + narrator.FeedPath(token), the
	// feed's self link.
	PublicURL string
	// RetryBase is the wait after the first failed ping; each later wait
	// doubles, up to 4,320 times RetryBase. Default: 10 seconds. Tests set
	// it shorter.
	RetryBase time.Duration
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

// FeedPingWorker pings the WebSub hub of a changed podcast feed, retrying
// with exponential backoff while the hub fails.
type FeedPingWorker struct {
	river.WorkerDefaults[FeedPingArgs]
	store  FeedPingStore
	pinger HubPinger
	cfg    FeedPingConfig
}

// NewFeedPingWorker returns the ping worker.
func NewFeedPingWorker(store FeedPingStore, pinger HubPinger, cfg FeedPingConfig) *FeedPingWorker {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &FeedPingWorker{store: store, pinger: pinger, cfg: cfg}
}

// Timeout implements river.Worker: a ping is bounded by the pinger; this
// leaves room for the database around it.
func (w *FeedPingWorker) Timeout(*river.Job[FeedPingArgs]) time.Duration { return time.Minute }

// NextRetry implements river.Worker: exponential backoff from RetryBase.
func (w *FeedPingWorker) NextRetry(job *river.Job[FeedPingArgs]) time.Time {
	return w.cfg.Now().Add(RetryDelay(w.cfg.RetryBase, job.Attempt))
}

// Work implements river.Worker. It pings the hub with the feed's URL as it
// is now, so a ping after a rotation of the token names the new URL; a
// feed turned off or gone needs no ping.
func (w *FeedPingWorker) Work(ctx context.Context, job *river.Job[FeedPingArgs]) error {
	if w.cfg.Hub == "" {
		return nil
	}
	id := job.Args.ProjectID
	f, err := w.store.FindFeed(ctx, id)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return nil
	case err != nil:
		return fmt.Errorf("ping hub of feed of project %d: %w", id, err)
	case !f.Enabled:
		return nil
	}
	if err := w.pinger.Ping(ctx, w.cfg.Hub, w.cfg.PublicURL+narrator.FeedPath(f.Token)); err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			// The server is shutting down: ping after the restart.
			return river.JobSnooze(time.Second)
		}
		w.cfg.Logger.Info("websub ping failed", "project_id", id, "attempt", job.Attempt, "err", err)
		return fmt.Errorf("ping hub of feed of project %d: %w", id, err)
	}
	w.cfg.Logger.Info("websub hub pinged", "project_id", id)
	return nil
}
