package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/narrator/narrator"
)

// WebhookStore is what the delivery worker needs from storage.
type WebhookStore interface {
	// DeliveryForAttempt returns a delivery and its endpoint, secret
	// included; ENOTFOUND once the endpoint is removed.
	DeliveryForAttempt(ctx context.Context, deliveryID int64) (*narrator.WebhookDelivery, *narrator.Webhook, error)
	// RecordAttempt records an attempt as narrator.PlanAttempt decides.
	RecordAttempt(ctx context.Context, deliveryID int64, a narrator.WebhookAttempt) (narrator.AttemptPlan, error)
}

// WebhookSender makes one attempt at a delivery.
type WebhookSender interface {
	// Send posts the delivery to its endpoint and reports the outcome; it
	// bounds the attempt's time itself.
	Send(ctx context.Context, h *narrator.Webhook, d *narrator.WebhookDelivery) narrator.WebhookAttempt
}

// WebhookConfig configures the delivery worker.
type WebhookConfig struct {
	Logger *slog.Logger
	// RetryBase is the wait after the first failed attempt; each later
	// wait doubles, up to 4,320 times RetryBase. Default: 5 seconds, which
	// spreads WebhookMaxAttempts over about 29 hours (the longest wait is 6
	// hours). Tests set it shorter; nothing else should.
	RetryBase time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Metrics, if not nil, is told the outcome of every attempt.
	Metrics WebhookRecorder
}

// WebhookRecorder is told the outcome of every attempt at a delivery:
// "delivered", "failed", or "skipped" when the endpoint is disabled.
type WebhookRecorder interface {
	WebhookAttempt(outcome string)
}

// WebhookWorker makes the attempts at a webhook delivery. Each attempt is
// recorded on the delivery and on its endpoint's failure clock; a failed
// attempt is retried with exponential backoff until the last one, or until
// the endpoint is disabled for a day of failures.
type WebhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	store  WebhookStore
	sender WebhookSender
	cfg    WebhookConfig

	mu   sync.Mutex
	busy map[int64]int // attempts under way, by endpoint
}

// WebhookPerEndpoint is how many attempts at one endpoint a node makes at
// once. An endpoint that accepts connections and never answers then holds
// this many of the queue's workers for its 10 s timeouts, not all of them,
// so other projects' deliveries go on; its further jobs wait their turn.
const WebhookPerEndpoint = 2

// webhookWait is how long a job whose endpoint is busy waits to try again.
const webhookWait = 2 * time.Second

// NewWebhookWorker returns the delivery worker.
func NewWebhookWorker(store WebhookStore, sender WebhookSender, cfg WebhookConfig) *WebhookWorker {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &WebhookWorker{store: store, sender: sender, cfg: cfg, busy: map[int64]int{}}
}

// Timeout implements river.Worker: an attempt is bounded by the sender
// (10 s by default); this leaves room for the database around it.
func (w *WebhookWorker) Timeout(*river.Job[WebhookArgs]) time.Duration { return time.Minute }

// NextRetry implements river.Worker: exponential backoff from RetryBase.
func (w *WebhookWorker) NextRetry(job *river.Job[WebhookArgs]) time.Time {
	return w.cfg.Now().Add(RetryDelay(w.cfg.RetryBase, job.Attempt))
}

// RetryDelay is the wait after failed attempt number attempt (from 1):
// base doubled at each attempt, capped at 4,320 times base.
func RetryDelay(base time.Duration, attempt int) time.Duration {
	limit := 4320 * base
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Work implements river.Worker. Delivery is at least once: a job that runs
// twice may post twice, with the same webhook-id, which receivers use to
// drop the duplicate. A job for a delivery already delivered, or given up
// unattempted (superseded, expired), does nothing.
func (w *WebhookWorker) Work(ctx context.Context, job *river.Job[WebhookArgs]) error {
	id := job.Args.DeliveryID
	d, h, err := w.store.DeliveryForAttempt(ctx, id)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return nil // the endpoint was removed
	case err != nil:
		return fmt.Errorf("load delivery %d: %w", id, err)
	case d.State == narrator.DeliveryDelivered, d.GivenUp():
		return nil
	}
	log := w.cfg.Logger.With("delivery_id", d.ID, "webhook_id", h.ID, "project_id", h.ProjectID, "event", d.Event, "attempt", job.Attempt)
	var a narrator.WebhookAttempt
	sent := h.Wants(d.Event)
	if sent {
		if !w.take(h.ID) {
			return river.JobSnooze(webhookWait)
		}
		a = w.sender.Send(ctx, h, d)
		w.release(h.ID)
		if !a.OK() && errors.Is(ctx.Err(), context.Canceled) {
			// The server is shutting down: try again after the restart,
			// without counting this attempt.
			return river.JobSnooze(time.Second)
		}
	} else {
		a = narrator.WebhookAttempt{At: w.cfg.Now(), Error: "not sent: the endpoint is disabled"}
	}
	a.Final = job.Attempt >= job.MaxAttempts
	w.record(sent, a)
	plan, err := w.store.RecordAttempt(context.WithoutCancel(ctx), d.ID, a)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return nil
	case err != nil:
		return fmt.Errorf("record attempt at delivery %d: %w", d.ID, err)
	case a.OK():
		log.Info("webhook delivered", "status", a.ResponseCode)
		return nil
	}
	if plan.Disable {
		log.Warn("webhook endpoint disabled after failing for a day")
	}
	failure := fmt.Errorf("deliver %d to webhook %d: %s", d.ID, h.ID, a.Error)
	if plan.State == narrator.DeliveryFailed && !a.Final {
		return river.JobCancel(failure)
	}
	log.Info("webhook attempt failed", "status", a.ResponseCode, "err", a.Error)
	return failure
}

// take claims one of the endpoint's WebhookPerEndpoint attempt slots on
// this node; false when they are all taken.
func (w *WebhookWorker) take(endpoint int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy[endpoint] >= WebhookPerEndpoint {
		return false
	}
	w.busy[endpoint]++
	return true
}

// release gives back a slot that take claimed.
func (w *WebhookWorker) release(endpoint int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy[endpoint]--; w.busy[endpoint] == 0 {
		delete(w.busy, endpoint)
	}
}

// record tells the recorder how an attempt went.
func (w *WebhookWorker) record(sent bool, a narrator.WebhookAttempt) {
	switch {
	case w.cfg.Metrics == nil:
	case !sent:
		w.cfg.Metrics.WebhookAttempt("skipped")
	case a.OK():
		w.cfg.Metrics.WebhookAttempt("delivered")
	default:
		w.cfg.Metrics.WebhookAttempt("failed")
	}
}
