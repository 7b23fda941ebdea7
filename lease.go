package narrator

import "time"

// SynthesisLease is the lease of the job attempt that is synthesising an
// audio. A second delivery of the same job (River rescues jobs whose node
// seems dead) waits while the lease is held and renewed, so that one node
// does the work. The zero value is no lease.
type SynthesisLease struct {
	Holder   string // the attempt holding it; "" when none
	Revision int    // the revision it is synthesising
	Until    time.Time
}

// AwaitsRevision reports whether a synthesis job of revision has work to
// do on a: a awaits synthesis (AwaitsSynthesis) at that revision. A job
// for which it is false ends and leaves nothing behind.
func (a *Audio) AwaitsRevision(revision int) bool {
	return a.AwaitsSynthesis() && a.Revision == revision
}

// PlanLease reports whether holder may take, or renew, the lease on
// synthesising the given revision of a, as stored with its current lease
// cur, at time now, until a later time. It may if a is live and at that
// revision, and cur is free, ran out, is holder's own, or is on another
// revision: a lease on an older revision never blocks a newer one. When it
// may not, stores change nothing.
func PlanLease(a *Audio, cur SynthesisLease, holder string, revision int, now time.Time) bool {
	if a.Deleted || a.Revision != revision {
		return false
	}
	return cur.Holder == "" || !cur.Until.After(now) || cur.Holder == holder || cur.Revision != revision
}
