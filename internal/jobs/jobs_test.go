package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/logtest"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fakeRenderer writes two small files per rendering, of different sizes,
// or fails.
type fakeRenderer struct {
	media  *localfs.Store
	calls  atomic.Int32
	n      atomic.Int32
	err    error
	during func(progress func(narrator.RenderProgress)) // runs while rendering
	start  func(a *narrator.Audio)                      // runs first, if set
}

// Catalog implements jobs.Renderer: the built-in voices.
func (f *fakeRenderer) Catalog(context.Context) *narrator.Catalog { return narrator.BuiltinCatalog() }

func (f *fakeRenderer) RenderLive(ctx context.Context, a *narrator.Audio, p *narrator.Project, progress func(narrator.RenderProgress)) (narrator.Rendering, error) {
	f.calls.Add(1)
	if f.start != nil {
		f.start(a)
	}
	if f.during != nil {
		f.during(progress)
	}
	if f.err != nil {
		return narrator.Rendering{}, f.err
	}
	dir := "tok" + string(rune('a'+f.n.Add(1)-1)) // toka, tokb, ...
	r := narrator.Rendering{Keys: map[string]string{}, Bytes: map[string]int64{}, Duration: 1500 * time.Millisecond}
	for ct, data := range map[string]string{narrator.ContentTypeMP3: "mp3 data", narrator.ContentTypeM3U8: "m3u8"} {
		r.Keys[ct], r.Bytes[ct] = dir+"/audio."+ct, int64(len(data))
		if err := f.media.Put(ctx, r.Keys[ct], strings.NewReader(data)); err != nil {
			return narrator.Rendering{}, err
		}
	}
	return r, nil
}

// store is what the tests need of a store.
type store interface {
	jobs.Store
	CreateAccount(ctx context.Context, a *narrator.Account) error
	CreateProject(ctx context.Context, p *narrator.Project) error
	CreateAudio(ctx context.Context, a *narrator.Audio) (bool, error)
	FindAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	UpdateAudio(ctx context.Context, projectID int64, ref string, u narrator.AudioUpdate) (*narrator.Audio, error)
	DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	SynthesisProgress(ctx context.Context, audioID int64, revision int) (narrator.SynthesisProgress, error)
	jobs.WebhookStore
	jobs.ResynthesisStore
	CreateWebhook(ctx context.Context, h *narrator.Webhook) error
	ListDeliveries(ctx context.Context, projectID, webhookID int64, limit int) ([]*narrator.WebhookDelivery, error)
	FindWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error)
	TestWebhook(ctx context.Context, projectID, id int64) (*narrator.WebhookDelivery, error)
}

// queue is what the tests need of a jobs.Queue, whatever its driver.
type queue interface {
	Start(ctx context.Context, w jobs.Workers) error
	Stop(ctx context.Context) error
	RecoverInterrupted(ctx context.Context) (int, error)
	SynthesisQueuePosition(ctx context.Context, audioID int64) (int, bool, error)
	JobCounts(ctx context.Context) ([]narrator.JobCount, error)
	QueueResynthesis(ctx context.Context, job narrator.ResynthesisJob) error
}

// jobRow is one row of River's job table.
type jobRow struct {
	Kind, State string
	Args        []byte
}

// riverDB is the test's own access to River's job table, in the dialect
// of its database.
type riverDB struct {
	// jobs returns every job, oldest first.
	jobs func(t *testing.T) []jobRow
	// markRunning makes the synthesis jobs look as if their process died
	// while running them, and returns how many there were.
	markRunning func(t *testing.T) int64
	// exec runs a statement that reads the same in both dialects.
	exec func(t *testing.T, query string)
}

type testBundle struct {
	store  store
	media  *localfs.Store
	render *fakeRenderer
	queue  queue
	river  riverDB
	worker *jobs.SynthesizeWorker
	audio  *narrator.Audio
}

// queueConfig is the configuration of every test's queue.
var queueConfig = jobs.Config{Work: true, MaxAttempts: 3, RetryDelays: []time.Duration{10 * time.Millisecond}}

// backends are the databases the tests run on: a store and a queue on one
// database, each with the driver of that database.
var backends = []struct {
	name string
	open func(t *testing.T) (store, queue, riverDB)
}{
	{"sqlite", openSQLite},
	{"postgres", openPostgres},
}

func openSQLite(t *testing.T) (store, queue, riverDB) {
	return openSQLiteWith(t, queueConfig)
}

