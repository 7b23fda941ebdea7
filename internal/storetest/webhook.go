package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// mustWebhook creates an endpoint of a project subscribed to events (all
// when none are given).
func mustWebhook(tb testing.TB, s Store, projectID int64, events ...string) *narrator.Webhook {
	tb.Helper()
	h, err := narrator.NewWebhook(projectID, "https://hooks.example.com/narrator", events, time.Time{})
	if err != nil {
		tb.Fatalf("NewWebhook: %v", err)
	}
	if err := s.CreateWebhook(tb.Context(), h); err != nil {
		tb.Fatalf("CreateWebhook: %v", err)
	}
	return h
}

// mustTestDelivery queues a test delivery to the endpoint hookID of
// projectID (Store.TestWebhook).
func mustTestDelivery(tb testing.TB, s Store, projectID, hookID int64) *narrator.WebhookDelivery {
	tb.Helper()
	d, err := s.TestWebhook(tb.Context(), projectID, hookID)
	if err != nil {
		tb.Fatalf("TestWebhook: %v", err)
	}
	return d
}

// mustDeliver records a successful attempt of the delivery id, now.
func mustDeliver(tb testing.TB, b *bundle, id int64) {
	tb.Helper()
	if _, err := b.store.RecordAttempt(tb.Context(), id, narrator.WebhookAttempt{At: b.clock.Now(), ResponseCode: 200}); err != nil {
		tb.Fatalf("RecordAttempt: %v", err)
	}
}

// mustDeliveries lists an endpoint's deliveries, oldest first.
func mustDeliveries(tb testing.TB, s Store, h *narrator.Webhook) []*narrator.WebhookDelivery {
	tb.Helper()
	ds, err := s.ListDeliveries(tb.Context(), h.ProjectID, h.ID, 100)
	if err != nil {
		tb.Fatalf("ListDeliveries: %v", err)
	}
	out := make([]*narrator.WebhookDelivery, len(ds))
	for i, d := range ds {
		out[len(ds)-1-i] = d
	}
	return out
}

// events returns the events of deliveries.
func events(ds []*narrator.WebhookDelivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Event
	}
	return out
}

var webhookTests = []test{
	{"CreateFindList", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID, narrator.EventAudioDeleted, narrator.EventAudioProcessed)
		if h.ID == 0 || !h.CreatedAt.Equal(b.clock.Now()) {
			t.Fatalf("created webhook = %+v; want an ID and CreatedAt %v", h, b.clock.Now())
		}
		wantEqual(t, "events", h.Events, []string{narrator.EventAudioProcessed, narrator.EventAudioDeleted})
		got, err := b.store.FindWebhook(ctx, p.ID, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "found webhook", got, h)
		all := mustWebhook(t, b.store, p.ID)
		list, err := b.store.ListWebhooks(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "listed webhooks", list, []*narrator.Webhook{h, all})
		other := mustProjectOf(t, b.store, p.AccountID)
		_, err = b.store.FindWebhook(ctx, other.ID, h.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		if list, err := b.store.ListWebhooks(ctx, other.ID); err != nil || list == nil || len(list) != 0 {
			t.Errorf("ListWebhooks of a project without any = %v, %v; want an empty slice", list, err)
		}
	}},
	{"CreateRefused", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		bad := &narrator.Webhook{ProjectID: p.ID, URL: "ftp://x.example", Events: narrator.WebhookEvents(), Secret: "whsec_AAAA"}
		wantCode(t, b.store.CreateWebhook(ctx, bad), narrator.EINVALID)
		h, err := narrator.NewWebhook(p.ID+1000, "https://x.example", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, b.store.CreateWebhook(ctx, h), narrator.ENOTFOUND)
		for range narrator.MaxWebhooksPerProject {
			mustWebhook(t, b.store, p.ID)
		}
		h.ProjectID = p.ID
		wantCode(t, b.store.CreateWebhook(ctx, h), narrator.ECONFLICT)
	}},
	{"RotateEnableDelete", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		secret, err := narrator.NewWebhookSecret()
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.store.RotateWebhookSecret(ctx, p.ID, h.ID, secret)
		if err != nil || got.Secret != secret {
			t.Fatalf("RotateWebhookSecret = %+v, %v; want the new secret", got, err)
		}
		_, err = b.store.RotateWebhookSecret(ctx, p.ID, h.ID, "not a secret")
		wantCode(t, err, narrator.EINVALID)
		_, err = b.store.RotateWebhookSecret(ctx, p.ID+1, h.ID, secret)
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.EnableWebhook(ctx, p.ID+1, h.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		wantCode(t, b.store.DeleteWebhook(ctx, p.ID+1, h.ID), narrator.ENOTFOUND)
		if err := b.store.DeleteWebhook(ctx, p.ID, h.ID); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.FindWebhook(ctx, p.ID, h.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		wantCode(t, b.store.DeleteWebhook(ctx, p.ID, h.ID), narrator.ENOTFOUND)
	}},
}

