package narrator_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestAudioEvent(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cur := narrator.Audio{ID: 1, Title: "T", Body: "B", State: narrator.StateProcessed, Revision: 1,
		Media: []narrator.Media{{ID: 1, ContentType: narrator.ContentTypeMP3, Key: "k/a.mp3"}}}
	update := func(u narrator.AudioUpdate) narrator.Audio {
		plan, err := narrator.PlanUpdate(&cur, u, now)
		if err != nil {
			t.Fatal(err)
		}
		return plan.Next
	}
	unprocessed := cur
	unprocessed.State = narrator.StateUnprocessed
	deleted := cur
	deleted.Deleted = true
	resynthesized := cur
	resynthesized.Resynthesize(now)
	newKeys := narrator.FinishPlan{Media: []narrator.Media{{ID: 1, ContentType: narrator.ContentTypeMP3, Key: "n/a.mp3"}}}
	for _, tc := range []struct {
		name          string
		before, after narrator.Audio
		want          string
	}{
		{"text changed", cur, update(narrator.AudioUpdate{Body: ptr("Other")}), narrator.EventAudioUpdated},
		{"metadata changed", cur, update(narrator.AudioUpdate{Metadata: map[string]string{"a": "b"}, MetadataSet: true}), ""},
		{"resynthesized", cur, resynthesized, ""},
		{"published", unprocessed, newKeys.Apply(&unprocessed, 10, now), narrator.EventAudioProcessed},
		{"failed", unprocessed, unprocessed.Failed("no", now), narrator.EventAudioFailed},
		{"deleted", cur, deleted, narrator.EventAudioDeleted},
		{"deleted again", deleted, deleted, ""},
		{"unchanged", cur, cur, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := narrator.AudioEvent(&tc.before, &tc.after); got != tc.want {
				t.Errorf("AudioEvent = %q, want %q", got, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestNewWebhook(t *testing.T) {
	t.Parallel()
	h, err := narrator.NewWebhook(3, " https://example.com/hook ", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(narrator.WebhookEvents(), h.Events); diff != "" {
		t.Errorf("default events (-want +got):\n%s", diff)
	}
	if h.URL != "https://example.com/hook" {
		t.Errorf("URL = %q; want it trimmed", h.URL)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(h.Secret, "whsec_"))
	if !strings.HasPrefix(h.Secret, "whsec_") || err != nil || len(key) < 24 || len(key) > 64 {
		t.Errorf("secret %q is not whsec_ and base64 of 24 to 64 bytes", h.Secret)
	}
	h2, _ := narrator.NewWebhook(3, "https://example.com/hook", []string{"audio.deleted", "audio.processed", "audio.deleted"}, time.Time{})
	if diff := cmp.Diff([]string{"audio.processed", "audio.deleted"}, h2.Events); diff != "" || h2.Secret == h.Secret {
		t.Errorf("events (-want +got):\n%s; secrets must differ", diff)
	}
	for _, tc := range []struct {
		name, url string
		events    []string
	}{
		{"empty", "", nil},
		{"relative", "/hook", nil},
		{"ftp", "ftp://example.com/x", nil},
		{"javascript", "javascript:alert(1)", nil},
		{"user info", "https://u:p@example.com/", nil},
		{"too long", "https://example.com/" + strings.Repeat("a", narrator.MaxWebhookURLChars), nil},
		{"unknown event", "https://example.com/", []string{"audio.created"}},
		{"port too big", "http://example.com:99999/", nil},
		{"port zero", "http://example.com:0/", nil},
		{"quote in path", "https://example.com/a\"b", nil},
		{"angle brackets", "https://example.com/<x>", nil},
		{"space", "https://example.com/a b", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := narrator.NewWebhook(3, tc.url, tc.events, time.Time{}); narrator.ErrorCode(err) != narrator.EINVALID {
				t.Errorf("NewWebhook(%q, %v) error = %v; want EINVALID", tc.url, tc.events, err)
			}
		})
	}
}

func TestPlanAttempt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fail := func(at time.Time, final bool) narrator.WebhookAttempt {
		return narrator.WebhookAttempt{At: at, ResponseCode: 500, Error: "500", Final: final}
	}
	for _, tc := range []struct {
		name string
		hook narrator.Webhook
		a    narrator.WebhookAttempt
		want narrator.AttemptPlan
	}{
		{"success resets", narrator.Webhook{FailingSince: t0}, narrator.WebhookAttempt{At: t0.Add(time.Hour), ResponseCode: 200},
			narrator.AttemptPlan{State: narrator.DeliveryDelivered}},
		{"first failure starts the clock", narrator.Webhook{}, fail(t0, false),
			narrator.AttemptPlan{State: narrator.DeliveryPending, FailingSince: t0}},
		{"final failure stops the clock", narrator.Webhook{}, fail(t0, true),
			narrator.AttemptPlan{State: narrator.DeliveryFailed}},
		{"final failure within a day stops the running clock", narrator.Webhook{FailingSince: t0}, fail(t0.Add(2*time.Hour), true),
			narrator.AttemptPlan{State: narrator.DeliveryFailed}},
		{"final failure after a day disables", narrator.Webhook{FailingSince: t0}, fail(t0.Add(29*time.Hour), true),
			narrator.AttemptPlan{State: narrator.DeliveryFailed, FailingSince: t0, Disable: true}},
		{"just under a day", narrator.Webhook{FailingSince: t0}, fail(t0.Add(narrator.WebhookDisableAfter-time.Second), false),
			narrator.AttemptPlan{State: narrator.DeliveryPending, FailingSince: t0}},
		{"a day of failures disables", narrator.Webhook{FailingSince: t0}, fail(t0.Add(narrator.WebhookDisableAfter), false),
			narrator.AttemptPlan{State: narrator.DeliveryFailed, FailingSince: t0, Disable: true}},
		{"already disabled", narrator.Webhook{FailingSince: t0, DisabledAt: t0}, fail(t0.Add(48*time.Hour), false),
			narrator.AttemptPlan{State: narrator.DeliveryFailed, FailingSince: t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, narrator.PlanAttempt(&tc.hook, tc.a)); diff != "" {
				t.Errorf("PlanAttempt (-want +got):\n%s", diff)
			}
		})
	}
}
