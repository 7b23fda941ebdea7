// Package ratelimit counts, in memory, what callers ask of a node, in
// token buckets named by key: a caller may spend a bucket's burst at once,
// then one token per interval.
package ratelimit

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/narrator/narrator"
)

// Limit is one bucket a call takes a token from: its key, how many tokens
// it holds when full, and how often it gains one.
type Limit struct {
	Key   string
	Burst int
	Every time.Duration
}

// maxBuckets is how many buckets a Limiter keeps before it drops the full
// ones, which hold nothing worth keeping.
const maxBuckets = 10_000

// Limiter keeps token buckets in memory, so its limits are per node.
type Limiter struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]bucket
}

type bucket struct {
	tokens float64
	at     time.Time
	limit  Limit
}

// New returns a Limiter on the clock now; time.Now when nil.
func New(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, buckets: map[string]bucket{}}
}

// Allow takes a token from the bucket of every limit if each has one, and
// reports true; otherwise it takes none, and returns how long until all
// will have one.
func (l *Limiter) Allow(limits ...Limit) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.buckets) > maxBuckets {
		l.prune(now)
	}
	for _, lim := range limits {
		b := l.fill(lim, now)
		if b.tokens < 1 {
			wait = max(wait, time.Duration((1-b.tokens)*float64(lim.Every)))
		}
	}
	if wait > 0 {
		return wait, false
	}
	for _, lim := range limits {
		b := l.fill(lim, now)
		b.tokens--
		l.buckets[lim.Key] = b
	}
	return 0, true
}

// fill returns lim's bucket with the tokens it gained since it was last
// seen.
func (l *Limiter) fill(lim Limit, now time.Time) bucket {
	b, ok := l.buckets[lim.Key]
	if !ok {
		return bucket{tokens: float64(lim.Burst), at: now, limit: lim}
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(lim.Burst), b.tokens+float64(d)/float64(lim.Every))
		b.at = now
	}
	b.limit = lim
	return b
}

// prune drops the buckets that are full again.
func (l *Limiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if l.fill(b.limit, now).tokens >= float64(b.limit.Burst) {
			delete(l.buckets, k)
		}
	}
}

// Take takes a token from the bucket of every limit, as Allow does, and returns nil; when
// one has none, it sets w's Retry-After and returns the refusal with msg (see Refusal).
func (l *Limiter) Take(w http.ResponseWriter, msg string, limits ...Limit) error {
	wait, ok := l.Allow(limits...)
	if ok {
		return nil
	}
	w.Header().Set("Retry-After", strconv.Itoa(Seconds(wait)))
	return Refusal(wait, msg)
}

// TakeWebhookTrigger takes a test or resend call of webhook endpoint webhookID of account
// accountID, as Take does, from the limits the API and the dashboard share: one bucket of the
// endpoint (narrator.WebhookTriggerBurst and WebhookTriggerEvery) and one of the account's
// endpoints (AccountTriggerBurst and AccountTriggerEvery).
func (l *Limiter) TakeWebhookTrigger(w http.ResponseWriter, accountID, webhookID int64) error {
	return l.Take(w, "Too many test and resend calls for this webhook, or for this account's webhooks.",
		Limit{Key: fmt.Sprintf("webhook:%d", webhookID), Burst: narrator.WebhookTriggerBurst, Every: narrator.WebhookTriggerEvery},
		Limit{Key: fmt.Sprintf("account-webhooks:%d", accountID), Burst: narrator.AccountTriggerBurst, Every: narrator.AccountTriggerEvery})
}

// Refusal is the error of a call refused for wait, with the message msg
// and the number of seconds to wait; callers set Retry-After to Seconds
// (Take does both).
func Refusal(wait time.Duration, msg string) error {
	return narrator.Errorf(narrator.ERATELIMITED, "%s Try again in %d s.", msg, Seconds(wait))
}

// Seconds is wait in whole seconds, rounded up, for Retry-After.
func Seconds(wait time.Duration) int {
	return int((wait + time.Second - 1) / time.Second)
}
