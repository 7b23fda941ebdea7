package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
)

// TestUpdatesSupersedeQueuedSynthesis: many changes to one unprocessed
// audio leave one synthesis job waiting, for its latest revision; a job
// already running is left alone.
func TestUpdatesSupersedeQueuedSynthesis(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for i := range 200 {
			body := fmt.Sprintf("Hello, number %d.", i)
			if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: &body}); err != nil {
				t.Fatal(err)
			}
		}
		var waiting []jobRow
		for _, j := range b.river.jobs(t) {
			if j.Kind == (narrator.SynthesizeJob{}).JobKind() {
				waiting = append(waiting, j)
			}
		}
		if len(waiting) != 1 {
			t.Fatalf("%d synthesis jobs after 200 updates, want 1", len(waiting))
		}
		var args jobs.SynthesizeArgs
		if err := json.Unmarshal(waiting[0].Args, &args); err != nil {
			t.Fatal(err)
		}
		if want := b.find(t).Revision; args.Revision != want || args.AudioID != b.audio.ID {
			t.Errorf("the job's args %+v, want the audio's latest revision %d", args, want)
		}
		// A running job stays: the next update adds one beside it.
		if n := b.river.markRunning(t); n != 1 {
			t.Fatalf("%d jobs marked running, want 1", n)
		}
		body := "Once more."
		if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatal(err)
		}
		states := map[string]int{}
		for _, j := range b.river.jobs(t) {
			if j.Kind == (narrator.SynthesizeJob{}).JobKind() {
				states[j.State]++
			}
		}
		if states["running"] != 1 || states["available"] != 1 {
			t.Errorf("synthesis jobs by state %v, want one running and one available", states)
		}
	})
}

// racingStore is a store whose LeaseSynthesis first calls before: a
// change that lands between a job's read of its audio and its lease.
type racingStore struct {
	jobs.Store
	before func()
}

func (s racingStore) LeaseSynthesis(ctx context.Context, audioID int64, revision int, holder string, until time.Time) (bool, error) {
	s.before()
	return s.Store.LeaseSynthesis(ctx, audioID, revision, holder, until)
}

// TestFloodLeavesOneSynthesis: a flood of updates to one audio, while the
// queue's workers run, leaves no synthesis job waiting at a stale
// revision, and at most one in all: a job that finds its audio changed as
// it takes the lease ends, where it was put back in the queue before
// (snoozed), out of the reach of the next update's supersede.
func TestFloodLeavesOneSynthesis(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		var updates atomic.Int32
		update := func() {
			body := fmt.Sprintf("Hello, number %d.", updates.Add(1))
			if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: &body}); err != nil {
				t.Error(err)
			}
		}
		// The first jobs each meet an update between their read and their
		// lease.
		var raced atomic.Int32
		b.worker = jobs.NewSynthesizeWorker(racingStore{b.store, func() {
			if raced.Add(1) <= 10 {
				update()
			}
		}}, b.render, b.media, jobs.SynthesizeConfig{})
		if err := b.queue.Start(ctx, b.workers()); err != nil {
			t.Fatal(err)
		}
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				if err := b.queue.Stop(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}
		t.Cleanup(stop)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 50 {
					update()
				}
			})
		}
		wg.Wait()
		for raced.Load() < 10 {
			runtime.Gosched()
		}
		// Stopping waits for the running jobs and records how they ended.
		stop()
		revision := b.find(t).Revision
		var waiting []string
		for _, j := range b.river.jobs(t) {
			if j.Kind != (narrator.SynthesizeJob{}).JobKind() || j.State == "completed" || j.State == "cancelled" || j.State == "discarded" {
				continue
			}
			var args jobs.SynthesizeArgs
			if err := json.Unmarshal(j.Args, &args); err != nil {
				t.Fatal(err)
			}
			if args.Revision != revision {
				t.Errorf("a %s synthesis job at revision %d, the audio at %d", j.State, args.Revision, revision)
			}
			waiting = append(waiting, j.State)
		}
		if len(waiting) > 1 {
			t.Errorf("synthesis jobs left %v, want at most one", waiting)
		}
	})
}

