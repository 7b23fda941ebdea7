package ratelimit_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/narrator/narrator"
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

// TestTake: within the limits Take returns nil and leaves the answer alone; past them it sets
// Retry-After to the whole seconds to wait, rounded up, and returns ERATELIMITED with the
// message and the wait.
func TestTake(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := ratelimit.New(func() time.Time { return now })
	lim := ratelimit.Limit{Key: "k", Burst: 1, Every: 2500 * time.Millisecond}
	w := httptest.NewRecorder()
	if err := l.Take(w, "Slow down.", lim); err != nil || w.Header().Get("Retry-After") != "" {
		t.Fatalf("first call: %v, Retry-After %q; want allowed", err, w.Header().Get("Retry-After"))
	}
	err := l.Take(w, "Slow down.", lim)
	if narrator.ErrorCode(err) != narrator.ERATELIMITED || narrator.ErrorMessage(err) != "Slow down. Try again in 3 s." {
		t.Errorf("second call: %v, want ERATELIMITED saying to try again in 3 s", err)
	}
	if got := w.Header().Get("Retry-After"); got != "3" {
		t.Errorf("Retry-After %q, want 3", got)
	}
}

// TestTakeWebhookTrigger: an endpoint's test and resend calls share its burst, and an
// account's endpoints share the account's.
func TestTakeWebhookTrigger(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	take := func(account, webhook int64) error {
		return l.TakeWebhookTrigger(httptest.NewRecorder(), account, webhook)
	}
	for i := range narrator.WebhookTriggerBurst {
		if err := take(1, 1); err != nil {
			t.Fatalf("call %d within the endpoint's burst: %v", i, err)
		}
	}
	if err := take(1, 1); narrator.ErrorCode(err) != narrator.ERATELIMITED {
		t.Fatalf("past the endpoint's burst: %v, want ERATELIMITED", err)
	}
	var err error
	for webhook := int64(2); err == nil && webhook < 1000; webhook++ {
		err = take(1, webhook)
	}
	if narrator.ErrorCode(err) != narrator.ERATELIMITED {
		t.Errorf("the account's endpoints never ran out: %v", err)
	}
	if err := take(2, 1000); err != nil {
		t.Errorf("another account's endpoint: %v, want allowed", err)
	}
}
