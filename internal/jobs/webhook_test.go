package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/webhook"
)

// eventBody renders events for the tests' stores.
func eventBody(e *narrator.Event) ([]byte, error) {
	v := map[string]any{"action_type": e.Type, "project_id": e.ProjectID}
	if e.Audio != nil {
		v["id"], v["state"] = e.Audio.ID, e.Audio.State
	}
	return json.Marshal(v)
}

// workers are the workers of a test's queue, webhook deliveries sent to
// loopback receivers with a short backoff.
func (b *testBundle) workers() jobs.Workers {
	return jobs.Workers{
		Synthesize:  b.worker,
		DeleteMedia: jobs.NewDeleteMediaWorker(b.media),
		Preview:     jobs.NewPreviewWorker(nil, b.media),
		Webhook: jobs.NewWebhookWorker(b.store, webhook.New(webhook.Options{AllowPrivate: true}),
			jobs.WebhookConfig{RetryBase: 20 * time.Millisecond}),
		Resynthesis: jobs.NewResynthesisWorker(b.store, nil),
	}
}

// hookReceiver is a loopback endpoint that answers 500 to its first
// failures requests, then 204, and records each request's webhook-id and
// body.
type hookReceiver struct {
	mu       sync.Mutex
	failures int
	ids      []string
	bodies   []string
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, req.Header.Get("webhook-id"))
	r.bodies = append(r.bodies, string(body))
	if len(r.ids) <= r.failures {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *hookReceiver) seen() (ids, bodies []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...), append([]string(nil), r.bodies...)
}

func (b *testBundle) mustHook(t *testing.T, url string) *narrator.Webhook {
	t.Helper()
	h, err := narrator.NewWebhook(b.audio.ProjectID, url, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.CreateWebhook(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	return h
}

// hookTo serves rec on a test server and adds a webhook of the audio's project whose URL is
// path on that server.
func (b *testBundle) hookTo(t *testing.T, rec http.Handler, path string) *narrator.Webhook {
	t.Helper()
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return b.mustHook(t, srv.URL+path)
}

func TestWebhookRetriedWithTheSameID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		rec := &hookReceiver{failures: 2}
		h := b.hookTo(t, rec, "/hook")
		if err := b.queue.Start(t.Context(), b.workers()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.queue.Stop(context.Background()) })

		// The queue synthesises the audio; its publication raises
		// audio.processed, which fails twice and then gets through.
		var d *narrator.WebhookDelivery
		deadline := time.Now().Add(20 * time.Second)
		for {
			ds, err := b.store.ListDeliveries(t.Context(), h.ProjectID, h.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) == 1 && ds[0].State == narrator.DeliveryDelivered {
				d = ds[0]
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not delivered in time: %+v", ds)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if d.Event != narrator.EventAudioProcessed || d.Attempts != 3 || d.ResponseCode != http.StatusNoContent || d.LastError != "" {
			t.Errorf("delivery = %+v; want audio.processed delivered at the third attempt", d)
		}
		ids, bodies := rec.seen()
		if len(ids) != 3 {
			t.Fatalf("receiver got %d requests, want 3", len(ids))
		}
		for i := range ids {
			if ids[i] != d.MessageID || bodies[i] != string(d.Body) {
				t.Errorf("request %d: webhook-id %q, body %s; want %q and %s", i, ids[i], bodies[i], d.MessageID, d.Body)
			}
		}
		hook, err := b.store.FindWebhook(t.Context(), h.ProjectID, h.ID)
		if err != nil || !hook.FailingSince.IsZero() {
			t.Errorf("endpoint after a success = %+v, %v; want its failure clock stopped", hook, err)
		}
	})
}

func TestWebhookWork(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		rec := &hookReceiver{failures: 1}
		h := b.hookTo(t, rec, "")
		if _, err := b.store.DeleteAudio(ctx, b.audio.ProjectID, "a"); err != nil {
			t.Fatal(err)
		}
		ds, err := b.store.ListDeliveries(ctx, h.ProjectID, h.ID, 10)
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries = %v, %v", ds, err)
		}
		w := jobs.NewWebhookWorker(b.store, webhook.New(webhook.Options{AllowPrivate: true}), jobs.WebhookConfig{})
		work := func(attempt int) error {
			return w.Work(ctx, &river.Job[jobs.WebhookArgs]{
				JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: jobs.WebhookMaxAttempts},
				Args:   jobs.WebhookArgs{DeliveryID: ds[0].ID},
			})
		}
		if err := work(1); err == nil {
			t.Fatal("no error from an attempt answered 500")
		}
		if err := work(2); err != nil {
			t.Fatalf("second attempt: %v", err)
		}
		// A job for a delivery already delivered sends nothing.
		if err := work(3); err != nil {
			t.Fatal(err)
		}
		if ids, _ := rec.seen(); len(ids) != 2 {
			t.Errorf("receiver got %d requests, want 2", len(ids))
		}
		// Refused addresses fail like any other attempt.
		refusing := jobs.NewWebhookWorker(b.store, webhook.New(webhook.Options{}), jobs.WebhookConfig{})
		d, err := b.store.TestWebhook(ctx, h.ProjectID, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		err = refusing.Work(ctx, &river.Job[jobs.WebhookArgs]{
			JobRow: &rivertype.JobRow{Attempt: jobs.WebhookMaxAttempts, MaxAttempts: jobs.WebhookMaxAttempts},
			Args:   jobs.WebhookArgs{DeliveryID: d.ID},
		})
		if err == nil {
			t.Fatal("no error from a refused attempt")
		}
		ds, _ = b.store.ListDeliveries(ctx, h.ProjectID, h.ID, 10)
		if ds[0].State != narrator.DeliveryFailed || ds[0].ResponseCode != 0 || ds[0].LastError == "" {
			t.Errorf("refused delivery after its last attempt = %+v; want failed with the reason", ds[0])
		}
		if ids, _ := rec.seen(); len(ids) != 2 {
			t.Errorf("receiver got %d requests, want 2", len(ids))
		}
	})
}