// TestFloodLeavesOneJobPerDelivery: 600 concurrent updates of one audio
// whose project has an endpoint leave one synthesis job, for the latest
// revision, and one webhook job for each delivery still pending: the
// deliveries that the endpoint's cap collapsed (narrator.PendingRoom)
// take their waiting jobs with them, where those jobs stayed queued
// before, to find nothing to do.
func TestFloodLeavesOneJobPerDelivery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		h := b.mustHook(t, "http://127.0.0.1:1/hook")
		var updates atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 150 {
					body := fmt.Sprintf("Hello, number %d.", updates.Add(1))
					if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: &body}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		ds, err := b.store.ListDeliveries(ctx, h.ProjectID, h.ID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var pending []int64
		for _, d := range ds {
			if d.State == narrator.DeliveryPending {
				pending = append(pending, d.ID)
			}
		}
		if len(pending) != narrator.MaxPendingDeliveries {
			t.Errorf("%d deliveries pending, want %d", len(pending), narrator.MaxPendingDeliveries)
		}
		var queued []int64
		var syntheses []jobs.SynthesizeArgs
		for _, j := range b.river.jobs(t) {
			switch j.Kind {
			case jobs.WebhookArgs{}.Kind():
				var args jobs.WebhookArgs
				if err := json.Unmarshal(j.Args, &args); err != nil {
					t.Fatal(err)
				}
				queued = append(queued, args.DeliveryID)
			case jobs.SynthesizeArgs{}.Kind():
				var args jobs.SynthesizeArgs
				if err := json.Unmarshal(j.Args, &args); err != nil {
					t.Fatal(err)
				}
				syntheses = append(syntheses, args)
			}
		}
		slices.Sort(pending)
		slices.Sort(queued)
		if len(queued) != len(pending) {
			t.Errorf("%d webhook jobs for %d pending deliveries", len(queued), len(pending))
		} else if diff := cmp.Diff(pending, queued); diff != "" {
			t.Errorf("webhook jobs' deliveries (-pending +queued):\n%s", diff)
		}
		want := []jobs.SynthesizeArgs{{AudioID: b.audio.ID, Revision: b.find(t).Revision}}
		if diff := cmp.Diff(want, syntheses); diff != "" {
			t.Errorf("synthesis jobs (-want +got):\n%s", diff)
		}
	})
}

// onMessage is a log handler that calls do, once, as a record with the
// given message is logged.
type onMessage struct {
	msg  string
	once sync.Once
	do   func()
}

func (h *onMessage) Enabled(context.Context, slog.Level) bool { return true }

func (h *onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(h.do)
	}
	return nil
}

func (h *onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *onMessage) WithGroup(string) slog.Handler { return h }

// TestLeaseWaitLeavesNoStaleJob: a job that finds another attempt holding
// its revision's lease tries again later; an update that lands once it
// has decided so, before the queue records how it ended, leaves no job
// for the old revision. The job was put back in the queue (snoozed) as it
// ended, after the update had removed the waiting jobs, and stayed there
// beside the update's own.
func TestLeaseWaitLeavesNoStaleJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if ok, err := b.store.LeaseSynthesis(ctx, b.audio.ID, b.audio.Revision, "another node", time.Now().Add(time.Hour)); err != nil || !ok {
			t.Fatalf("lease: %v, %v", ok, err)
		}
		updated := make(chan struct{})
		hook := &onMessage{msg: "another attempt holds this audio; waiting for its lease", do: func() {
			body := "Changed as the job waits."
			if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: &body}); err != nil {
				t.Error(err)
			}
			close(updated)
		}}
		b.worker = jobs.NewSynthesizeWorker(b.store, b.render, b.media, jobs.SynthesizeConfig{Logger: slog.New(hook)})
		rendered := make(chan struct{})
		b.render.start = func(*narrator.Audio) { close(rendered) }
		if err := b.queue.Start(ctx, b.workers()); err != nil {
			t.Fatal(err)
		}
		<-updated
		// The update's own job renders the new revision: the old one's
		// lease does not hold it back.
		<-rendered
		// Stopping waits for the running jobs and records how they ended.
		if err := b.queue.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		revision := b.find(t).Revision
		for _, j := range b.river.jobs(t) {
			if j.Kind != (narrator.SynthesizeJob{}).JobKind() || j.State == "completed" {
				continue
			}
			var args jobs.SynthesizeArgs
			if err := json.Unmarshal(j.Args, &args); err != nil {
				t.Fatal(err)
			}
			t.Errorf("a %s synthesis job at revision %d, the audio at %d", j.State, args.Revision, revision)
		}
	})
}
