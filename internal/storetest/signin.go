package storetest

import (
	"testing"
	"time"
)

var signInTests = []test{
	{"RecentNewestFirst", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		t0 := b.clock.Now()
		for i := range 4 {
			if err := b.store.RecordSignInFailure(ctx, []string{"ip:1.2.3.4", "email:a@x.test"}, t0.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.store.RecentSignInFailures(ctx, "email:a@x.test", t0.Add(time.Minute), 2)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "failures", got, []time.Time{t0.Add(3 * time.Minute), t0.Add(2 * time.Minute)})
		got, err = b.store.RecentSignInFailures(ctx, "ip:1.2.3.4", t0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 {
			t.Errorf("ip failures = %v, want 4", got)
		}
		got, err = b.store.RecentSignInFailures(ctx, "email:other@x.test", t0, 10)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("another key's failures = %v, %v; want an empty slice", got, err)
		}
	}},
	{"Clear", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		t0 := b.clock.Now()
		if err := b.store.RecordSignInFailure(ctx, []string{"ip:x", "email:e"}, t0); err != nil {
			t.Fatal(err)
		}
		if err := b.store.ClearSignInFailures(ctx, "email:e"); err != nil {
			t.Fatal(err)
		}
		if got, _ := b.store.RecentSignInFailures(ctx, "email:e", t0, 10); len(got) != 0 {
			t.Errorf("cleared key still has %v", got)
		}
		if got, _ := b.store.RecentSignInFailures(ctx, "ip:x", t0, 10); len(got) != 1 {
			t.Errorf("clearing one key cleared another: %v", got)
		}
	}},
	{"Pruned", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		t0 := b.clock.Now()
		if err := b.store.RecordSignInFailure(ctx, []string{"k"}, t0); err != nil {
			t.Fatal(err)
		}
		if err := b.store.RecordSignInFailure(ctx, []string{"other"}, t0.Add(25*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, _ := b.store.RecentSignInFailures(ctx, "k", time.Time{}, 10); len(got) != 0 {
			t.Errorf("a failure older than a day was kept: %v", got)
		}
	}},
}
