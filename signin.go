package narrator

import "time"

// SignInLimit is one limit on dashboard sign-in attempts: at most Max
// attempts may be recorded under Key in the Window before an attempt. An
// attempt is recorded before its password is checked and forgotten only
// when it succeeds, so the attempts counted are the failed ones and those
// under way. Old attempts leave the window one by one: no limit locks
// anyone out for longer than its window after the last attempt.
type SignInLimit struct {
	Key    string
	Max    int
	Window time.Duration
}

// Wait returns how long an attempt at now must wait under l, given the
// times of Key's attempts at or after now minus Window, newest first, at
// most Max of them (more are ignored): zero if it may proceed. The oldest
// of the last Max attempts leaving the window makes room for the next.
func (l SignInLimit) Wait(now time.Time, recent []time.Time) time.Duration {
	if l.Max <= 0 || len(recent) < l.Max {
		return 0
	}
	wait := l.Window - now.Sub(recent[l.Max-1])
	if wait < 0 {
		return 0
	}
	return wait
}

// SignInRefusal says why a sign-in attempt was refused.
type SignInRefusal struct {
	// Limit is the index of the full limit in the list checked.
	Limit int
	// Wait is how long until an attempt may be made again.
	Wait time.Duration
}

// CheckSignInLimits returns the first limit whose recent attempts (by
// limit, as in SignInLimit.Wait) leave no room for an attempt at now, or
// nil if the attempt may proceed. Both stores call it inside the
// transaction that then records the attempt.
func CheckSignInLimits(limits []SignInLimit, now time.Time, recent [][]time.Time) *SignInRefusal {
	for i, l := range limits {
		if wait := l.Wait(now, recent[i]); wait > 0 {
			return &SignInRefusal{Limit: i, Wait: wait}
		}
	}
	return nil
}
