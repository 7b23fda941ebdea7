package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

var signInTests = []test{
	{"ReserveUpToTheLimit", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		t0 := b.clock.Now()
		limits := []narrator.SignInLimit{{Key: "pair:a", Max: 3, Window: time.Hour}, {Key: "ip:1", Max: 10, Window: time.Hour}}
		for i := range 3 {
			ref, err := b.store.ReserveSignInAttempt(ctx, fmt.Sprint("a", i), limits, t0.Add(time.Duration(i)*time.Minute))
			if err != nil || ref != nil {
				t.Fatalf("attempt %d: %+v, %v; want it reserved", i, ref, err)
			}
		}
		// The fourth waits until the first leaves the window.
		ref, err := b.store.ReserveSignInAttempt(ctx, "a3", limits, t0.Add(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "refusal", ref, &narrator.SignInRefusal{Limit: 0, Wait: 50 * time.Minute})
		// A refused attempt is not recorded: the IP has 3 of its 10.
		other := []narrator.SignInLimit{{Key: "ip:1", Max: 4, Window: time.Hour}}
		if ref, err := b.store.ReserveSignInAttempt(ctx, "b0", other, t0.Add(11*time.Minute)); err != nil || ref != nil {
			t.Fatalf("fourth attempt of the IP: %+v, %v; want it reserved", ref, err)
		}
		if ref, _ := b.store.ReserveSignInAttempt(ctx, "b1", other, t0.Add(12*time.Minute)); ref == nil || ref.Limit != 0 {
			t.Errorf("fifth attempt of the IP: %+v, want refused by limit 0", ref)
		}
		// After the window, room again.
		if ref, err := b.store.ReserveSignInAttempt(ctx, "a4", limits, t0.Add(time.Hour)); err != nil || ref != nil {
			t.Errorf("attempt after the window: %+v, %v; want it reserved", ref, err)
		}
	}},
	{"Concurrent", func(t *testing.T, b *bundle) {
		// Concurrent attempts cannot all pass: the check and the record
		// are atomic. Several rounds, each on its own key, all released
		// at once, give a check-then-record store many chances to fail.
		ctx := t.Context()
		t0 := b.clock.Now()
		for round := range 5 {
			limits := []narrator.SignInLimit{{Key: "ip:9", Max: 1000, Window: time.Hour}, {Key: fmt.Sprint("pair:race", round), Max: 5, Window: time.Hour}}
			var passed atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 40 {
				wg.Go(func() {
					<-start
					ref, err := b.store.ReserveSignInAttempt(ctx, fmt.Sprint("r", round, "-", i), limits, t0)
					if err != nil {
						t.Error(err)
						return
					}
					if ref == nil {
						passed.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if n := passed.Load(); n != 5 {
				t.Errorf("round %d: %d of 40 concurrent attempts reserved, want the limit, 5", round, n)
			}
		}
	}},
	{"Clear", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		t0 := b.clock.Now()
		pair := narrator.SignInLimit{Key: "pair:e", Max: 2, Window: time.Hour}
		ip := narrator.SignInLimit{Key: "ip:x", Max: 3, Window: time.Hour}
		for _, a := range []string{"c0", "c1"} {
			if ref, err := b.store.ReserveSignInAttempt(ctx, a, []narrator.SignInLimit{pair, ip}, t0); err != nil || ref != nil {
				t.Fatalf("reserve %s: %+v, %v", a, ref, err)
			}
		}
		// c1 succeeds: it and the pair's failures are forgotten, the IP's
		// other failure (c0) stays.
		if err := b.store.ClearSignInAttempts(ctx, "c1", []string{pair.Key}); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{"c2", "c3"} {
			if ref, err := b.store.ReserveSignInAttempt(ctx, a, []narrator.SignInLimit{pair, ip}, t0); err != nil || ref != nil {
				t.Fatalf("reserve %s after clear: %+v, %v", a, ref, err)
			}
		}
		if ref, _ := b.store.ReserveSignInAttempt(ctx, "c4", []narrator.SignInLimit{ip}, t0); ref == nil {
			t.Error("the IP's limit has room: clearing forgot its failure")
		}
	}},
	{"Pruned", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		t0 := b.clock.Now()
		long := narrator.SignInLimit{Key: "k", Max: 1, Window: 48 * time.Hour}
		if ref, err := b.store.ReserveSignInAttempt(ctx, "p0", []narrator.SignInLimit{long}, t0); err != nil || ref != nil {
			t.Fatal(ref, err)
		}
		if _, err := b.store.ReserveSignInAttempt(ctx, "p1", []narrator.SignInLimit{{Key: "other", Max: 1, Window: time.Hour}}, t0.Add(25*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if ref, err := b.store.ReserveSignInAttempt(ctx, "p2", []narrator.SignInLimit{long}, t0.Add(26*time.Hour)); err != nil || ref != nil {
			t.Errorf("an attempt older than a day was kept: %+v, %v", ref, err)
		}
	}},
}
