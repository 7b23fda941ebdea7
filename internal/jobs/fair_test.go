package jobs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// TestFairScheduling: account A queues a backlog of long articles, then
// account B queues a short one. B's starts after at most one more of A's:
// synthesis takes accounts in turn, through River's own fetch, on either
// database. The renderer holds each synthesis until the test lets one go,
// so the order of starts is what is checked, not time.
func TestFairScheduling(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		long := strings.Repeat("A long sentence of a long article. ", 500)
		for i := range 8 {
			a := &narrator.Audio{ProjectID: b.audio.ProjectID, Body: long, ExternalID: fmt.Sprintf("long-%d", i)}
			if _, err := b.store.CreateAudio(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		started := make(chan int64, 32)
		release := make(chan struct{})
		b.render.start = func(a *narrator.Audio) {
			started <- a.ID
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		if err := b.queue.Start(ctx, b.workers()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.queue.Stop(context.Background()) })
		next := func() int64 {
			t.Helper()
			select {
			case id := <-started:
				return id
			case <-time.After(30 * time.Second):
				t.Fatal("no synthesis started")
				return 0
			}
		}
		// Both synthesis workers take one of A's audios.
		next()
		next()

		short := b.queueShortOfNewAccount(t)
		var before int // A's audios started after B queued, before B's
		for {
			release <- struct{}{}
			if next() == short.ID {
				break
			}
			before++
		}
		if before > 1 {
			t.Errorf("%d of account A's audios started after B queued and before B's; want at most 1", before)
		}
		close(release)
	})
}

// TestFairRoundFromHead: a new account's job is placed at the round of the
// job River takes next, read from River's table in the create's
// transaction: right after that job, before the rest of the backlog.
func TestFairRoundFromHead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		var backlog []*narrator.Audio
		for i := range 3 {
			a := &narrator.Audio{ProjectID: b.audio.ProjectID, Body: "Backlog.", ExternalID: fmt.Sprintf("backlog-%d", i)}
			if _, err := b.store.CreateAudio(ctx, a); err != nil {
				t.Fatal(err)
			}
			backlog = append(backlog, a)
		}
		// The first of A's four jobs is taken: the head is the second.
		b.river.exec(t, `UPDATE river_job SET state = 'running' WHERE id = (SELECT min(id) FROM river_job)`)
		short := b.queueShortOfNewAccount(t)
		var got []int
		for _, id := range []int64{backlog[0].ID, short.ID, backlog[1].ID, backlog[2].ID} {
			pos, ok, err := b.queue.SynthesisQueuePosition(ctx, id)
			if err != nil || !ok {
				t.Fatalf("position of audio %d: %d, %t, %v", id, pos, ok, err)
			}
			got = append(got, pos)
		}
		if want := []int{1, 2, 3, 4}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("queue positions of A's second job, B's, A's third and fourth: %v, want %v", got, want)
		}
	})
}

// TestStartedJobKeepsItsPlace: a job that started once and comes back
// (here made due again as a retry would be, at the present time) runs
// before new jobs, though every new job's round lies before the present:
// a retry is never starved by a steady stream of creates.
func TestStartedJobKeepsItsPlace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for i := range 3 {
			a := &narrator.Audio{ProjectID: b.audio.ProjectID, Body: "Backlog.", ExternalID: fmt.Sprintf("backlog-%d", i)}
			if _, err := b.store.CreateAudio(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		started := make(chan int64, 8)
		b.render.start = func(a *narrator.Audio) {
			started <- a.ID
			<-ctx.Done()
		}
		if err := b.queue.Start(ctx, b.workers()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.queue.Stop(context.Background()) })
		for range 2 {
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("no synthesis started")
			}
		}
		// The first job, which a worker holds, is due again now.
		b.river.exec(t, `UPDATE river_job SET state = 'available', scheduled_at = CURRENT_TIMESTAMP WHERE id = (SELECT min(id) FROM river_job)`)
		for i := range 3 {
			a := &narrator.Audio{ProjectID: b.audio.ProjectID, Body: "New.", ExternalID: fmt.Sprintf("new-%d", i)}
			if _, err := b.store.CreateAudio(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		pos, ok, err := b.queue.SynthesisQueuePosition(ctx, b.audio.ID)
		if err != nil || !ok || pos != 1 {
			t.Errorf("position of the job that started before: %d, %t, %v; want 1", pos, ok, err)
		}
	})
}

// queueShortOfNewAccount creates an account B with a project and queues a
// one-sentence audio of it.
func (b *testBundle) queueShortOfNewAccount(t *testing.T) *narrator.Audio {
	t.Helper()
	ctx := t.Context()
	p := mustProject(t, b.store, "B", "B")
	short := &narrator.Audio{ProjectID: p.ID, Body: "Short."}
	if _, err := b.store.CreateAudio(ctx, short); err != nil {
		t.Fatal(err)
	}
	return short
}
