package storetest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator"
)

var pronunciationTests = []test{
	{"SetListRemove", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		rule := &narrator.Pronunciation{ProjectID: p.ID, Phrase: " nginx ", Say: "engine x\n"}
		if err := b.store.SetPronunciation(ctx, rule); err != nil {
			t.Fatal(err)
		}
		if rule.ID == 0 || !rule.CreatedAt.Equal(epoch) || rule.Phrase != "nginx" || rule.Say != "engine x" {
			t.Errorf("rule not filled in and trimmed: %+v", rule)
		}
		// The same phrase in another case replaces the rule.
		again := &narrator.Pronunciation{ProjectID: p.ID, Phrase: "NGINX", Say: "engine ex"}
		if err := b.store.SetPronunciation(ctx, again); err != nil {
			t.Fatal(err)
		}
		if again.ID != rule.ID {
			t.Errorf("replacing made a new rule: %d, then %d", rule.ID, again.ID)
		}
		other := &narrator.Pronunciation{ProjectID: p.ID, Phrase: "Kubernetes", Say: "koo ber net eez"}
		if err := b.store.SetPronunciation(ctx, other); err != nil {
			t.Fatal(err)
		}
		rules, err := b.store.ListPronunciations(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rules) != 2 || rules[0].Phrase != "Kubernetes" || rules[1].Say != "engine ex" {
			t.Fatalf("rules %+v", rules)
		}
		removed, err := b.store.RemovePronunciation(ctx, p.ID, other.ID)
		if err != nil || removed.Phrase != "Kubernetes" {
			t.Fatalf("remove: %+v %v", removed, err)
		}
		if _, err := b.store.RemovePronunciation(ctx, p.ID, other.ID); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("second remove: %v, want ENOTFOUND", err)
		}
		otherProject := mustProjectOf(t, b.store, p.AccountID)
		if _, err := b.store.RemovePronunciation(ctx, otherProject.ID, rule.ID); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("remove from another project: %v, want ENOTFOUND", err)
		}
	}},
	{"Bounded", func(t *testing.T, b *bundle) {
		// A project holds at most MaxPronunciations rules, even when rules
		// are added concurrently; replacing a rule at the limit still works.
		ctx := t.Context()
		p := mustProject(t, b.store)
		const free = 10
		for i := range narrator.MaxPronunciations - free {
			if err := b.store.SetPronunciation(ctx, &narrator.Pronunciation{ProjectID: p.ID, Phrase: fmt.Sprint("word", i), Say: "x"}); err != nil {
				t.Fatal(err)
			}
		}
		var added, refused atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 3 * free {
			wg.Go(func() {
				<-start
				err := b.store.SetPronunciation(ctx, &narrator.Pronunciation{ProjectID: p.ID, Phrase: fmt.Sprint("race", i), Say: "y"})
				switch narrator.ErrorCode(err) {
				case "":
					added.Add(1)
				case narrator.ECONFLICT:
					refused.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if added.Load() != free || refused.Load() != 2*free {
			t.Errorf("%d added and %d refused of %d concurrent rules with room for %d", added.Load(), refused.Load(), 3*free, free)
		}
		rules, err := b.store.ListPronunciations(ctx, p.ID)
		if err != nil || len(rules) != narrator.MaxPronunciations {
			t.Fatalf("%d rules, %v; want %d", len(rules), err, narrator.MaxPronunciations)
		}
		if err := b.store.SetPronunciation(ctx, &narrator.Pronunciation{ProjectID: p.ID, Phrase: "WORD0", Say: "other"}); err != nil {
			t.Errorf("replacing a rule at the limit: %v", err)
		}
		err = b.store.SetPronunciation(ctx, &narrator.Pronunciation{ProjectID: p.ID, Phrase: "one more", Say: "z"})
		if narrator.ErrorCode(err) != narrator.ECONFLICT {
			t.Errorf("a rule past the limit: %v, want ECONFLICT", err)
		}
	}},
	{"Invalid", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		if err := b.store.SetPronunciation(t.Context(), &narrator.Pronunciation{ProjectID: p.ID, Phrase: " ", Say: "x"}); narrator.ErrorCode(err) != narrator.EINVALID {
			t.Errorf("blank phrase: %v", err)
		}
		if err := b.store.SetPronunciation(t.Context(), &narrator.Pronunciation{ProjectID: 999999, Phrase: "x", Say: "y"}); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("missing project: %v", err)
		}
	}},
	{"ResynthesisAnyCase", func(t *testing.T, b *bundle) {
		// A rule finds its phrase in any letter case, outside ASCII too,
		// as Pronunciation.Matches does: the stores' narrowing of the
		// search must not drop an audio it selects.
		p := mustProject(t, b.store)
		a := newAudio(p.ID, "uber")
		a.Body = "Deutschland über alles, Émile said."
		mustCreateAudio(t, b.store, a)
		if err := b.store.FinishAudio(t.Context(), a.ID, a.Revision, rendering(map[string]string{"mp3": "t/u.mp3", "m3u8": "t/u.m3u8"}, 1000)); err != nil {
			t.Fatal(err)
		}
		for _, phrase := range []string{"Über", "émile", "ÉMILE", "Deutschland Über"} {
			ids, err := b.store.ResynthesisCandidates(t.Context(), narrator.ResynthesisJob{ProjectID: p.ID, Phrase: phrase})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, []int64{a.ID}) {
				t.Errorf("candidates of %q = %v, want [%d]", phrase, ids, a.ID)
			}
		}
	}},
	{"Resynthesis", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		with := newAudio(p.ID, "with")
		with.Body = "We serve it with NGINX, mostly."
		mustCreateAudio(t, b.store, with)
		inside := newAudio(p.ID, "inside")
		inside.Body = "The nginxes are not a word."
		mustCreateAudio(t, b.store, inside)
		without := newAudio(p.ID, "without")
		mustCreateAudio(t, b.store, without)
		deleted := newAudio(p.ID, "deleted")
		deleted.Title = "nginx"
		mustCreateAudio(t, b.store, deleted)
		if _, err := b.store.DeleteAudio(ctx, p.ID, "deleted"); err != nil {
			t.Fatal(err)
		}
		if err := b.store.FinishAudio(ctx, with.ID, with.Revision, rendering(map[string]string{"mp3": "t/a.mp3", "m3u8": "t/a.m3u8"}, 1000)); err != nil {
			t.Fatal(err)
		}
		rule := narrator.ResynthesisJob{ProjectID: p.ID, Phrase: "nginx"}
		// The unprocessed audios with the phrase wait for a synthesis that
		// reads the rules when it runs: only the processed one is a
		// candidate.
		inside.Body = "An nginx too, still waiting."
		if _, err := b.store.UpdateAudio(ctx, p.ID, "inside", narrator.AudioUpdate{Body: &inside.Body}); err != nil {
			t.Fatal(err)
		}
		before := len(b.rec.Synthesized())
		ids, err := b.store.ResynthesisCandidates(ctx, rule)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, []int64{with.ID}) {
			t.Fatalf("candidates %v, want only %d", ids, with.ID)
		}
		n, err := b.store.ResynthesizeAudios(ctx, rule, append(ids, without.ID, deleted.ID, inside.ID))
		if err != nil || n != 1 {
			t.Fatalf("ResynthesizeAudios = %d, %v; want 1, only the candidate", n, err)
		}
		// Done again, nothing is left to do: the audio waits.
		if n, err := b.store.ResynthesizeAudios(ctx, rule, ids); err != nil || n != 0 {
			t.Fatalf("ResynthesizeAudios again = %d, %v; want 0", n, err)
		}
		got, err := b.store.FindAudio(ctx, p.ID, "with")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != narrator.StateUnprocessed || got.Revision != with.Revision+1 {
			t.Errorf("after resynthesis: state %s revision %d", got.State, got.Revision)
		}
		calls := b.rec.Synthesized()[before:]
		if len(calls) != 1 || calls[0] != (SynthesizeCall{AudioID: with.ID, Revision: with.Revision + 1}) {
			t.Errorf("enqueued %+v", calls)
		}
	}},
	{"ResynthesisObeysTheQueueLimit", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		rule := narrator.ResynthesisJob{ProjectID: p.ID, Phrase: "nginx"}
		var done []int64
		for i := range 2 {
			a := newAudio(p.ID, fmt.Sprintf("done-%d", i))
			a.Body = "Served by nginx."
			mustCreateAudio(t, b.store, a)
			mustFinish(t, b.store, a, fmt.Sprintf("t%d", i))
			done = append(done, a.ID)
		}
		// Fill the account's queue but for one place.
		for i := range SuiteLimits.MaxQueued - 1 {
			mustAudio(t, b.store, p.ID, fmt.Sprintf("waiting-%d", i))
		}
		n, err := b.store.ResynthesizeAudios(ctx, rule, done)
		if n != 1 {
			t.Errorf("re-queued %d, want the 1 that fits", n)
		}
		wantCode(t, err, narrator.EQUEUEFULL)
		if got := mustFindAudio(t, b.store, p.ID, "done-1"); got.State != narrator.StateProcessed {
			t.Errorf("the audio past the limit is %s, want it left processed", got.State)
		}
	}},
}
