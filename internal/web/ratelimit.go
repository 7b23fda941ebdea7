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
	// PerIP is how many sign-in attempts, failed or not, a client IP may
	// make in a window; 30. It bounds the bcrypt work a client can cause.
	PerIP int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Limiter limits sign-in attempts per client IP and per email. Its state
// is in memory: it protects one node, and a restart forgets it. With many
// nodes behind a load balancer each node limits on its own, so the
// effective limits multiply by the number of nodes.
type Limiter struct {
	cfg LimiterConfig

	mu     sync.Mutex
	events map[string][]time.Time // key → times of counted events, oldest first
	calls  int
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
	return &Limiter{cfg: cfg, events: map[string][]time.Time{}}
}

// Allow reports whether a sign-in attempt from ip for email may proceed,
// and if not, how long until it may. An allowed attempt counts against the
// IP at once; it counts against the email only if it fails (Fail).
func (l *Limiter) Allow(ip, email string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	l.gc(now)
	ipKey, emailKey := "ip\x00"+ip, "email\x00"+email
	if wait := l.full(ipKey, l.cfg.PerIP, now); wait > 0 {
		return false, wait
	}
	if wait := l.full(emailKey, l.cfg.PerEmail, now); wait > 0 {
		return false, wait
	}
	l.events[ipKey] = append(l.events[ipKey], now)
	return true, 0
}

// Fail records a failed sign-in for email.
func (l *Limiter) Fail(email string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := "email\x00" + email
	l.events[key] = append(l.events[key], l.cfg.Now())
}

// Succeed forgets the failures of email after a successful sign-in.
func (l *Limiter) Succeed(email string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.events, "email\x00"+email)
}

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
}
