package storetest

import (
	"fmt"
	"testing"

	"github.com/narrator/narrator"
)

var resynthesisTests = []test{
	{"EveryLiveAudio", func(t *testing.T, b *bundle) {
		// A resynthesis of every audio (after an intro, outro or rate
		// change) re-queues the project's processed and failed audios,
		// whatever their text, and nothing else: not one waiting for
		// synthesis already, a deleted one or another project's. The
		// re-queueing raises no webhook event; the new speech, once
		// published, raises audio.processed.
		ctx := t.Context()
		p := mustProject(t, b.store)
		h := mustWebhook(t, b.store, p.ID)
		processed, _ := mustFinishedAudio(t, b.store, p.ID, "processed", "p1")
		failed := mustAudio(t, b.store, p.ID, "failed")
		if err := b.store.FailAudio(ctx, failed.ID, failed.Revision, "the engine broke"); err != nil {
			t.Fatal(err)
		}
		waiting := mustAudio(t, b.store, p.ID, "waiting")
		deleted, _ := mustFinishedAudio(t, b.store, p.ID, "deleted", "d1")
		if _, err := b.store.DeleteAudio(ctx, p.ID, "deleted"); err != nil {
			t.Fatal(err)
		}
		other, _ := mustFinishedAudio(t, b.store, mustProjectOf(t, b.store, p.AccountID).ID, "other", "o1")
		job := narrator.ResynthesisJob{ProjectID: p.ID, All: true}
		ids, err := b.store.ResynthesisCandidates(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "candidates", ids, []int64{processed.ID, failed.ID})
		before, raised := len(b.rec.Synthesized()), len(mustDeliveries(t, b.store, h))
		n, err := b.store.ResynthesizeAudios(ctx, job, append(ids, waiting.ID, deleted.ID, other.ID))
		if err != nil || n != 2 {
			t.Fatalf("ResynthesizeAudios = %d, %v; want 2, the candidates", n, err)
		}
		wantEqual(t, "synthesis jobs", b.rec.Synthesized()[before:], []SynthesizeCall{
			{AudioID: processed.ID, Revision: processed.Revision + 1}, {AudioID: failed.ID, Revision: failed.Revision + 1}})
		for _, a := range []*narrator.Audio{processed, failed} {
			if got := mustFindAudio(t, b.store, p.ID, a.ExternalID); got.State != narrator.StateUnprocessed || got.Revision != a.Revision+1 {
				t.Errorf("%s: %s at revision %d, want unprocessed at %d", a.ExternalID, got.State, got.Revision, a.Revision+1)
			}
		}
		if got := mustFindAudio(t, b.store, waiting.ProjectID, "waiting"); got.Revision != waiting.Revision {
			t.Errorf("the waiting audio moved to revision %d", got.Revision)
		}
		if got := mustFindAudio(t, b.store, other.ProjectID, "other"); got.State != narrator.StateProcessed || got.Revision != other.Revision {
			t.Errorf("another project's audio is %s at revision %d, want it untouched", got.State, got.Revision)
		}
		if ds := mustDeliveries(t, b.store, h)[raised:]; len(ds) != 0 {
			t.Errorf("the re-queueing raised %v; want nothing", events(ds))
		}
		// Done again, nothing is left to do: the audios wait.
		if ids, err := b.store.ResynthesisCandidates(ctx, job); err != nil || len(ids) != 0 {
			t.Errorf("candidates again = %v, %v; want none", ids, err)
		}
		mustFinish(t, b.store, mustFindAudio(t, b.store, p.ID, "processed"), "p2")
		wantEqual(t, "events", events(mustDeliveries(t, b.store, h)[raised:]), []string{narrator.EventAudioProcessed})
	}},
	{"EveryLiveAudioObeysTheQueueLimit", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		var done []int64
		for i := range 2 {
			a, _ := mustFinishedAudio(t, b.store, p.ID, fmt.Sprintf("done-%d", i), fmt.Sprintf("t%d", i))
			done = append(done, a.ID)
		}
		// Fill the account's queue but for one place.
		mustFillQueue(t, b.store, []*narrator.Project{p}, SuiteLimits.MaxQueued-1)
		n, err := b.store.ResynthesizeAudios(ctx, narrator.ResynthesisJob{ProjectID: p.ID, All: true}, done)
		if n != 1 {
			t.Errorf("re-queued %d, want the 1 that fits", n)
		}
		wantCode(t, err, narrator.EQUEUEFULL)
		if got := mustFindAudio(t, b.store, p.ID, "done-1"); got.State != narrator.StateProcessed {
			t.Errorf("the audio past the limit is %s, want it left processed", got.State)
		}
	}},
}
