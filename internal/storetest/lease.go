package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

var leaseTests = []test{
	{"TakeRenewRelease", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		until := b.clock.Now().Add(time.Minute)
		lease := func(holder string, rev int) bool {
			t.Helper()
			ok, err := b.store.LeaseSynthesis(ctx, a.ID, rev, holder, until)
			if err != nil {
				t.Fatalf("LeaseSynthesis(%s, %d): %v", holder, rev, err)
			}
			return ok
		}
		if !lease("n1/1", 1) {
			t.Fatal("first lease refused")
		}
		if !lease("n1/1", 1) {
			t.Fatal("renewal by the holder refused")
		}
		if lease("n2/1", 1) {
			t.Fatal("a second holder got a running lease")
		}
		if lease("n2/1", 2) {
			t.Fatal("lease on a revision the audio is not at was granted")
		}
		// A lease that ran out goes to whoever asks.
		b.clock.Advance(2 * time.Minute)
		until = b.clock.Now().Add(time.Minute)
		if !lease("n2/1", 1) {
			t.Fatal("expired lease not taken over")
		}
		// Releasing by someone else does nothing; by the holder frees it.
		if err := b.store.ReleaseSynthesis(ctx, a.ID, "n1/1"); err != nil {
			t.Fatal(err)
		}
		if lease("n3/1", 1) {
			t.Fatal("release by a former holder freed the lease")
		}
		if err := b.store.ReleaseSynthesis(ctx, a.ID, "n2/1"); err != nil {
			t.Fatal(err)
		}
		if !lease("n3/1", 1) {
			t.Fatal("released lease not granted")
		}
		_, err := b.store.LeaseSynthesis(ctx, 999, 1, "x", until)
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"NewRevisionIsNotBlocked", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "e")
		until := b.clock.Now().Add(time.Minute)
		mustLease(t, b.store, a.ID, 1, "old", until)
		if _, err := b.store.UpdateAudio(ctx, p.ID, "e", narrator.AudioUpdate{Body: ptr("New text.")}); err != nil {
			t.Fatal(err)
		}
		mustLease(t, b.store, a.ID, 2, "new", until)
		// The old holder's renewal now fails: its result is stale.
		if ok, err := b.store.LeaseSynthesis(ctx, a.ID, 1, "old", until); err != nil || ok {
			t.Fatalf("stale renewal = %v, %v; want false", ok, err)
		}
	}},
	{"RequeueOnlyWhileAwaited", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "r")
		after := b.clock.Now().Add(time.Minute)
		if ok, err := b.store.RequeueSynthesis(ctx, a.ID, 1, after); err != nil || !ok {
			t.Fatalf("requeue = %v, %v; want true", ok, err)
		}
		if _, err := b.store.UpdateAudio(ctx, p.ID, "r", narrator.AudioUpdate{Body: ptr("New text.")}); err != nil {
			t.Fatal(err)
		}
		// Revision 1 is stale: no job for it.
		if ok, err := b.store.RequeueSynthesis(ctx, a.ID, 1, after); err != nil || ok {
			t.Fatalf("requeue of a stale revision = %v, %v; want false", ok, err)
		}
		want := []SynthesizeCall{{a.ID, 1}, {a.ID, 1}, {a.ID, 2}}
		if diff := cmp.Diff(want, b.rec.Synthesized()); diff != "" {
			t.Errorf("synthesis jobs (-want +got):\n%s", diff)
		}
		_, err := b.store.RequeueSynthesis(ctx, 999, 1, after)
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"DeletedRefused", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(a.ID)); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.store.LeaseSynthesis(ctx, a.ID, 1, "h", b.clock.Now().Add(time.Minute)); err != nil || ok {
			t.Fatalf("lease on a deleted audio = %v, %v; want false, nil", ok, err)
		}
	}},
	{"FinishAndFailRelease", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		until := b.clock.Now().Add(time.Minute)
		a := mustAudio(t, b.store, p.ID, "pub")
		mustLease(t, b.store, a.ID, 1, "h", until)
		mustFinish(t, b.store, a, "v1")
		// Published once: a twin's result for the same revision is refused.
		err := b.store.FinishAudio(ctx, a.ID, 1, rendering(map[string]string{narrator.ContentTypeMP3: "twin/audio.mp3"}, 1))
		wantCode(t, err, narrator.ECONFLICT)

		f := mustAudio(t, b.store, p.ID, "fail")
		mustLease(t, b.store, f.ID, 1, "h", until)
		if err := b.store.FailAudio(ctx, f.ID, 1, "no"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.ResynthesizeAudio(ctx, p.ID, "fail"); err != nil {
			t.Fatal(err)
		}
		mustLease(t, b.store, f.ID, 2, "other", until)
	}},
	{"ReleaseAll", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		until := b.clock.Now().Add(time.Hour)
		mustLease(t, b.store, a.ID, 1, "dead", until)
		if err := b.store.ReleaseSynthesisLeases(ctx); err != nil {
			t.Fatal(err)
		}
		mustLease(t, b.store, a.ID, 1, "alive", until)
	}},
}
