package narrator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestChangeEffects(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cur := narrator.Audio{ID: 1, ProjectID: 7, Title: "T", Body: "B", State: narrator.StateProcessed, Revision: 1,
		Media: []narrator.Media{{ID: 1, ContentType: narrator.ContentTypeMP3, Key: "k/a.mp3", Bytes: 100}}}
	unprocessed := cur
	unprocessed.State, unprocessed.Media = narrator.StateUnprocessed, []narrator.Media{{ID: 1, ContentType: narrator.ContentTypeMP3}}
	update, err := narrator.PlanUpdate(&cur, narrator.AudioUpdate{Body: ptr("Other")}, now)
	if err != nil {
		t.Fatal(err)
	}
	resynthesized := cur
	resynthesized.Resynthesize(now)
	finish, err := narrator.PlanFinish(&resynthesized, 2, narrator.Rendering{
		Keys: map[string]string{narrator.ContentTypeMP3: "n/a.mp3"}, Bytes: map[string]int64{narrator.ContentTypeMP3: 150}})
	if err != nil {
		t.Fatal(err)
	}
	failed := unprocessed.Failed("no", now)
	for _, tc := range []struct {
		name  string
		got   narrator.Effects
		want  narrator.Effects
		steps []narrator.EffectStep
	}{
		{"create", narrator.PlanCreate(&unprocessed, now).Effects,
			narrator.Effects{ProjectID: 7, AudioCount: 1, Queued: 1, Synthesize: true},
			[]narrator.EffectStep{narrator.StepUsage, narrator.StepAudioCount, narrator.StepJobs}},
		{"update", update.Effects,
			narrator.Effects{ProjectID: 7, Queued: 1, Synthesize: true, Supersede: true, Event: narrator.EventAudioUpdated, PingFeed: true},
			[]narrator.EffectStep{narrator.StepUsage, narrator.StepJobs, narrator.StepDeliveries, narrator.StepPing}},
		{"finish", finish.Effects,
			narrator.Effects{ProjectID: 7, Queued: -1, MediaBytes: 50, DeleteMedia: []string{"k/a.mp3"}, Event: narrator.EventAudioProcessed, PingFeed: true},
			[]narrator.EffectStep{narrator.StepUsage, narrator.StepJobs, narrator.StepDeliveries, narrator.StepPing}},
		{"failure", narrator.ChangeEffects(&unprocessed, &failed),
			narrator.Effects{ProjectID: 7, Queued: -1, Event: narrator.EventAudioFailed},
			[]narrator.EffectStep{narrator.StepUsage, narrator.StepDeliveries}},
		{"delete", narrator.PlanDelete(&cur).Effects,
			narrator.Effects{ProjectID: 7, AudioCount: -1, MediaBytes: -100, DeleteMedia: []string{"k/a.mp3"}, Event: narrator.EventAudioDeleted, PingFeed: true},
			[]narrator.EffectStep{narrator.StepUsage, narrator.StepAudioCount, narrator.StepJobs, narrator.StepDeliveries, narrator.StepPing}},
		{"resynthesize", narrator.ChangeEffects(&cur, &resynthesized),
			narrator.Effects{ProjectID: 7, Queued: 1, Synthesize: true, Supersede: true, PingFeed: true},
			[]narrator.EffectStep{narrator.StepUsage, narrator.StepJobs, narrator.StepPing}},
		{"unchanged", narrator.ChangeEffects(&cur, &cur), narrator.Effects{ProjectID: 7}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.steps, tc.got.Steps()); diff != "" {
				t.Errorf("Steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEffectsJobs(t *testing.T) {
	t.Parallel()
	a := &narrator.Audio{ID: 4, ProjectID: 7, Revision: 3}
	e := narrator.Effects{Synthesize: true, Round: 9, DeleteMedia: []string{"old"}}
	want := []narrator.Job{narrator.SynthesizeJob{AudioID: 4, Revision: 3, Round: 9}, narrator.DeleteMediaJob{Keys: []string{"old"}}}
	if diff := cmp.Diff(want, e.Jobs(a)); diff != "" {
		t.Errorf("Jobs (-want +got):\n%s", diff)
	}
	if ev := e.AudioEventOf(a, time.Time{}); ev != nil {
		t.Errorf("AudioEventOf without an event = %+v, want nil", ev)
	}
}

func TestPlanDeliveries(t *testing.T) {
	t.Parallel()
	all := &narrator.Webhook{ID: 1, Events: narrator.WebhookEvents()}
	other := &narrator.Webhook{ID: 2, Events: []string{narrator.EventAudioFailed}}
	disabled := &narrator.Webhook{ID: 3, Events: narrator.WebhookEvents(), DisabledAt: time.Unix(1, 0)}
	also := &narrator.Webhook{ID: 4, Events: []string{narrator.EventAudioDeleted}}
	e := &narrator.Event{Type: narrator.EventAudioDeleted, ProjectID: 7, Audio: &narrator.Audio{ID: 5}}
	renders := 0
	render := func(*narrator.Event) ([]byte, error) { renders++; return []byte("body"), nil }
	ds, err := narrator.PlanDeliveries(e, []*narrator.Webhook{all, other, disabled, also}, render)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].WebhookID != 1 || ds[1].WebhookID != 4 || renders != 1 {
		t.Fatalf("deliveries to %v after %d renderings, want to [1 4] after 1", ds, renders)
	}
	if string(ds[0].Body) != "body" || ds[0].AudioID != 5 || ds[0].State != narrator.DeliveryPending || ds[0].MessageID == ds[1].MessageID {
		t.Errorf("delivery = %+v", ds[0])
	}
	if ds, err := narrator.PlanDeliveries(e, []*narrator.Webhook{other}, nil); err != nil || len(ds) != 0 {
		t.Errorf("no endpoint wants it: %v, %v; want nothing rendered", ds, err)
	}
	broken := errors.New("broken")
	if _, err := narrator.PlanDeliveries(e, []*narrator.Webhook{all}, func(*narrator.Event) ([]byte, error) { return nil, broken }); !errors.Is(err, broken) {
		t.Errorf("a failed rendering: %v, want %v", err, broken)
	}
}
