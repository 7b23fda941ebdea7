package sqlstore

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupRunsEachCallOnce runs many calls at once: each is run exactly
// once, no two groups run at the same time, and no group exceeds Max.
func TestGroupRunsEachCallOnce(t *testing.T) {
	t.Parallel()
	const n = 500
	g := &Group[*int]{Max: 7}
	var running, groups atomic.Int32
	ran := make([]atomic.Int32, n)
	run := func(group []*int, _ func() []*int) {
		if running.Add(1) != 1 {
			t.Error("two groups run at once")
		}
		if len(group) == 0 || len(group) > 7 {
			t.Errorf("group of %d calls", len(group))
		}
		groups.Add(1)
		for _, i := range group {
			ran[*i].Add(1)
		}
		running.Add(-1)
	}
	doAll(t, g, n, run, func(i int) {
		if got := ran[i].Load(); got != 1 {
			t.Errorf("call %d returned after %d runs, want 1", i, got)
		}
	})
	if groups.Load() > n {
		t.Errorf("%d groups for %d calls", groups.Load(), n)
	}
}

// TestGroupPanic checks that a panicking run fails its group's other calls
// with ErrGroupFailed, panics in its leader, and leaves the line working.
func TestGroupPanic(t *testing.T) {
	t.Parallel()
	g := &Group[string]{}
	var wg sync.WaitGroup
	release := make(chan struct{})
	entered := make(chan struct{})
	// The first call holds the line until the others have queued.
	wg.Go(func() {
		_ = g.Do("hold", func([]string, func() []string) {
			close(entered)
			<-release
		})
	})
	<-entered
	errs := make(chan error, 3)
	panics := make(chan any, 3)
	for range 3 {
		wg.Go(func() {
			defer func() { panics <- recover() }()
			errs <- g.Do("boom", func([]string, func() []string) { panic("boom") })
		})
	}
	// Wait until all three are in line behind the first group.
	for {
		g.mu.Lock()
		n := len(g.pending)
		g.mu.Unlock()
		if n == 3 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	close(errs)
	close(panics)
	var failed, panicked int
	for err := range errs {
		if !errors.Is(err, ErrGroupFailed) {
			t.Errorf("Do = %v, want ErrGroupFailed", err)
		}
		failed++
	}
	for p := range panics {
		if p != nil {
			panicked++
		}
	}
	if failed != 2 || panicked != 1 {
		t.Errorf("%d calls failed and %d panicked, want 2 and 1", failed, panicked)
	}
	if err := g.Do("after", func([]string, func() []string) {}); err != nil {
		t.Errorf("Do after a panic = %v", err)
	}
}

// TestGroupMore runs calls whose groups grow while they run: every call is
// run exactly once, by the group that took it first or by more, no group
// exceeds Max, and no call returns before the group holding it has run.
func TestGroupMore(t *testing.T) {
	t.Parallel()
	const n = 400
	g := &Group[*int]{Max: 9}
	ran := make([]atomic.Int32, n)
	finished := make([]atomic.Bool, n)
	var running, grown atomic.Int32
	run := func(group []*int, more func() []*int) {
		if running.Add(1) != 1 {
			t.Error("two groups run at once")
		}
		for i := 0; ; i++ {
			if i == len(group) {
				// Give callers a moment to join, as a transaction's work does.
				runtime.Gosched()
				got := more()
				if len(got) == 0 {
					break
				}
				grown.Add(1)
				group = append(group, got...)
			}
			if len(group) > 9 {
				t.Errorf("group of %d calls, Max 9", len(group))
			}
			ran[*group[i]].Add(1)
		}
		for _, i := range group {
			finished[*i].Store(true)
		}
		running.Add(-1)
	}
	doAll(t, g, n, run, func(i int) {
		if got := ran[i].Load(); got != 1 || !finished[i].Load() {
			t.Errorf("call %d returned after %d runs, its group finished %v", i, got, finished[i].Load())
		}
	})
	if grown.Load() == 0 {
		t.Log("no group grew: the callers never overlapped")
	}
}

// TestGroupMorePanic checks that calls taken by more into a group whose
// run panics fail with ErrGroupFailed, and the line goes on.
func TestGroupMorePanic(t *testing.T) {
	t.Parallel()
	g := &Group[string]{}
	joined := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Go(func() {
		defer func() {
			if recover() == nil {
				t.Error("the leader did not panic")
			}
		}()
		_ = g.Do("lead", func(_ []string, more func() []string) {
			<-joined
			for len(more()) == 0 {
				runtime.Gosched()
			}
			panic("boom")
		})
	})
	wg.Go(func() {
		// Joins the line behind the leader, who takes it by more.
		for {
			g.mu.Lock()
			busy := g.busy
			g.mu.Unlock()
			if busy {
				break
			}
			runtime.Gosched()
		}
		go func() {
			for {
				g.mu.Lock()
				n := len(g.pending)
				g.mu.Unlock()
				if n == 1 {
					close(joined)
					return
				}
				runtime.Gosched()
			}
		}()
		errs <- g.Do("joined", func([]string, func() []string) { t.Error("a call taken by more led a group") })
	})
	wg.Wait()
	if err := <-errs; !errors.Is(err, ErrGroupFailed) {
		t.Errorf("the call taken by more = %v, want ErrGroupFailed", err)
	}
	if err := g.Do("after", func([]string, func() []string) {}); err != nil {
		t.Errorf("Do after a panic = %v", err)
	}
}

// TestGroupDoContextLeaves: a call whose context ends while it waits in
// line returns at once and is never run; the call behind it still runs,
// whether or not the leaving call had been woken to lead the next group.
func TestGroupDoContextLeaves(t *testing.T) {
	t.Parallel()
	for range 200 {
		g := &Group[string]{}
		release, entered := make(chan struct{}), make(chan struct{})
		var ran sync.Map
		run := func(group []string, _ func() []string) {
			for _, r := range group {
				ran.Store(r, true)
			}
		}
		done := make(chan error, 3)
		go func() {
			done <- g.Do("hold", func(group []string, more func() []string) {
				close(entered)
				<-release
				run(group, more)
			})
		}()
		<-entered
		ctx, cancel := context.WithCancel(t.Context())
		left := make(chan error, 1)
		go func() { left <- g.DoContext(ctx, "leaves", run) }()
		for g.Waiting() < 1 {
			runtime.Gosched()
		}
		go func() { done <- g.Do("stays", run) }()
		for g.Waiting() < 2 {
			runtime.Gosched()
		}
		// The first in line leaves as the line moves on to it.
		cancel()
		close(release)
		err := <-left
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("the leaving call: %v", err)
		}
		for range 2 {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a call still waits 10 s after the line moved on")
			}
		}
		if _, ok := ran.Load("stays"); !ok {
			t.Fatal("the call behind the leaving one returned without being run")
		}
		if _, ok := ran.Load("leaves"); ok && err != nil {
			t.Fatal("the leaving call was run after it returned its context's error")
		}
	}
}

// doAll makes the calls 0 to n-1 of g at once, each run by run, and
// checks each with check once it has returned.
func doAll(t *testing.T, g *Group[*int], n int, run func([]*int, func() []*int), check func(i int)) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := g.Do(&i, run); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			check(i)
		})
	}
	wg.Wait()
}
