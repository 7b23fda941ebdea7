package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/narrator/narrator"
)

// Attempts is where a Limiter keeps sign-in attempts: the database, so
// that every node behind a load balancer counts the same attempts.
type Attempts interface {
	// ReserveSignInAttempt records an attempt named attempt at time at
	// under every limit's key, unless a limit is full; then it records
	// nothing and returns the refusal. The check and the record are
	// atomic: concurrent attempts, on any node, cannot all pass a limit.
	ReserveSignInAttempt(ctx context.Context, attempt string, limits []narrator.SignInLimit, at time.Time) (*narrator.SignInRefusal, error)
	// ClearSignInAttempts forgets the attempt named attempt and every
	// attempt under keys.
	ClearSignInAttempts(ctx context.Context, attempt string, keys []string) error
}

// LimiterConfig configures a Limiter. Zero fields take the defaults; Store
// is required.
type LimiterConfig struct {
	// Store keeps the attempts.
	Store Attempts
	// Window is the period over which failures are counted; 15 minutes.
	// Each failure leaves it that long after it was made, so no limit
	// locks anyone out for longer than that after the last failure.
	Window time.Duration
	// PerPair is how many failed sign-ins an email may have from one
	// client IP in a window; 5. It stops the guessing of one password
	// from one place without touching its owner elsewhere.
	PerPair int
	// PerIP is how many failed sign-ins a client IP may have in a window,
	// whatever the emails; 30. Successful sign-ins do not count, so a busy
	// office behind one address is not locked out by its own users.
	PerIP int
	// PerEmail is how many failed sign-ins an email may have in a window
	// from all IPs together; 100. It is above PerIP, so that a stranger
	// at one address can never lock the email's owner out; only guessing
	// spread over many addresses can, and only while it lasts and one
	// window after.
	PerEmail int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Limiter limits sign-in attempts by counting failures per email and
// client IP, per client IP and per email. Each attempt is recorded before
// its password is checked, in the same store transaction as the check, so
// that concurrent attempts cannot overrun a limit; a success then forgets
// its attempt. The attempts are in the store, so the limits hold across
// all nodes and restarts. Only the note of which lockouts were already
// logged is per node, so each node logs a lockout once.
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
	if cfg.PerPair <= 0 {
		cfg.PerPair = 5
	}
	if cfg.PerIP <= 0 {
		cfg.PerIP = 30
	}
	if cfg.PerEmail <= 0 {
		cfg.PerEmail = 100
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
	// By is the limit reached: "pair" (this email from this IP), "ip" or
	// "email".
	By string
	// First is true for the first refusal of a lockout on this node, which
	// is the one worth logging.
	First bool
}

// limitNames name the limits of Reserve, in order.
var limitNames = [...]string{"pair", "ip", "email"}

// Reserve records a sign-in attempt from ip for email, before its password
// is checked, and returns the attempt's name for Succeed; or, if a limit
// is full, records nothing and says why.
func (l *Limiter) Reserve(ctx context.Context, ip, email string) (string, *Refusal, error) {
	attempt, err := newToken()
	if err != nil {
		return "", nil, fmt.Errorf("sign-in limit: %w", err)
	}
	limits := []narrator.SignInLimit{
		{Key: pairKey(ip, email), Max: l.cfg.PerPair, Window: l.cfg.Window},
		{Key: ipKey(ip), Max: l.cfg.PerIP, Window: l.cfg.Window},
		{Key: emailKey(email), Max: l.cfg.PerEmail, Window: l.cfg.Window},
	}
	now := l.cfg.Now()
	ref, err := l.cfg.Store.ReserveSignInAttempt(ctx, attempt, limits, now)
	if err != nil {
		return "", nil, fmt.Errorf("sign-in limit: %w", err)
	}
	if ref != nil {
		key := limits[ref.Limit].Key
		return "", &Refusal{Wait: ref.Wait, By: limitNames[ref.Limit], First: l.firstReport(key, now, now.Add(ref.Wait))}, nil
	}
	return attempt, nil, nil
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

// Succeed forgets a successful attempt, and the failures of its email from
// its IP. Those of the IP with other emails, and of the email from other
// IPs, stay: one good password must not reset the guessing of others.
func (l *Limiter) Succeed(ctx context.Context, attempt, ip, email string) error {
	key := pairKey(ip, email)
	if err := l.cfg.Store.ClearSignInAttempts(ctx, attempt, []string{key}); err != nil {
		return fmt.Errorf("sign-in limit: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.reported, key)
	return nil
}

// Forget forgets an attempt whose password was not checked after all.
func (l *Limiter) Forget(ctx context.Context, attempt string) error {
	if err := l.cfg.Store.ClearSignInAttempts(ctx, attempt, nil); err != nil {
		return fmt.Errorf("sign-in limit: %w", err)
	}
	return nil
}

// ipKey, emailKey and pairKey name a limit's attempts in the store. The
// values are hashed, so that what people type in the email field
// (sometimes a password) is not kept; a hashed IPv4 address can still be
// found by trying them all, which is no worse than the logs.
func ipKey(ip string) string          { return "ip:" + hashHex(ip) }
func emailKey(email string) string    { return "email:" + hashHex(email) }
func pairKey(ip, email string) string { return "pair:" + hashHex(ip+"\x00"+email) }

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
