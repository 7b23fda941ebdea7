package postgres_test

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// A group's first round trip marks to run alone exactly the creates its
// lookups name: the one whose external ID a live audio holds (it updates
// that audio), and the one whose API key is not a live key of its
// project's account. The group inserts the others in its one transaction.
// A lookup that named the wrong creates would still give each create its
// right outcome, since an insert that should not have been made fails the
// group and every create then runs alone; so the test also counts the
// batches of jobs enqueued: one for each group, one for each create that
// ran alone. The creates join the line one at a time, behind a group held
// after its first round trip, so that the next group holds them all, in
// this order, and each lookup's ordinals differ from the other's.
func TestGroupMarksTheRightCreatesAlone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	rec := &storetest.Recorder{}
	plain := mustOpen(t, url, withJobs(recorderJobs{rec}))
	hj := hookJobs{recorderJobs{rec}, make(chan struct{}), make(chan struct{}), &sync.Once{}}
	var jobBatches atomic.Int32
	opts := withJobs(hj)
	opts.EffectFunc = func(step narrator.EffectStep) {
		if step == narrator.StepJobs {
			jobBatches.Add(1)
		}
	}
	s := mustOpen(t, url, opts)

	p := mustProject(t, plain)
	other := mustProject(t, plain)
	good, foreign := sha256.Sum256([]byte("good")), sha256.Sum256([]byte("foreign"))
	if _, err := plain.CreateAPIKey(ctx, p.AccountID, good[:], "nk_good"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.CreateAPIKey(ctx, other.AccountID, foreign[:], "nk_foreign"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: "live", Title: "Old", Body: "B", Author: "A"}); err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		created bool
		err     error
	}
	var wg sync.WaitGroup
	held := make(chan outcome, 1)
	wg.Go(func() {
		created, err := s.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, Title: "Held", Body: "B", Author: "A"})
		held <- outcome{created, err}
	})
	<-hj.locked

	creates := []struct {
		name       string
		key        []byte
		externalID string
		wantAlone  bool // and so its own batch of jobs, if it succeeds
		wantErr    bool
		wantNew    bool
	}{
		// External IDs looked up: d, live, a. Keys checked: B, C, D, E.
		{name: "A", externalID: "d", wantNew: true},
		{name: "B", key: good[:], externalID: "live", wantAlone: true},
		{name: "C", key: good[:], wantNew: true},
		{name: "D", key: foreign[:], wantAlone: true, wantErr: true},
		{name: "E", key: good[:], externalID: "a", wantNew: true},
	}
	got := make([]outcome, len(creates))
	for i, c := range creates {
		wg.Go(func() {
			a := &narrator.Audio{ProjectID: p.ID, ExternalID: c.externalID, Title: "New " + c.name, Body: "B", Author: "A"}
			if c.key != nil {
				got[i].created, got[i].err = s.CreateAudioWithKey(ctx, c.key, a)
			} else {
				got[i].created, got[i].err = s.CreateAudio(ctx, a)
			}
		})
		eventually(t, "create "+c.name+" waits in line", func() bool { return postgres.CreatesWaiting(s) == i+1 })
	}
	close(hj.release)
	wg.Wait()

	if h := <-held; h.err != nil || !h.created {
		t.Fatalf("the held create: created=%v, err=%v", h.created, h.err)
	}
	wantBatches := int32(2) // the held group, and the group of the five
	for i, c := range creates {
		switch {
		case c.wantErr && got[i].err == nil:
			t.Errorf("create %s succeeded, want an error", c.name)
		case !c.wantErr && got[i].err != nil:
			t.Errorf("create %s: %v", c.name, got[i].err)
		case !c.wantErr && got[i].created != c.wantNew:
			t.Errorf("create %s: created = %v, want %v", c.name, got[i].created, c.wantNew)
		}
		if c.wantAlone && !c.wantErr {
			wantBatches++
		}
	}
	if n := jobBatches.Load(); n != wantBatches {
		t.Errorf("%d batches of jobs enqueued, want %d: the group's lookups marked the wrong creates to run alone", n, wantBatches)
	}
	live, err := plain.FindAudio(ctx, p.ID, "live")
	if err != nil {
		t.Fatal(err)
	}
	if live.Title != "New B" {
		t.Errorf("the live audio's title is %q, want the update's, %q", live.Title, "New B")
	}
	if n := audioRows(t, plain.Pool(), p.ID); n != 5 { // live, Held, A, C, E
		t.Errorf("%d audios in the project, want 5", n)
	}
}
