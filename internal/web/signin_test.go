package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/web"
)

// TestSignInLimitRace sends 500 wrong passwords for one email at once to a
// real server: no more of them than the limit may reach bcrypt, because
// each attempt is reserved, atomically with the limit check, before the
// password is checked.
func TestSignInLimitRace(t *testing.T) {
	t.Parallel()
	const limit, attempts = 5, 500
	var checks atomic.Int64
	b := setup(t, func(d *web.Deps) {
		d.Limiter = web.NewLimiter(web.LimiterConfig{Store: d.Store, PerPair: limit, PerIP: 1000, Window: time.Hour})
		d.PasswordChecks = attempts
		d.ComparePasswordFunc = func(hash, pw []byte) error {
			checks.Add(1)
			return bcrypt.CompareHashAndPassword(hash, pw)
		}
	})
	c := b.browser(t)
	tok := c.csrf("/signin")
	form := url.Values{"csrf_token": {tok}, "email": {"ed@acme.test"}, "password": {"wrong password"}}.Encode()
	statuses := make([]int, attempts)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range attempts {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(t.Context(), "POST", b.srv.URL+"/signin", strings.NewReader(form))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			<-start
			res, err := c.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
		})
	}
	close(start)
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if n := checks.Load(); n > limit {
		t.Errorf("%d of %d concurrent attempts reached bcrypt; the limit is %d (statuses %v)", n, attempts, limit, counts)
	}
	if counts[http.StatusUnauthorized] > limit || counts[http.StatusUnauthorized]+counts[http.StatusTooManyRequests] != attempts {
		t.Errorf("statuses %v: want at most %d 401s and 429s for the rest", counts, limit)
	}
}

// TestSignInChecksBounded fills the one password check allowed at a time:
// another sign-in gets a 503 page at once instead of queueing.
func TestSignInChecksBounded(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	b := setup(t, func(d *web.Deps) {
		d.PasswordChecks = 1
		d.ComparePasswordFunc = func(hash, pw []byte) error {
			if string(pw) == "slow" {
				close(entered)
				<-release
			}
			return bcrypt.CompareHashAndPassword(hash, pw)
		}
	})
	slow := make(chan response, 1)
	c := b.browser(t)
	tok := c.csrf("/signin")
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", b.srv.URL+"/signin",
			strings.NewReader(url.Values{"csrf_token": {tok}, "email": {"ed@acme.test"}, "password": {"slow"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := c.client.Do(req)
		if err != nil {
			t.Error(err)
			slow <- response{}
			return
		}
		res.Body.Close()
		slow <- response{Response: res}
	}()
	<-entered
	res := b.browser(t).signIn("ed@acme.test", testPassword)
	wantStatus(t, res, http.StatusServiceUnavailable)
	if !strings.Contains(res.body, "busy checking other sign-ins") || res.Header.Get("Retry-After") == "" {
		t.Errorf("busy page: %v\n%s", res.Header, res.body)
	}
	close(release)
	if r := <-slow; r.Response == nil || r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the slow wrong password: %+v", r.Response)
	}
	wantStatus(t, b.browser(t).signIn("ed@acme.test", testPassword), http.StatusSeeOther)
}

// signInFrom signs in as a browser behind a proxy that names the client
// with X-Forwarded-For.
func (c *browser) signInFrom(xff, email, password string) response {
	c.t.Helper()
	tok := c.csrf("/signin")
	req, err := http.NewRequestWithContext(c.t.Context(), "POST", c.base+"/signin",
		strings.NewReader(url.Values{"csrf_token": {tok}, "email": {email}, "password": {password}}.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", xff)
	return c.do(req)
}

// TestSignInStrangerCannotLockOut: a stranger guessing a known user's
// password from one address locks only that address out for that user;
// the user signs in from elsewhere. Guessing spread over many addresses
// locks the user out only for a window. X-Forwarded-For is read only from
// a trusted proxy, from the right.
func TestSignInStrangerCannotLockOut(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	b := setup(t, func(d *web.Deps) {
		d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
		d.Limiter = web.NewLimiter(web.LimiterConfig{Store: d.Store, PerPair: 3, PerIP: 5, PerEmail: 8, Window: time.Minute,
			Now: func() time.Time { return *clock.Load() }})
	})
	stranger, user := b.browser(t), b.browser(t)
	for i := range 3 {
		wantStatus(t, stranger.signInFrom("203.0.113.9", "ed@acme.test", fmt.Sprint("guess ", i)), http.StatusUnauthorized)
	}
	wantStatus(t, stranger.signInFrom("203.0.113.9", "ed@acme.test", testPassword), http.StatusTooManyRequests)
	// Forged hops left of the proxy's own are ignored; trusted hops on the
	// right are skipped.
	wantStatus(t, stranger.signInFrom("198.51.100.7, 203.0.113.9, 10.1.2.3", "ed@acme.test", testPassword), http.StatusTooManyRequests)
	// The user, elsewhere, is not locked out.
	wantStatus(t, user.signInFrom("198.51.100.7", "ed@acme.test", testPassword), http.StatusSeeOther)

	// Guessing from many addresses reaches the email's own limit, 8.
	for i := range 5 {
		wantStatus(t, stranger.signInFrom(fmt.Sprintf("192.0.2.%d", i+1), "ed@acme.test", "guess"), http.StatusUnauthorized)
	}
	wantStatus(t, b.browser(t).signInFrom("198.51.100.7", "ed@acme.test", testPassword), http.StatusTooManyRequests)
	// It is never for good: a window later the user is back.
	later := now.Add(time.Minute)
	clock.Store(&later)
	wantStatus(t, b.browser(t).signInFrom("198.51.100.7", "ed@acme.test", testPassword), http.StatusSeeOther)
}

// TestSignInForwardedForUntrusted: without trusted proxies, a client
// cannot pick its address by sending X-Forwarded-For.
func TestSignInForwardedForUntrusted(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) {
		d.Limiter = web.NewLimiter(web.LimiterConfig{Store: d.Store, PerPair: 2, Window: time.Minute})
	})
	c := b.browser(t)
	for i := range 2 {
		wantStatus(t, c.signInFrom(fmt.Sprintf("192.0.2.%d", i), "ed@acme.test", "wrong"), http.StatusUnauthorized)
	}
	wantStatus(t, c.signInFrom("192.0.2.99", "ed@acme.test", testPassword), http.StatusTooManyRequests)
}

// TestSignInIPv6Grouped: the per-address limits count an IPv6 client by
// its /64, so that a host cannot take a fresh address of its /64 for every
// guess; another /64 is another client.
func TestSignInIPv6Grouped(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) {
		d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		d.Limiter = web.NewLimiter(web.LimiterConfig{Store: d.Store, PerPair: 3, PerIP: 100, Window: time.Minute})
	})
	c := b.browser(t)
	for i := range 3 {
		wantStatus(t, c.signInFrom(fmt.Sprintf("2001:db8:1:2::%x", i+1), "ed@acme.test", "wrong"), http.StatusUnauthorized)
	}
	wantStatus(t, c.signInFrom("2001:db8:1:2:ffff::9", "ed@acme.test", testPassword), http.StatusTooManyRequests)
	wantStatus(t, c.signInFrom("2001:db8:1:3::1", "ed@acme.test", testPassword), http.StatusSeeOther)
}