// openSQLiteWith is openSQLite with a queue configured by cfg.
func openSQLiteWith(t *testing.T, cfg jobs.Config) (store, queue, riverDB) {
	st, q := sqlitetest.Open(t, sqlite.Options{EventBody: eventBody}, cfg)
	return st, q, riverDB{
		jobs: func(t *testing.T) []jobRow {
			rows, err := st.DB().QueryContext(t.Context(), `SELECT kind, state, json(args) FROM river_job ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []jobRow
			for rows.Next() {
				var j jobRow
				if err := rows.Scan(&j.Kind, &j.State, &j.Args); err != nil {
					t.Fatal(err)
				}
				out = append(out, j)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		},
		markRunning: func(t *testing.T) int64 {
			res, err := st.DB().ExecContext(t.Context(), `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = datetime('now') WHERE kind = 'synthesize_audio'`)
			if err != nil {
				t.Fatal(err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				t.Fatal(err)
			}
			return n
		},
		exec: func(t *testing.T, query string) {
			if _, err := st.DB().ExecContext(t.Context(), query); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// riverTemplate is a database with the store's and River's schemas.
var riverTemplate = pgtest.Migrated("river", func(ctx context.Context, st *postgres.Store) error {
	return jobs.MigratePostgres(ctx, st.Pool())
})

func openPostgres(t *testing.T) (store, queue, riverDB) {
	url := pgtest.NewDatabase(t, riverTemplate)
	pool, err := postgres.OpenPool(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	q, err := jobs.NewPostgres(pool, queueConfig)
	if err != nil {
		pool.Close()
		t.Fatal(err)
	}
	st := postgres.New(pool, postgres.Options{Jobs: q, EventBody: eventBody})
	t.Cleanup(func() { st.Close() })
	return st, q, riverDB{
		jobs: func(t *testing.T) []jobRow {
			rows, err := st.Pool().Query(t.Context(), `SELECT kind, state::text, args FROM river_job ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[jobRow])
			if err != nil {
				t.Fatal(err)
			}
			return out
		},
		markRunning: func(t *testing.T) int64 {
			tag, err := st.Pool().Exec(t.Context(), `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE kind = 'synthesize_audio'`)
			if err != nil {
				t.Fatal(err)
			}
			return tag.RowsAffected()
		},
		exec: func(t *testing.T, query string) {
			if _, err := st.Pool().Exec(t.Context(), query); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// forEachBackend runs test on every backend, in parallel, each time with
// a new bundle: a store, its queue, a project and one audio in it.
func forEachBackend(t *testing.T, test func(t *testing.T, b *testBundle)) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			test(t, setup(t, be.open))
		})
	}
}

func setup(t *testing.T, open func(t *testing.T) (store, queue, riverDB)) *testBundle {
	t.Helper()
	ctx := t.Context()
	st, q, rdb := open(t)
	media, err := localfs.New(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{store: st, media: media, render: &fakeRenderer{media: media}, queue: q, river: rdb}
	b.worker = jobs.NewSynthesizeWorker(st, b.render, media, jobs.SynthesizeConfig{})

	p := mustProject(t, st, "A", "P")
	b.audio = &narrator.Audio{ProjectID: p.ID, Body: "Hello.", ExternalID: "a"}
	if _, err := st.CreateAudio(ctx, b.audio); err != nil {
		t.Fatal(err)
	}
	return b
}

// mustProject creates an account named account with an API project named title, in English
// with the default voices.
func mustProject(t *testing.T, st store, account, title string) *narrator.Project {
	t.Helper()
	acct := &narrator.Account{Name: account}
	if err := st.CreateAccount(t.Context(), acct); err != nil {
		t.Fatal(err)
	}
	titleVoice, body, _ := narrator.DefaultVoices("en_US")
	p := &narrator.Project{AccountID: acct.ID, Title: title, Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: titleVoice.Name, BodyVoice: body.Name}
	if err := st.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
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

func TestWorkFinishes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		if err := b.work(t, b.audio.Revision, 1); err != nil {
			t.Fatal(err)
		}
		a := b.find(t)
		if a.State != narrator.StateProcessed || a.DurationMS != 1500 {
			t.Fatalf("after work: %+v", a)
		}
		for _, m := range a.Media {
			if want := map[string]int64{narrator.ContentTypeMP3: 8, narrator.ContentTypeM3U8: 4}[m.ContentType]; m.Bytes != want {
				t.Errorf("%s media has %d bytes, want %d", m.ContentType, m.Bytes, want)
			}
		}
		// A repeated delivery of the same job does nothing.
		if err := b.work(t, b.audio.Revision, 1); err != nil || b.render.calls.Load() != 1 {
			t.Errorf("repeat: err %v, %d renderings", err, b.render.calls.Load())
		}
	})
}

func TestWorkSkipsStaleAndDeleted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
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
	})
}

func TestWorkDiscardsSupersededResult(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		title := "Changed while rendering"
		b.render.during = func(func(narrator.RenderProgress)) {
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
	})
}

