package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

// pendingTests hold an endpoint's pending deliveries to
// narrator.MaxPendingDeliveries.
var pendingTests = []test{
	{"TestRefusedWhenFull", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p, h, full := mustFullEndpoint(t, b)
		last := full[len(full)-1]
		_, err := b.store.TestWebhook(ctx, p.ID, h.ID)
		wantCode(t, err, narrator.ERATELIMITED)
		// A delivery that failed does not come back while the endpoint is
		// full.
		if _, err := b.store.RecordAttempt(ctx, last.ID, narrator.WebhookAttempt{At: b.clock.Now(), Error: "refused", Final: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.TestWebhook(ctx, p.ID, h.ID); err != nil {
			t.Fatalf("a test once one delivery failed: %v", err)
		}
		_, err = b.store.ResendDelivery(ctx, p.ID, h.ID, last.ID)
		wantCode(t, err, narrator.ERATELIMITED)
		if n := len(b.rec.Delivered()); n != narrator.MaxPendingDeliveries+1 {
			t.Errorf("%d webhook jobs, want %d", n, narrator.MaxPendingDeliveries+1)
		}
		if ids := b.rec.Withdrawn(); len(ids) != 0 {
			t.Errorf("jobs of deliveries %v removed, want none: a refusal gives up no delivery", ids)
		}
	}},
	{"AudioEventsCollapseTheOldest", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p, h, full := mustFullEndpoint(t, b)
		first := full[0]
		mustAudio(t, b.store, p.ID, "ext")
		again := newAudio(p.ID, "ext")
		again.Body = "Other words."
		if _, err := b.store.CreateAudio(ctx, again); err != nil {
			t.Fatal(err)
		}
		ds, err := b.store.ListDeliveries(ctx, p.ID, h.ID, 1000) // newest first
		if err != nil {
			t.Fatal(err)
		}
		pending := 0
		for _, d := range ds {
			if d.State == narrator.DeliveryPending {
				pending++
			}
		}
		if pending != narrator.MaxPendingDeliveries {
			t.Errorf("%d pending, want %d", pending, narrator.MaxPendingDeliveries)
		}
		if last := ds[0]; last.Event != narrator.EventAudioUpdated || last.State != narrator.DeliveryPending {
			t.Errorf("newest delivery %s %s, want the update, pending", last.Event, last.State)
		}
		// The oldest, superseded, failed and so was pruned from the list,
		// and its job was removed with it.
		if diff := cmp.Diff([]int64{first.ID}, b.rec.Withdrawn()); diff != "" {
			t.Errorf("deliveries whose jobs were removed (-want +got):\n%s", diff)
		}
		if d, _, err := b.store.DeliveryForAttempt(ctx, first.ID); err == nil {
			t.Errorf("oldest delivery %s %q, want it superseded and pruned", d.State, d.LastError)
		} else {
			wantCode(t, err, narrator.ENOTFOUND)
		}
	}},
	{"ExpiredPastTheHorizon", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p, h, full := mustFullEndpoint(t, b)
		var made []int64
		for _, d := range full {
			made = append(made, d.ID)
		}
		b.clock.Advance(narrator.DeliveryHorizon + time.Second)
		if _, err := b.store.TestWebhook(ctx, p.ID, h.ID); err != nil {
			t.Fatalf("a test past the horizon: %v", err)
		}
		ds := mustDeliveries(t, b.store, h)
		for _, d := range ds[:len(ds)-1] {
			if d.State != narrator.DeliveryFailed || d.LastError != narrator.DeliveryExpired {
				t.Fatalf("delivery %d %s %q, want failed, expired", d.ID, d.State, d.LastError)
			}
		}
		// Their jobs went with them.
		withdrawn := b.rec.Withdrawn()
		slices.Sort(withdrawn)
		if diff := cmp.Diff(made, withdrawn); diff != "" {
			t.Errorf("deliveries whose jobs were removed (-expired +got):\n%s", diff)
		}
	}},
}

// mustFullEndpoint returns a new project, an endpoint of it, and the test
// deliveries, oldest first, that fill the endpoint to
// narrator.MaxPendingDeliveries.
func mustFullEndpoint(t *testing.T, b *bundle) (*narrator.Project, *narrator.Webhook, []*narrator.WebhookDelivery) {
	t.Helper()
	p := mustProject(t, b.store)
	h := mustWebhook(t, b.store, p.ID)
	full := make([]*narrator.WebhookDelivery, narrator.MaxPendingDeliveries)
	for i := range full {
		full[i] = mustTestDelivery(t, b.store, p.ID, h.ID)
	}
	return p, h, full
}
