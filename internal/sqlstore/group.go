package sqlstore

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
)

// ErrGroupFailed is what Group.Do returns to the calls of a group whose
// run panicked; the panic itself goes on in the caller that led it.
var ErrGroupFailed = errors.New("the group's run failed")

// Group runs calls in groups, for group commit: a call that finds no group
// under way leads one, which runs every call waiting, up to Max, at once;
// calls that arrive meanwhile wait in line, and the first of them leads
// the next group once the current one has run. A store's concurrent writes
// then share one transaction and one commit. The zero Group is ready, with
// no cap.
type Group[R any] struct {
	// Max caps the calls of one group; 0 means no cap.
	Max int

	mu      sync.Mutex
	pending []*groupCall[R]
	busy    bool
}

// groupCall is one call of Do waiting for or in a group.
type groupCall[R any] struct {
	req R
	// done and err are the outcome, set before wake is closed.
	done bool
	err  error
	// wake is closed once: when another caller's group has run the call,
	// or when the call is first in line and is to lead the next group.
	wake chan struct{}
	// next is set, with g.mu held, when the call is woken to lead.
	next bool
}

// Do puts req in line and returns once a group holding it has run: run
// takes the group's requests, in the order they came, and is called by
// one of the callers, never by two at once. run sets each request's
// outcome in the request itself. While it works, run may call more to
// take into its group the requests that have come since (up to Max in
// all), which it then runs too; more returns them, none if none waits. If
// run panics, Do returns ErrGroupFailed to the group's other callers, the
// next group still runs, and the panic goes on in the caller that led. Do
// waits without a context: the request may be in a group being committed.
func (g *Group[R]) Do(req R, run func(group []R, more func() []R)) error {
	return g.DoContext(context.Background(), req, run)
}

// DoContext is Do for a request that may be given up, a read's: when ctx
// ends before the request's group has run, DoContext returns ctx's error
// at once. A request still in line leaves it (and hands the lead on, if it
// was next to lead); one already taken into a group may still be run,
// and its outcome is then set in the request after DoContext has
// returned, so the caller must not read it. A call that leads runs its
// group whatever ctx does: run sees its own requests' contexts.
func (g *Group[R]) DoContext(ctx context.Context, req R, run func(group []R, more func() []R)) error {
	c := &groupCall[R]{req: req, wake: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead {
		select {
		case <-c.wake:
		case <-ctx.Done():
			g.leave(c)
			return ctx.Err()
		}
	}
	if !c.done {
		// The caller is first in line: it leads, and its call is the
		// group's first.
		g.lead(run)
	}
	return c.err
}

// leave takes c out of the line if it is still in it, and hands the lead
// on if c was to lead the next group.
func (g *Group[R]) leave(c *groupCall[R]) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.pending, c)
	if i < 0 {
		return // in a group already
	}
	g.pending = slices.Delete(g.pending, i, i+1)
	if c.next {
		g.handOver()
	}
}

// handOver wakes the first call in line to lead the next group, or marks
// the line idle if none waits, and reports whether it woke one. g.mu is
// held.
func (g *Group[R]) handOver() bool {
	if len(g.pending) == 0 {
		g.busy = false
		return false
	}
	next := g.pending[0]
	next.next = true
	close(next.wake)
	return true
}

// Waiting returns how many calls wait in line for a group.
func (g *Group[R]) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// take moves calls from the head of the line to the end of calls, as many
// as wait and the group may still hold, and returns their requests.
func (g *Group[R]) take(calls *[]*groupCall[R]) []R {
	g.mu.Lock()
	n := len(g.pending)
	if g.Max > 0 {
		n = min(n, g.Max-len(*calls))
	}
	taken := g.pending[:n:n]
	g.pending = g.pending[n:]
	g.mu.Unlock()
	*calls = append(*calls, taken...)
	reqs := make([]R, n)
	for i, c := range taken {
		reqs[i] = c.req
	}
	return reqs
}

// lead runs the group at the head of the line, then answers its callers
// and wakes the next in line, even if run panics, so that the line never
// stalls. If it woke a next leader, it then yields its processor: Go's
// scheduler (as of Go 1.26; a heuristic, not a promise) runs the goroutine
// woken last next, the next leader, so that the next group starts before
// this caller writes its answer: the line runs one group at a time,
// and callers wait on it, not on the processor. Without the yield the next
// group started about 270 µs after the last had ended, on this 2-core
// machine under bench/creates.sh; with it, 25 µs (docs/figures.md).
func (g *Group[R]) lead(run func(group []R, more func() []R)) {
	var calls []*groupCall[R]
	ran := false
	defer func() {
		for _, c := range calls {
			c.done = true
			if !ran {
				c.err = ErrGroupFailed
			}
		}
		// calls[0] is the leader, which reads its outcome without waiting.
		for _, c := range calls[1:] {
			close(c.wake)
		}
		g.mu.Lock()
		woke := g.handOver()
		g.mu.Unlock()
		if woke {
			runtime.Gosched()
		}
	}()
	reqs := g.take(&calls)
	run(reqs, func() []R { return g.take(&calls) })
	ran = true
}