func TestWorkFailsAfterLastAttempt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
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
	})
}

func TestWorkFailsAtOnceOnBadArticle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.render.err = narrator.Errorf(narrator.EINVALID, "the article has no text that can be read aloud.")
		err := b.work(t, b.audio.Revision, 1)
		var cancel *rivertype.JobCancelError
		if !errors.As(err, &cancel) {
			t.Fatalf("error %v, want a job cancellation", err)
		}
		if a := b.find(t); a.State != narrator.StateFailed || !strings.Contains(a.Error, "no text") {
			t.Errorf("state %s, error %q", a.State, a.Error)
		}
	})
}

// TestWorkLogsEachFailedAttempt checks that an attempt that fails and will be tried again
// says so in the log, with its error, and not only the last one.
func TestWorkLogsEachFailedAttempt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		var logs logtest.Buffer
		w := jobs.NewSynthesizeWorker(b.store, b.render, b.media, jobs.SynthesizeConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		b.render.err = errors.New("engine exploded")
		for attempt := 1; attempt <= 2; attempt++ {
			err := w.Work(t.Context(), &river.Job[jobs.SynthesizeArgs]{
				JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 3},
				Args:   jobs.SynthesizeArgs{AudioID: b.audio.ID, Revision: b.audio.Revision},
			})
			if err == nil {
				t.Fatal("no error from a failed rendering")
			}
		}
		out := logs.String()
		for _, attempt := range []string{"attempt=1", "attempt=2"} {
			if !regexp.MustCompile(`level=WARN msg="synthesis attempt failed[^\n]*` + attempt + `[^\n]*engine exploded`).MatchString(out) {
				t.Errorf("no warning of the failed %s with its error:\n%s", attempt, out)
			}
		}
	})
}

// TestWorkFailsAtOnceOnBrokenVoice checks that a voice whose model fails is not tried again,
// and that the audio's error blames the voice, by name, and not the text.
func TestWorkFailsAtOnceOnBrokenVoice(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.render.err = fmt.Errorf("synthesize %q with piper/piper-tone: %w", "Hello.", narrator.VoiceFailed("Tone (Female)", errors.New("onnx run failed: Gather: indices element out of data bounds")))
		err := b.work(t, b.audio.Revision, 1)
		var cancel *rivertype.JobCancelError
		if !errors.As(err, &cancel) {
			t.Fatalf("error %v, want a job cancellation", err)
		}
		a := b.find(t)
		if a.State != narrator.StateFailed || !strings.Contains(a.Error, "voice Tone (Female)") || strings.Contains(a.Error, "check the text") || strings.Contains(a.Error, "Gather") {
			t.Errorf("state %s, error %q", a.State, a.Error)
		}
	})
}

// TestJobsCommittedWithRows checks that River's job rows are written in the
// store's transactions: there when the write is, absent when it is not.
func TestJobsCommittedWithRows(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		want := []jobRow{{Kind: "synthesize_audio", State: "available", Args: fmt.Appendf(nil, `{"audio_id":%d,"revision":1}`, b.audio.ID)}}
		b.wantJobs(t, want)
		// A write that fails enqueues nothing.
		if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: ptr(" ")}); err == nil {
			t.Fatal("blank body accepted")
		}
		if _, err := b.store.CreateAudio(ctx, &narrator.Audio{ProjectID: b.audio.ProjectID + 1, Body: "x"}); err == nil {
			t.Fatal("audio created in a missing project")
		}
		b.wantJobs(t, want)
		if err := b.work(t, b.audio.Revision, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.DeleteAudio(ctx, b.audio.ProjectID, "a"); err != nil {
			t.Fatal(err)
		}
		want = append(want, jobRow{Kind: "delete_media", State: "available", Args: []byte(`{"keys":["toka/audio.mp3","toka/audio.m3u8"]}`)})
		b.wantJobs(t, want)
	})
}

func TestQueueRunsJobs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		if err := b.queue.Start(t.Context(), b.workers()); err != nil {
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
	})
}

func TestRecoverInterrupted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		// Make the audio's job look as if its process died while running it.
		if n := b.river.markRunning(t); n != 1 {
			t.Fatalf("%d jobs", n)
		}
		n, err := b.queue.RecoverInterrupted(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("recovered %d, %v", n, err)
		}
		if got := b.river.jobs(t); len(got) != 1 || got[0].State != "available" {
			t.Errorf("jobs after recovery: %+v", got)
		}
	})
}

