package ratelimit_test

import (
	"testing"
	"time"

	"github.com/narrator/narrator/internal/ratelimit"
)

func TestAllow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := ratelimit.New(func() time.Time { return now })
	a := ratelimit.Limit{Key: "a", Burst: 2, Every: 10 * time.Second}
	all := ratelimit.Limit{Key: "all", Burst: 3, Every: time.Minute}
	for i := range 2 {
		if _, ok := l.Allow(a, all); !ok {
			t.Fatalf("call %d within the burst refused", i)
		}
	}
	if wait, ok := l.Allow(a, all); ok || wait != 10*time.Second {
		t.Fatalf("past a's burst: ok %v, wait %v; want refused, 10s", ok, wait)
	}
	// A refused call takes no token: all still has one.
	b := ratelimit.Limit{Key: "b", Burst: 2, Every: 10 * time.Second}
	if _, ok := l.Allow(b, all); !ok {
		t.Fatal("b refused while all had a token left")
	}
	if wait, ok := l.Allow(b, all); ok || wait != time.Minute {
		t.Fatalf("past all's burst: ok %v, wait %v; want refused, 1m", ok, wait)
	}
	now = now.Add(10 * time.Second)
	if _, ok := l.Allow(a); !ok {
		t.Fatal("a refused after gaining a token")
	}
	if _, ok := l.Allow(a); ok {
		t.Fatal("a allowed twice after gaining one token")
	}
}