func TestWebhookWorkStopsForDisabledEndpoints(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		rec := &hookReceiver{}
		h := b.hookTo(t, rec, "")
		if _, err := b.store.DeleteAudio(ctx, b.audio.ProjectID, "a"); err != nil {
			t.Fatal(err)
		}
		ds, _ := b.store.ListDeliveries(ctx, h.ProjectID, h.ID, 10)
		// A day of failures disables the endpoint.
		t0 := time.Now()
		for _, at := range []time.Time{t0, t0.Add(narrator.WebhookDisableAfter)} {
			if _, err := b.store.RecordAttempt(ctx, ds[0].ID, narrator.WebhookAttempt{At: at, Error: "down"}); err != nil {
				t.Fatal(err)
			}
		}
		w := jobs.NewWebhookWorker(b.store, webhook.New(webhook.Options{AllowPrivate: true}), jobs.WebhookConfig{})
		err := w.Work(ctx, &river.Job[jobs.WebhookArgs]{
			JobRow: &rivertype.JobRow{Attempt: 3, MaxAttempts: jobs.WebhookMaxAttempts},
			Args:   jobs.WebhookArgs{DeliveryID: ds[0].ID},
		})
		var cancel *rivertype.JobCancelError
		if !errors.As(err, &cancel) {
			t.Fatalf("Work for a disabled endpoint = %v; want a cancellation", err)
		}
		if ids, _ := rec.seen(); len(ids) != 0 {
			t.Errorf("a disabled endpoint got %d requests", len(ids))
		}
	})
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	base := 5 * time.Second
	var total time.Duration
	for attempt := 1; attempt < jobs.WebhookMaxAttempts; attempt++ {
		total += jobs.RetryDelay(base, attempt)
	}
	if total <= narrator.WebhookDisableAfter || total > 30*time.Hour {
		t.Errorf("the waits between %d attempts add up to %v; want a little over narrator.WebhookDisableAfter", jobs.WebhookMaxAttempts, total)
	}
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{{1, 5 * time.Second}, {2, 10 * time.Second}, {3, 20 * time.Second}, {13, 20480 * time.Second}, {14, 6 * time.Hour}, {15, 6 * time.Hour}} {
		if got := jobs.RetryDelay(base, tc.attempt); got != tc.want {
			t.Errorf("RetryDelay(5s, %d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
}

// TestWebhookEndpointCannotHoldEveryWorker checks that an endpoint that
// never answers holds at most jobs.WebhookPerEndpoint attempts on a node:
// its next job waits, and another endpoint's delivery goes on.
func TestWebhookEndpointCannotHoldEveryWorker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		arrived := make(chan struct{}, 10)
		unblock := make(chan struct{})
		stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-unblock
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(stuck.Close)
		t.Cleanup(func() { close(unblock) })
		rec := &hookReceiver{}
		healthy := httptest.NewServer(rec)
		t.Cleanup(healthy.Close)
		slow, fine := b.mustHook(t, stuck.URL), b.mustHook(t, healthy.URL)
		w := jobs.NewWebhookWorker(b.store, webhook.New(webhook.Options{AllowPrivate: true}), jobs.WebhookConfig{})
		work := func(h *narrator.Webhook) error {
			d, err := b.store.TestWebhook(ctx, h.ProjectID, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			return w.Work(ctx, &river.Job[jobs.WebhookArgs]{
				JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: jobs.WebhookMaxAttempts},
				Args:   jobs.WebhookArgs{DeliveryID: d.ID},
			})
		}
		done := make(chan error, jobs.WebhookPerEndpoint)
		for range jobs.WebhookPerEndpoint {
			go func() { done <- work(slow) }()
			<-arrived
		}
		var snooze *rivertype.JobSnoozeError
		if err := work(slow); !errors.As(err, &snooze) {
			t.Errorf("a third attempt at the busy endpoint = %v; want it snoozed", err)
		}
		if err := work(fine); err != nil {
			t.Errorf("another endpoint's delivery while one is stuck: %v", err)
		}
		if ids, _ := rec.seen(); len(ids) != 1 {
			t.Errorf("the healthy endpoint got %d requests, want 1", len(ids))
		}
		if len(arrived) != 0 {
			t.Errorf("the stuck endpoint got more than %d requests at once", jobs.WebhookPerEndpoint)
		}
		unblock <- struct{}{}
		unblock <- struct{}{}
		for range jobs.WebhookPerEndpoint {
			if err := <-done; err != nil {
				t.Errorf("attempt at the stuck endpoint once it answered: %v", err)
			}
		}
	})
}
