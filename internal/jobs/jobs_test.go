package jobs_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/sqlite"
)

// fakeRenderer writes two small files per rendering, or fails.
type fakeRenderer struct {
	media  *localfs.Store
	calls  atomic.Int32
	n      atomic.Int32
	err    error
	during func() // runs while rendering
}

func (f *fakeRenderer) Render(ctx context.Context, a *narrator.Audio, p *narrator.Project) (map[string]string, time.Duration, error) {
	f.calls.Add(1)
	if f.during != nil {
		f.during()
	}
	if f.err != nil {
		return nil, 0, f.err
	}
	dir := "tok" + string(rune('a'+f.n.Add(1)))
	keys := map[string]string{narrator.ContentTypeMP3: dir + "/audio.mp3", narrator.ContentTypeM3U8: dir + "/audio.m3u8"}
	for _, k := range keys {
		if err := f.media.Put(ctx, k, strings.NewReader("data")); err != nil {
			return nil, 0, err
		}
	}
	return keys, 1500 * time.Millisecond, nil
}

type testBundle struct {
	store  *sqlite.Store
	media  *localfs.Store
	render *fakeRenderer
	queue  *jobs.Queue[*sql.Tx]
	worker *jobs.SynthesizeWorker
	audio  *narrator.Audio
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	var queue *jobs.Queue[*sql.Tx]
	st, err := sqlite.Open(ctx, filepath.Join(dir, "db"), sqlite.Options{
		Jobs: func(db *sql.DB) (sqlite.JobInserter, error) {
			var err error
			queue, err = jobs.NewSQLite(db, jobs.Config{
				Work:        true,
				MaxAttempts: 3,
				RetryDelays: []time.Duration{10 * time.Millisecond},
			})
			return queue, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := jobs.MigrateSQLite(ctx, st.DB()); err != nil {
		t.Fatal(err)
	}
	media, err := localfs.New(filepath.Join(dir, "media"))
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{store: st, media: media, render: &fakeRenderer{media: media}, queue: queue}
	b.worker = jobs.NewSynthesizeWorker(st, b.render, media, jobs.SynthesizeConfig{})

	acct := &narrator.Account{Name: "A"}
	if err := st.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	title, body, _ := narrator.DefaultVoices("en_US")
	p := &narrator.Project{AccountID: acct.ID, Title: "P", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	if err := st.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	b.audio = &narrator.Audio{ProjectID: p.ID, Body: "Hello.", ExternalID: "a"}
	if _, err := st.CreateAudio(ctx, b.audio); err != nil {
		t.Fatal(err)
	}
	return b
}

// work runs the synthesis worker on a job for the audio.
func (b *testBundle) work(t *testing.T, revision, attempt int) error {
	t.Helper()
	return b.worker.Work(t.Context(), &river.Job[jobs.SynthesizeArgs]{
		JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 3},
		Args:   jobs.SynthesizeArgs{AudioID: b.audio.ID, Revision: revision},
	})
}

func (b *testBundle) find(t *testing.T) *narrator.Audio {
	t.Helper()
	a, err := b.store.FindAudio(t.Context(), b.audio.ProjectID, "a")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestWorkPublishes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.work(t, b.audio.Revision, 1); err != nil {
		t.Fatal(err)
	}
	a := b.find(t)
	if a.State != narrator.StateProcessed || a.DurationMS != 1500 {
		t.Fatalf("after work: %+v", a)
	}
	// A repeated delivery of the same job does nothing.
	if err := b.work(t, b.audio.Revision, 1); err != nil || b.render.calls.Load() != 1 {
		t.Errorf("repeat: err %v, %d renderings", err, b.render.calls.Load())
	}
}

func TestWorkSkipsStaleAndDeleted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.work(t, b.audio.Revision-1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.DeleteAudio(t.Context(), b.audio.ProjectID, "a"); err != nil {
		t.Fatal(err)
	}
	if err := b.work(t, b.audio.Revision, 1); err != nil {
		t.Fatal(err)
	}
	if n := b.render.calls.Load(); n != 0 {
		t.Errorf("%d renderings of stale or deleted audios", n)
	}
}

func TestWorkDiscardsSupersededResult(t *testing.T) {
	t.Parallel()
	b := setup(t)
	title := "Changed while rendering"
	b.render.during = func() {
		if _, err := b.store.UpdateAudio(context.Background(), b.audio.ProjectID, "a", narrator.AudioUpdate{Title: &title}); err != nil {
			t.Error(err)
		}
	}
	if err := b.work(t, b.audio.Revision, 1); err != nil {
		t.Fatal(err)
	}
	if a := b.find(t); a.State != narrator.StateUnprocessed {
		t.Errorf("superseded result published: %+v", a)
	}
	if _, _, err := b.media.Open(t.Context(), "toka/audio.mp3"); !errors.Is(err, narrator.ErrBlobNotFound) {
		t.Errorf("superseded files kept: %v", err)
	}
}

func TestWorkFailsAfterLastAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.render.err = errors.New("engine exploded")
	if err := b.work(t, b.audio.Revision, 2); err == nil {
		t.Fatal("no error from a failed rendering")
	}
	if a := b.find(t); a.State != narrator.StateUnprocessed {
		t.Fatalf("failed before the last attempt: %+v", a)
	}
	if err := b.work(t, b.audio.Revision, 3); err == nil {
		t.Fatal("no error from a failed rendering")
	}
	a := b.find(t)
	if a.State != narrator.StateFailed || !strings.Contains(a.Error, "speech engine") || strings.Contains(a.Error, "exploded") {
		t.Errorf("after the last attempt: state %s, error %q", a.State, a.Error)
	}
}

func TestWorkFailsAtOnceOnBadArticle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.render.err = narrator.Errorf(narrator.EINVALID, "the article has no text that can be read aloud.")
	err := b.work(t, b.audio.Revision, 1)
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("error %v, want a job cancellation", err)
	}
	if a := b.find(t); a.State != narrator.StateFailed || !strings.Contains(a.Error, "no text") {
		t.Errorf("state %s, error %q", a.State, a.Error)
	}
}

func TestQueueRunsJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.queue.Start(t.Context(), jobs.Workers{Synthesize: b.worker, DeleteMedia: jobs.NewDeleteMediaWorker(b.media)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.queue.Stop(context.Background()) })
	deadline := time.Now().Add(10 * time.Second)
	for b.find(t).State != narrator.StateProcessed {
		if time.Now().After(deadline) {
			t.Fatal("audio not processed by the queue")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Deleting the audio removes its files through the media job.
	if _, err := b.store.DeleteAudio(t.Context(), b.audio.ProjectID, "a"); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := b.media.Open(t.Context(), "toka/audio.mp3"); errors.Is(err, narrator.ErrBlobNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("media not deleted")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRecoverInterrupted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Make the audio's job look as if its process died while running it.
	res, err := b.store.DB().ExecContext(t.Context(), `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = datetime('now') WHERE kind = 'synthesize_audio'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d jobs", n)
	}
	n, err := b.queue.RecoverInterrupted(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("recovered %d, %v", n, err)
	}
	var state string
	if err := b.store.DB().QueryRowContext(t.Context(), `SELECT state FROM river_job WHERE kind = 'synthesize_audio'`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "available" {
		t.Errorf("job state %s after recovery", state)
	}
}
