package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

var progressTests = []test{
	{"ReportAndRead", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		until := b.clock.Now().Add(time.Minute)
		if _, err := b.store.SynthesisProgress(ctx, a.ID, 1); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Fatalf("progress before any report: %v, want ENOTFOUND", err)
		}
		started := b.clock.Now().Add(-time.Second).Truncate(time.Microsecond)
		report := func(holder string, rev, done int, live string) bool {
			t.Helper()
			ok, err := b.store.ReportSynthesis(ctx, a.ID, holder, narrator.SynthesisProgress{
				Revision:       rev,
				RenderProgress: narrator.RenderProgress{UnitsDone: done, UnitsTotal: 40, LiveKey: live},
				StartedAt:      started,
			})
			if err != nil {
				t.Fatalf("ReportSynthesis(%s, %d): %v", holder, rev, err)
			}
			return ok
		}
		if report("h1", 1, 1, "") {
			t.Fatal("a report without the lease was taken")
		}
		mustLease(t, b.store, a.ID, 1, "h1", until)
		if !report("h1", 1, 1, "") || !report("h1", 1, 12, "tok/live.m3u8") {
			t.Fatal("the holder's report was refused")
		}
		if report("h2", 1, 30, "other/live.m3u8") {
			t.Fatal("a report by another holder was taken")
		}
		if report("h1", 2, 30, "other/live.m3u8") {
			t.Fatal("a report on a revision the lease is not on was taken")
		}
		got, err := b.store.SynthesisProgress(ctx, a.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := narrator.SynthesisProgress{
			Revision:       1,
			RenderProgress: narrator.RenderProgress{UnitsDone: 12, UnitsTotal: 40, LiveKey: "tok/live.m3u8"},
			StartedAt:      started,
			UpdatedAt:      b.clock.Now().UTC().Truncate(time.Microsecond),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SynthesisProgress (-want +got):\n%s", diff)
		}
		if _, err := b.store.SynthesisProgress(ctx, a.ID, 2); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("progress of another revision: %v, want ENOTFOUND", err)
		}

		// Another attempt takes the lease over once it runs out; the old
		// holder can neither report nor remove the new one's progress.
		b.clock.Advance(2 * time.Minute)
		mustLease(t, b.store, a.ID, 1, "h2", b.clock.Now().Add(time.Minute))
		if !report("h2", 1, 3, "") {
			t.Fatal("the new holder's report was refused")
		}
		if report("h1", 1, 13, "tok/live.m3u8") {
			t.Fatal("the old holder's report was taken")
		}
		if err := b.store.ReleaseSynthesis(ctx, a.ID, "h1"); err != nil {
			t.Fatal(err)
		}
		if got, err := b.store.SynthesisProgress(ctx, a.ID, 1); err != nil || got.UnitsDone != 3 || got.LiveKey != "" {
			t.Fatalf("progress after the old holder's release = %+v, %v; want the new holder's", got, err)
		}
		// Releasing the lease removes the progress.
		if err := b.store.ReleaseSynthesis(ctx, a.ID, "h2"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.SynthesisProgress(ctx, a.ID, 1); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("progress after release: %v, want ENOTFOUND", err)
		}
	}},
	{"ReleaseAll", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		mustLease(t, b.store, a.ID, 1, "dead", b.clock.Now().Add(time.Hour))
		if ok, err := b.store.ReportSynthesis(ctx, a.ID, "dead", narrator.SynthesisProgress{Revision: 1, StartedAt: b.clock.Now()}); err != nil || !ok {
			t.Fatalf("report = %v, %v", ok, err)
		}
		if err := b.store.ReleaseSynthesisLeases(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.SynthesisProgress(ctx, a.ID, 1); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("progress after ReleaseSynthesisLeases: %v, want ENOTFOUND", err)
		}
	}},
	{"FinishEndsLease", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		mustLease(t, b.store, a.ID, 1, "h", b.clock.Now().Add(time.Hour))
		mustFinish(t, b.store, a, "v1")
		// Finishing releases the lease: a late report is refused.
		if ok, err := b.store.ReportSynthesis(ctx, a.ID, "h", narrator.SynthesisProgress{Revision: 1, StartedAt: b.clock.Now()}); err != nil || ok {
			t.Errorf("report after finishing = %v, %v; want false", ok, err)
		}
	}},
}