var webhookEventTests = []test{
	{"EachChangeRaisesItsEvent", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		a := mustAudio(t, b.store, p.ID, "ext")
		if ds := mustDeliveries(t, b.store, h); len(ds) != 0 {
			t.Fatalf("a create raised %v; want nothing", events(ds))
		}
		keys := mustFinish(t, b.store, a, "r1")
		if _, err := b.store.UpdateAudio(ctx, p.ID, "ext", narrator.AudioUpdate{Metadata: map[string]string{"x": "y"}, MetadataSet: true}); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Second)
		if _, err := b.store.UpdateAudio(ctx, p.ID, "ext", narrator.AudioUpdate{Body: ptr("New words.")}); err != nil {
			t.Fatal(err)
		}
		if err := b.store.FailAudio(ctx, a.ID, 2, "no"); err != nil {
			t.Fatal(err)
		}
		if err := b.store.FailAudio(ctx, a.ID, 2, "again"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.ResynthesizeAudio(ctx, p.ID, "ext"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.DeleteAudio(ctx, p.ID, "ext"); err != nil {
			t.Fatal(err)
		}
		ds := mustDeliveries(t, b.store, h)
		wantEqual(t, "events", events(ds), []string{narrator.EventAudioProcessed, narrator.EventAudioUpdated,
			narrator.EventAudioFailed, narrator.EventAudioDeleted})
		at := func(d time.Duration) string { return epoch.Add(d).Format(time.RFC3339Nano) }
		mediaKeys := fmt.Sprint([]string{keys[narrator.ContentTypeMP3], keys[narrator.ContentTypeM3U8]})
		wantBodies := []string{
			fmt.Sprintf("audio.processed project=%d at=%s audio=%d state=processed deleted=false keys=%s", p.ID, at(0), a.ID, mediaKeys),
			fmt.Sprintf("audio.updated project=%d at=%s audio=%d state=unprocessed deleted=false keys=%s", p.ID, at(time.Second), a.ID, mediaKeys),
			fmt.Sprintf("audio.failed project=%d at=%s audio=%d state=failed deleted=false keys=%s", p.ID, at(time.Second), a.ID, mediaKeys),
			fmt.Sprintf("audio.deleted project=%d at=%s audio=%d state=unprocessed deleted=true keys=%s", p.ID, at(time.Second), a.ID, mediaKeys),
		}
		var wantJobs []int64
		seen := map[string]bool{}
		for i, d := range ds {
			if string(d.Body) != wantBodies[i] {
				t.Errorf("delivery %d body:\n got  %s\n want %s", i, d.Body, wantBodies[i])
			}
			if d.AudioID != a.ID || d.State != narrator.DeliveryPending || d.Attempts != 0 || d.WebhookID != h.ID {
				t.Errorf("delivery %d = %+v; want pending, of audio %d and webhook %d, not attempted", i, d, a.ID, h.ID)
			}
			if seen[d.MessageID] || len(d.MessageID) < 10 {
				t.Errorf("delivery %d message ID %q is short or repeated", i, d.MessageID)
			}
			seen[d.MessageID] = true
			wantJobs = append(wantJobs, d.ID)
		}
		wantEqual(t, "webhook jobs", b.rec.Delivered(), wantJobs)
	}},
	{"CreateOverExternalIDIsAnUpdate", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		mustAudio(t, b.store, p.ID, "ext")
		again := newAudio(p.ID, "ext")
		again.Body = "Other words."
		if created, err := b.store.CreateAudio(t.Context(), again); err != nil || created {
			t.Fatalf("CreateAudio over an external ID = %v, %v", created, err)
		}
		wantEqual(t, "events", events(mustDeliveries(t, b.store, h)), []string{narrator.EventAudioUpdated})
	}},
	{"OnlySubscribedAndEnabled", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		processed := mustWebhook(t, b.store, p.ID, narrator.EventAudioProcessed)
		deleted := mustWebhook(t, b.store, p.ID, narrator.EventAudioDeleted)
		other := mustWebhook(t, b.store, mustProjectOf(t, b.store, p.AccountID).ID)
		a := mustAudio(t, b.store, p.ID, "")
		mustFinish(t, b.store, a, "r1")
		// Disable deleted's endpoint: a failing day of attempts.
		d, err := b.store.TestWebhook(ctx, p.ID, deleted.ID)
		if err != nil {
			t.Fatal(err)
		}
		t0 := b.clock.Now()
		for _, at := range []time.Time{t0, t0.Add(narrator.WebhookDisableAfter)} {
			if _, err := b.store.RecordAttempt(ctx, d.ID, narrator.WebhookAttempt{At: at, ResponseCode: 500, Error: "500"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(a.ID)); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "processed-only events", events(mustDeliveries(t, b.store, processed)), []string{narrator.EventAudioProcessed})
		wantEqual(t, "disabled endpoint's events", events(mustDeliveries(t, b.store, deleted)), []string{narrator.EventWebhookTest})
		wantEqual(t, "other project's events", events(mustDeliveries(t, b.store, other)), []string{})
	}},
	{"FailedEnqueueWritesNothing", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		a := mustAudio(t, b.store, p.ID, "")
		b.rec.FailWith(errors.New("queue down"))
		keys := map[string]string{narrator.ContentTypeMP3: "k/a.mp3", narrator.ContentTypeM3U8: "k/a.m3u8"}
		if err := b.store.FinishAudio(ctx, a.ID, a.Revision, rendering(keys, 10)); err == nil {
			t.Fatal("FinishAudio succeeded while its webhook job could not be enqueued")
		}
		if err := b.store.FailAudio(ctx, a.ID, a.Revision, "x"); err == nil {
			t.Fatal("FailAudio succeeded while its webhook job could not be enqueued")
		}
		b.rec.FailWith(nil)
		if got := mustFindAudio(t, b.store, p.ID, itoa(a.ID)); got.State != narrator.StateUnprocessed {
			t.Errorf("state after failed enqueues = %s; want unprocessed", got.State)
		}
		if ds := mustDeliveries(t, b.store, h); len(ds) != 0 {
			t.Errorf("deliveries after failed enqueues = %v; want none", events(ds))
		}
	}},
	{"NoEndpointsNoJobs", func(t *testing.T, b *bundle) {
		// Without endpoints, changes enqueue no webhook jobs.
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		mustFinish(t, b.store, a, "r1")
		if len(b.rec.Delivered()) != 0 {
			t.Errorf("webhook jobs without endpoints: %v", b.rec.Delivered())
		}
	}},
}

