package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// Failures is where a Limiter keeps failed sign-ins: the database, so
// that every node behind a load balancer counts the same failures.
type Failures interface {
	// RecordSignInFailure records a failure at time at under each key.
	RecordSignInFailure(ctx context.Context, keys []string, at time.Time) error
	// RecentSignInFailures returns key's failures at or after since,
	// newest first, at most limit of them.
	RecentSignInFailures(ctx context.Context, key string, since time.Time, limit int) ([]time.Time, error)
	// ClearSignInFailures forgets key's failures.
	ClearSignInFailures(ctx context.Context, key string) error
}

// LimiterConfig configures a Limiter. Zero fields take the defaults; Store
// is required.
type LimiterConfig struct {
	// Store keeps the failures.
	Store Failures
	// Window is the period over which failures are counted; 15 minutes.
	Window time.Duration
	// PerEmail is how many failed sign-ins an email may have in a window; 5.
	PerEmail int
	// PerIP is how many failed sign-ins a client IP may have in a window;
	// 30. Successful sign-ins do not count, so a busy office behind one
	// address is not locked out by its own users.
	PerIP int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Limiter limits sign-in attempts by counting failures per client IP and
// per email. The failures are in the store, so the limits hold across all
// nodes and restarts. Only the note of which lockouts were already logged
// is per node, so each node logs a lockout once.
type Limiter struct {
	cfg LimiterConfig

	mu sync.Mutex
	// reported holds, for each key whose refusals were logged, when that
	// lockout ends.
	reported map[string]time.Time
}

// NewLimiter returns a Limiter.
func NewLimiter(cfg LimiterConfig) *Limiter {
	if cfg.Window <= 0 {
		cfg.Window = 15 * time.Minute
	}
	if cfg.PerEmail <= 0 {
		cfg.PerEmail = 5
	}
	if cfg.PerIP <= 0 {
		cfg.PerIP = 30
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{cfg: cfg, reported: map[string]time.Time{}}
}

// Refusal describes a refused sign-in attempt.
type Refusal struct {
	// Wait is how long until an attempt may be made again.
	Wait time.Duration
	// By is the limit reached: "ip" or "email".
	By string
	// First is true for the first refusal of a lockout on this node, which
	// is the one worth logging.
	First bool
}

// Allow returns nil if a sign-in attempt from ip for email may proceed,
// or why it may not. Only failures count (Fail).
func (l *Limiter) Allow(ctx context.Context, ip, email string) (*Refusal, error) {
	now := l.cfg.Now()
	for _, c := range []struct {
		by, key string
		max     int
	}{{"ip", ipKey(ip), l.cfg.PerIP}, {"email", emailKey(email), l.cfg.PerEmail}} {
		recent, err := l.cfg.Store.RecentSignInFailures(ctx, c.key, now.Add(-l.cfg.Window), c.max)
		if err != nil {
			return nil, fmt.Errorf("sign-in limit: %w", err)
		}
		if len(recent) < c.max {
			continue
		}
		// The oldest of the last max failures leaves the window first.
		wait := l.cfg.Window - now.Sub(recent[c.max-1])
		if wait <= 0 {
			continue
		}
		return &Refusal{Wait: wait, By: c.by, First: l.firstReport(c.key, now, now.Add(wait))}, nil
	}
	return nil, nil
}

// firstReport reports whether key's lockout, lasting until until, has not
// been logged on this node yet, and notes that it now is.
func (l *Limiter) firstReport(key string, now, until time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, end := range l.reported {
		if !now.Before(end) {
			delete(l.reported, k)
		}
	}
	if now.Before(l.reported[key]) {
		return false
	}
	l.reported[key] = until
	return true
}

// Fail records a failed sign-in from ip for email.
func (l *Limiter) Fail(ctx context.Context, ip, email string) error {
	if err := l.cfg.Store.RecordSignInFailure(ctx, []string{ipKey(ip), emailKey(email)}, l.cfg.Now()); err != nil {
		return fmt.Errorf("sign-in limit: %w", err)
	}
	return nil
}

// Succeed forgets the failures of email after a successful sign-in. Those
// of the IP stay: one good password must not reset the guessing of others.
func (l *Limiter) Succeed(ctx context.Context, email string) error {
	if err := l.cfg.Store.ClearSignInFailures(ctx, emailKey(email)); err != nil {
		return fmt.Errorf("sign-in limit: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.reported, emailKey(email))
	return nil
}

// ipKey and emailKey name a limit's failures in the store. The value is
// hashed, so that what people type in the email field (sometimes a
// password) is not kept; a hashed IPv4 address can still be found by
// trying them all, which is no worse than the logs.
func ipKey(ip string) string       { return "ip:" + hashHex(ip) }
func emailKey(email string) string { return "email:" + hashHex(email) }

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