// wantJobs fails unless River's table holds exactly these jobs, arguments
// compared as JSON.
func (b *testBundle) wantJobs(t *testing.T, want []jobRow) {
	t.Helper()
	got := b.river.jobs(t)
	norm := func(rows []jobRow) []jobRow {
		out := make([]jobRow, len(rows))
		for i, r := range rows {
			var v any
			if err := json.Unmarshal(r.Args, &v); err != nil {
				t.Fatalf("job %d args %q: %v", i, r.Args, err)
			}
			args, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = jobRow{Kind: r.Kind, State: r.State, Args: args}
		}
		return out
	}
	if diff := cmp.Diff(norm(want), norm(got)); diff != "" {
		t.Errorf("River jobs (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// TestWorkReportsProgress checks that progress reported while rendering
// reaches the store, where every node reads it, and that it goes with the
// lease once the audio is published.
func TestWorkReportsProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		var seen narrator.SynthesisProgress
		b.render.during = func(progress func(narrator.RenderProgress)) {
			progress(narrator.RenderProgress{UnitsDone: 1, UnitsTotal: 3})
			progress(narrator.RenderProgress{UnitsDone: 1, UnitsTotal: 3, LiveKey: "toka/live.m3u8"})
			// The playlist's first report is written at once, whatever the
			// interval; wait for it as a listener would.
			for {
				p, err := b.store.SynthesisProgress(t.Context(), b.audio.ID, b.audio.Revision)
				if err == nil && p.LiveKey != "" {
					seen = p
					return
				}
				if err != nil && narrator.ErrorCode(err) != narrator.ENOTFOUND {
					t.Errorf("SynthesisProgress: %v", err)
					return
				}
				select {
				case <-t.Context().Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
		if err := b.work(t, b.audio.Revision, 1); err != nil {
			t.Fatal(err)
		}
		if seen.UnitsDone != 1 || seen.UnitsTotal != 3 || seen.LiveKey != "toka/live.m3u8" || seen.StartedAt.IsZero() {
			t.Errorf("progress seen while rendering: %+v", seen)
		}
		if a := b.find(t); a.State != narrator.StateProcessed {
			t.Fatalf("state %s, want processed", a.State)
		}
		if _, err := b.store.SynthesisProgress(t.Context(), b.audio.ID, b.audio.Revision); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("progress after finishing: %v, want ENOTFOUND", err)
		}
	})
}

// TestSynthesisQueuePosition checks an audio's place among the synthesis
// jobs waiting for a worker, in the order River fetches them.
func TestSynthesisQueuePosition(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		create := func(ext string) *narrator.Audio {
			t.Helper()
			a := &narrator.Audio{ProjectID: b.audio.ProjectID, Body: "Hello " + ext + ".", ExternalID: ext}
			if _, err := b.store.CreateAudio(ctx, a); err != nil {
				t.Fatal(err)
			}
			return a
		}
		position := func(a *narrator.Audio) (int, bool) {
			t.Helper()
			n, ok, err := b.queue.SynthesisQueuePosition(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return n, ok
		}
		second, third := create("b"), create("c")
		for i, a := range []*narrator.Audio{b.audio, second, third} {
			if n, ok := position(a); !ok || n != i+1 {
				t.Errorf("audio %d: position %d, %v; want %d, true", i, n, ok, i+1)
			}
		}
		// Jobs that run wait no more, and no longer stand ahead of others.
		if n := b.river.markRunning(t); n != 3 {
			t.Fatalf("%d jobs marked running, want 3", n)
		}
		if n, ok := position(b.audio); ok {
			t.Errorf("running audio: position %d, true; want none", n)
		}
		if n, ok := position(create("d")); !ok || n != 1 {
			t.Errorf("new audio after the others started: position %d, %v; want 1, true", n, ok)
		}
		if n, ok := position(&narrator.Audio{ID: 999_999}); ok {
			t.Errorf("audio without a job: position %d, true", n)
		}
	})
}

// TestJobCounts checks the queue depth by kind and state, zeros included,
// as metrics read it.
func TestJobCounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		count := func() map[string]int64 {
			t.Helper()
			counts, err := b.queue.JobCounts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(counts) != 5*5 {
				t.Errorf("%d counts, want one for each of 5 kinds and 5 states", len(counts))
			}
			out := map[string]int64{}
			for _, c := range counts {
				if c.Count != 0 {
					out[c.Kind+"/"+c.State] = c.Count
				}
			}
			return out
		}
		if diff := cmp.Diff(map[string]int64{"synthesize_audio/available": 1}, count()); diff != "" {
			t.Errorf("counts after one create (-want +got):\n%s", diff)
		}
		b.river.markRunning(t)
		if diff := cmp.Diff(map[string]int64{"synthesize_audio/running": 1}, count()); diff != "" {
			t.Errorf("counts after the job started (-want +got):\n%s", diff)
		}
	})
}