var webhookDeliveryTests = []test{
	{"AttemptsAndTheFailureClock", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		d, err := b.store.TestWebhook(ctx, p.ID, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Event != narrator.EventWebhookTest || d.AudioID != 0 || d.State != narrator.DeliveryPending {
			t.Fatalf("test delivery = %+v", d)
		}
		wantEqual(t, "jobs", b.rec.Delivered(), []int64{d.ID})
		got, hook, err := b.store.DeliveryForAttempt(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "delivery for attempt", got, d)
		if hook.Secret != h.Secret {
			t.Errorf("DeliveryForAttempt's webhook secret = %q, want the endpoint's", hook.Secret)
		}

		t0 := b.clock.Now()
		attempt := func(at time.Time, code int, final bool) narrator.AttemptPlan {
			t.Helper()
			a := narrator.WebhookAttempt{At: at, ResponseCode: code, Final: final}
			if code/100 != 2 {
				a.Error = fmt.Sprintf("answered %d", code)
			}
			plan, err := b.store.RecordAttempt(ctx, d.ID, a)
			if err != nil {
				t.Fatal(err)
			}
			return plan
		}
		if plan := attempt(t0, 500, false); plan.State != narrator.DeliveryPending || plan.Disable {
			t.Fatalf("first failure: %+v", plan)
		}
		attempt(t0.Add(time.Hour), 502, false)
		got, hook, _ = b.store.DeliveryForAttempt(ctx, d.ID)
		if got.Attempts != 2 || got.ResponseCode != 502 || got.LastError != "answered 502" || !got.LastAttemptAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("delivery after two failures = %+v", got)
		}
		if !hook.FailingSince.Equal(t0) || hook.Disabled() {
			t.Errorf("endpoint after two failures = %+v; want failing since %v, enabled", hook, t0)
		}
		// A success resets the clock: a failure a day after the first is
		// then no reason to disable.
		if plan := attempt(t0.Add(2*time.Hour), 204, false); plan.State != narrator.DeliveryDelivered {
			t.Fatalf("success: %+v", plan)
		}
		if plan := attempt(t0.Add(25*time.Hour), 500, true); plan.Disable || plan.State != narrator.DeliveryFailed {
			t.Fatalf("final failure after a success: %+v; want failed, not disabling", plan)
		}
		// The final failure stopped the clock: a failure a day later starts
		// it again rather than finding it a day old.
		if plan := attempt(t0.Add(49*time.Hour), 500, false); plan.Disable || plan.State != narrator.DeliveryPending || !plan.FailingSince.Equal(t0.Add(49*time.Hour)) {
			t.Fatalf("failure a day after a final one: %+v; want pending, the clock started again", plan)
		}
		if plan := attempt(t0.Add(73*time.Hour), 500, false); !plan.Disable || plan.State != narrator.DeliveryFailed {
			t.Fatalf("failure a day after the clock started: %+v; want disabling", plan)
		}
		hook, err = b.store.FindWebhook(ctx, p.ID, h.ID)
		if err != nil || !hook.DisabledAt.Equal(t0.Add(73*time.Hour)) {
			t.Fatalf("endpoint = %+v, %v; want disabled at %v", hook, err, t0.Add(73*time.Hour))
		}
		hook, err = b.store.EnableWebhook(ctx, p.ID, h.ID)
		if err != nil || hook.Disabled() || !hook.FailingSince.IsZero() {
			t.Fatalf("EnableWebhook = %+v, %v; want enabled with its clock stopped", hook, err)
		}
	}},
	{"Resend", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		d := mustTestDelivery(t, b.store, p.ID, h.ID)
		mustDeliver(t, b, d.ID)
		again, err := b.store.ResendDelivery(ctx, p.ID, h.ID, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if again.MessageID != d.MessageID || again.State != narrator.DeliveryPending || string(again.Body) != string(d.Body) {
			t.Errorf("resent delivery = %+v; want pending with message %s and the same body", again, d.MessageID)
		}
		wantEqual(t, "jobs", b.rec.Delivered(), []int64{d.ID, d.ID})
		other := mustWebhook(t, b.store, p.ID)
		_, err = b.store.ResendDelivery(ctx, p.ID, other.ID, d.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.ResendDelivery(ctx, p.ID+1, h.ID, d.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.ListDeliveries(ctx, p.ID+1, h.ID, 10)
		wantCode(t, err, narrator.ENOTFOUND)
		// Removing the endpoint removes its deliveries.
		if err := b.store.DeleteWebhook(ctx, p.ID, h.ID); err != nil {
			t.Fatal(err)
		}
		_, _, err = b.store.DeliveryForAttempt(ctx, d.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.RecordAttempt(ctx, d.ID, narrator.WebhookAttempt{At: b.clock.Now(), ResponseCode: 200})
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"OldDeliveriesPruned", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		mustDeliver(t, b, mustTestDelivery(t, b.store, p.ID, h.ID).ID)
		pending := mustTestDelivery(t, b.store, p.ID, h.ID)
		for range narrator.MaxDeliveriesListed {
			mustDeliver(t, b, mustTestDelivery(t, b.store, p.ID, h.ID).ID)
		}
		ds, err := b.store.ListDeliveries(ctx, p.ID, h.ID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != narrator.MaxDeliveriesListed+1 || ds[len(ds)-1].ID != pending.ID {
			t.Errorf("after %d more deliveries, %d are kept, oldest %d; want %d, oldest the pending %d",
				narrator.MaxDeliveriesListed, len(ds), ds[len(ds)-1].ID, narrator.MaxDeliveriesListed+1, pending.ID)
		}
	}},
}
