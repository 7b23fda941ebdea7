package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
)

// TestResynthesis: a project's resynthesis is one job at a time, and its
// worker re-queues the processed audios with the phrase.
func TestResynthesis(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if err := b.work(t, b.audio.Revision, 1); err != nil {
			t.Fatal(err)
		}
		processed := b.find(t)
		if processed.State != narrator.StateProcessed {
			t.Fatalf("audio %s, want processed", processed.State)
		}
		job := narrator.ResynthesisJob{ProjectID: b.audio.ProjectID, Phrase: "hello"}
		if err := b.queue.QueueResynthesis(ctx, job); err != nil {
			t.Fatal(err)
		}
		err := b.queue.QueueResynthesis(ctx, job)
		if narrator.ErrorCode(err) != narrator.ECONFLICT {
			t.Errorf("a second resynthesis while the first is queued: %v, want %s", err, narrator.ECONFLICT)
		}
		w := jobs.NewResynthesisWorker(b.store, nil)
		if err := w.Work(ctx, &river.Job[jobs.ResynthesisArgs]{
			JobRow: &rivertype.JobRow{Attempt: 1, CreatedAt: time.Now()},
			Args:   jobs.ResynthesisArgs{ProjectID: job.ProjectID, Phrase: job.Phrase},
		}); err != nil {
			t.Fatal(err)
		}
		if a := b.find(t); a.State != narrator.StateUnprocessed || a.Revision != processed.Revision+1 {
			t.Errorf("after the resynthesis: %s at revision %d, want unprocessed at %d", a.State, a.Revision, processed.Revision+1)
		}
	})
}

// TestResynthesisOfEveryAudio: the resynthesis of every audio shares the
// one-at-a-time rule with the phrase form, and its worker re-queues the
// processed audios whatever their text.
func TestResynthesisOfEveryAudio(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if err := b.work(t, b.audio.Revision, 1); err != nil {
			t.Fatal(err)
		}
		processed := b.find(t)
		all := narrator.ResynthesisJob{ProjectID: b.audio.ProjectID, All: true}
		if err := b.queue.QueueResynthesis(ctx, all); err != nil {
			t.Fatal(err)
		}
		for _, again := range []narrator.ResynthesisJob{all, {ProjectID: all.ProjectID, Phrase: "hello"}} {
			if err := b.queue.QueueResynthesis(ctx, again); narrator.ErrorCode(err) != narrator.ECONFLICT {
				t.Errorf("%+v while every audio's resynthesis is queued: %v, want %s", again, err, narrator.ECONFLICT)
			}
		}
		rows := b.river.jobs(t)
		var stored jobs.ResynthesisArgs
		if err := json.Unmarshal(rows[len(rows)-1].Args, &stored); err != nil || !stored.All {
			t.Errorf("the queued job's args %s (%v) do not say all", rows[len(rows)-1].Args, err)
		}
		w := jobs.NewResynthesisWorker(b.store, nil)
		// The audio says "Hello.": a phrase it lacks would leave it.
		if err := w.Work(ctx, &river.Job[jobs.ResynthesisArgs]{
			JobRow: &rivertype.JobRow{Attempt: 1, CreatedAt: time.Now()},
			Args:   jobs.ResynthesisArgs{ProjectID: all.ProjectID, Phrase: "absent", All: true},
		}); err != nil {
			t.Fatal(err)
		}
		if a := b.find(t); a.State != narrator.StateUnprocessed || a.Revision != processed.Revision+1 {
			t.Errorf("after the resynthesis: %s at revision %d, want unprocessed at %d", a.State, a.Revision, processed.Revision+1)
		}
	})
}

// TestResynthesisArgsOfOldJobs: a job queued before the form for every
// audio existed keeps the phrase form.
func TestResynthesisArgsOfOldJobs(t *testing.T) {
	t.Parallel()
	var args jobs.ResynthesisArgs
	if err := json.Unmarshal([]byte(`{"project_id":7,"phrase":"nginx"}`), &args); err != nil {
		t.Fatal(err)
	}
	if want := (jobs.ResynthesisArgs{ProjectID: 7, Phrase: "nginx"}); args != want {
		t.Errorf("old args read as %+v, want %+v", args, want)
	}
	raw, err := json.Marshal(jobs.ResynthesisArgs{ProjectID: 7, Phrase: "nginx"})
	if err != nil || string(raw) != `{"project_id":7,"phrase":"nginx"}` {
		t.Errorf("the phrase form is written %s, %v; want it as before", raw, err)
	}
}

// fullStore is a ResynthesisStore whose account is full after n audios.
type fullStore struct {
	ids []int64
	n   int
}

func (s *fullStore) ResynthesisCandidates(context.Context, narrator.ResynthesisJob) ([]int64, error) {
	return s.ids, nil
}

func (s *fullStore) ResynthesizeAudios(_ context.Context, _ narrator.ResynthesisJob, ids []int64) (int, error) {
	if len(ids) <= s.n {
		s.n -= len(ids)
		return len(ids), nil
	}
	done := s.n
	s.n = 0
	return done, narrator.Errorf(narrator.EQUEUEFULL, "full")
}

// TestResynthesisWaitsForRoom: when the account is full the job snoozes,
// unless it has waited ResynthesisPatience already; then it ends.
func TestResynthesisWaitsForRoom(t *testing.T) {
	t.Parallel()
	ids := make([]int64, 120)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	for _, tc := range []struct {
		name   string
		age    time.Duration
		snooze bool
	}{
		{"young", time.Minute, true},
		{"past patience", narrator.ResynthesisPatience + time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &fullStore{ids: ids, n: 70}
			w := jobs.NewResynthesisWorker(st, nil)
			err := w.Work(t.Context(), &river.Job[jobs.ResynthesisArgs]{
				JobRow: &rivertype.JobRow{Attempt: 1, CreatedAt: time.Now().Add(-tc.age)},
				Args:   jobs.ResynthesisArgs{ProjectID: 1, Phrase: "x"},
			})
			var snooze *river.JobSnoozeError
			if got := errors.As(err, &snooze); got != tc.snooze {
				t.Errorf("Work = %v; snoozed %v, want %v", err, got, tc.snooze)
			}
			if !tc.snooze && err != nil {
				t.Errorf("Work past patience = %v, want nil", err)
			}
		})
	}
}
