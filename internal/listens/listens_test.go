package listens_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/listens"
)

// memStore keeps the batches it is given; it fails the calls it is told
// to, and tells written of each call that succeeded.
type memStore struct {
	mu      sync.Mutex
	fail    int
	batches [][]narrator.ListenTally
	written chan struct{}
}

func (s *memStore) RecordListens(_ context.Context, tallies []narrator.ListenTally) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return errors.New("disk full")
	}
	s.batches = append(s.batches, tallies)
	if s.written != nil {
		s.written <- struct{}{}
	}
	return nil
}

// total sums the counts written per event.
func (s *memStore) total() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for _, b := range s.batches {
		for _, t := range b {
			out[t.Event] += t.Count
		}
	}
	return out
}

func TestWindow(t *testing.T) {
	t.Parallel()
	st := &memStore{}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := listens.New(listens.Config{Store: st, Interval: 24 * time.Hour, Window: 10 * time.Minute, PerClient: 3, Now: func() time.Time { return now }})
	count := func(client, event string) error { return c.Count(client, 1, 2, event) }
	for range 3 {
		if err := count("a", narrator.ListenComplete); err != nil {
			t.Fatal(err)
		}
	}
	if err := count("a", narrator.ListenPlay); narrator.ErrorCode(err) != narrator.ERATELIMITED {
		t.Errorf("over the budget: %v, want %s", err, narrator.ERATELIMITED)
	}
	if err := count("a", "pause"); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("unknown event: %v, want %s", err, narrator.EINVALID)
	}
	now = now.Add(10 * time.Minute) // a new window: a new budget, and a complete counts again
	if err := count("a", narrator.ListenComplete); err != nil {
		t.Errorf("in a new window: %v", err)
	}
	c.Close()
	if diff := cmp.Diff(map[string]int64{narrator.ListenComplete: 2}, st.total()); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	if len(st.batches) != 1 {
		t.Errorf("%d writes, want 1 at close", len(st.batches))
	}
}

func TestMaxTallies(t *testing.T) {
	t.Parallel()
	st := &memStore{}
	c := listens.New(listens.Config{Store: st, Interval: 24 * time.Hour, MaxTallies: 2})
	for id := int64(1); id <= 2; id++ {
		if err := c.Count("a", 1, id, narrator.ListenPlay); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Count("a", 1, 3, narrator.ListenPlay); narrator.ErrorCode(err) != narrator.ERATELIMITED {
		t.Errorf("a third pair past MaxTallies: %v, want %s", err, narrator.ERATELIMITED)
	}
	if err := c.Count("b", 1, 2, narrator.ListenPlay); err != nil {
		t.Errorf("a pair already held: %v", err)
	}
	c.Close()
	if diff := cmp.Diff(map[string]int64{narrator.ListenPlay: 3}, st.total()); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
}

// TestFailedWriteKept: the counts of a failed write go with the next.
func TestFailedWriteKept(t *testing.T) {
	t.Parallel()
	st := &memStore{fail: 1, written: make(chan struct{}, 1)}
	c := listens.New(listens.Config{Store: st, Interval: time.Millisecond})
	defer c.Close()
	if err := c.Count("a", 1, 2, narrator.ListenLoad); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.written:
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	}
	if diff := cmp.Diff(map[string]int64{narrator.ListenLoad: 1}, st.total()); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
}
