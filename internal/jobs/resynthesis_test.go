package jobs_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
)

// TestResynthesis: a project's re-synthesis is one job at a time, and its
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
			t.Errorf("a second re-synthesis while the first is queued: %v, want %s", err, narrator.ECONFLICT)
		}
		w := jobs.NewResynthesisWorker(b.store, nil)
		if err := w.Work(ctx, &river.Job[jobs.ResynthesisArgs]{
			JobRow: &rivertype.JobRow{Attempt: 1, CreatedAt: time.Now()},
			Args:   jobs.ResynthesisArgs{ProjectID: job.ProjectID, Phrase: job.Phrase},
		}); err != nil {
			t.Fatal(err)
		}
		if a := b.find(t); a.State != narrator.StateUnprocessed || a.Revision != processed.Revision+1 {
			t.Errorf("after the re-synthesis: %s at revision %d, want unprocessed at %d", a.State, a.Revision, processed.Revision+1)
		}
	})
}
