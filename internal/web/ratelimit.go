package web

import (
	"sync"
	"time"
)

// LimiterConfig configures a Limiter. Zero fields take the defaults.
type LimiterConfig struct {
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
// per email. Its state
// is in memory: it protects one node, and a restart forgets it. With many
// nodes behind a load balancer each node limits on its own, so the
// effective limits multiply by the number of nodes.
type Limiter struct {
	cfg LimiterConfig

	mu     sync.Mutex
	events map[string][]time.Time // key → times of failures, oldest first
	// reported holds, for each key whose refusals were reported, when that
	// lockout ends, so that a lockout is reported once.
	reported map[string]time.Time
	calls    int
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
	return &Limiter{cfg: cfg, events: map[string][]time.Time{}, reported: map[string]time.Time{}}
}

// Refusal describes a refused sign-in attempt.
type Refusal struct {
	// Wait is how long until an attempt may be made again.
	Wait time.Duration
	// By is the limit reached: "ip" or "email".
	By string
	// First is true for the first refusal of a lockout, which is the one
	// worth logging.
	First bool
}

// Allow returns nil if a sign-in attempt from ip for email may proceed,
// or why it may not. Only failures count (Fail).
func (l *Limiter) Allow(ip, email string) *Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	l.gc(now)
	for _, c := range []struct {
		by, key string
		max     int
	}{{"ip", ipKey(ip), l.cfg.PerIP}, {"email", emailKey(email), l.cfg.PerEmail}} {
		wait := l.full(c.key, c.max, now)
		if wait <= 0 {
			continue
		}
		until := now.Add(wait)
		first := !now.Before(l.reported[c.key])
		if first {
			l.reported[c.key] = until
		}
		return &Refusal{Wait: wait, By: c.by, First: first}
	}
	return nil
}

// Fail records a failed sign-in from ip for email.
func (l *Limiter) Fail(ip, email string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	for _, key := range []string{ipKey(ip), emailKey(email)} {
		l.events[key] = append(l.events[key], now)
	}
}

// Succeed forgets the failures of email after a successful sign-in. Those
// of the IP stay: one good password must not reset the guessing of others.
func (l *Limiter) Succeed(email string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.events, emailKey(email))
	delete(l.reported, emailKey(email))
}

func ipKey(ip string) string       { return "ip\x00" + ip }
func emailKey(email string) string { return "email\x00" + email }

// full drops key's events older than the window and, if max remain,
// returns how long until the oldest leaves the window.
func (l *Limiter) full(key string, max int, now time.Time) time.Duration {
	ev := l.events[key]
	cut := 0
	for cut < len(ev) && now.Sub(ev[cut]) >= l.cfg.Window {
		cut++
	}
	ev = ev[cut:]
	if len(ev) == 0 {
		delete(l.events, key)
		return 0
	}
	l.events[key] = ev
	if len(ev) < max {
		return 0
	}
	return l.cfg.Window - now.Sub(ev[len(ev)-max])
}

// gc drops stale keys every so often, so memory stays bounded by the
// attempts of one window.
func (l *Limiter) gc(now time.Time) {
	l.calls++
	if l.calls%256 != 0 {
		return
	}
	for k, ev := range l.events {
		if len(ev) == 0 || now.Sub(ev[len(ev)-1]) >= l.cfg.Window {
			delete(l.events, k)
		}
	}
	for k, until := range l.reported {
		if !now.Before(until) {
			delete(l.reported, k)
		}
	}
}