// slowAttempts is a sign-in store whose reservations wait for release
// when the gate is shut.
type slowAttempts struct {
	web.Attempts
	gate    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *slowAttempts) ReserveSignInAttempt(ctx context.Context, attempt string, limits []narrator.SignInLimit, at time.Time) (*narrator.SignInRefusal, error) {
	if s.gate.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.release
	}
	return s.Attempts.ReserveSignInAttempt(ctx, attempt, limits, at)
}

// TestSignInSlotAfterReservation: a sign-in waiting on the limiter's write
// does not hold the one password check allowed at a time, so another
// sign-in is checked meanwhile rather than told the server is busy.
func TestSignInSlotAfterReservation(t *testing.T) {
	t.Parallel()
	slow := &slowAttempts{entered: make(chan struct{}), release: make(chan struct{})}
	b := setup(t, func(d *web.Deps) {
		slow.Attempts = d.Store
		d.Limiter = web.NewLimiter(web.LimiterConfig{Store: slow})
		d.PasswordChecks = 1
	})
	waiting := b.browser(t)
	tok := waiting.csrf("/signin")
	done := make(chan int, 1)
	slow.gate.Store(true)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", b.srv.URL+"/signin",
			strings.NewReader(url.Values{"csrf_token": {tok}, "email": {"ed@acme.test"}, "password": {testPassword}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := waiting.client.Do(req)
		if err != nil {
			t.Error(err)
			done <- 0
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}()
	<-slow.entered
	res := b.browser(t).signIn("ed@acme.test", testPassword)
	close(slow.release)
	wantStatus(t, res, http.StatusSeeOther)
	if got := <-done; got != http.StatusSeeOther {
		t.Fatalf("the sign-in that waited on the limiter: %d", got)
	}
}

// TestSignInFormCapped: a sign-in form has three short fields; a body
// over 8 KiB is refused before anything else is done with it.
func TestSignInFormCapped(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c := b.browser(t)
	tok := c.csrf("/signin")
	res := c.post("/signin", url.Values{"csrf_token": {tok}, "email": {"ed@acme.test"}, "password": {testPassword},
		"padding": {strings.Repeat("x", 9<<10)}})
	wantStatus(t, res, http.StatusRequestEntityTooLarge)
}
