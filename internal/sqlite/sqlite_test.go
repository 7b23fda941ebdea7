package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// recorderJobs passes jobs to a storetest.Recorder.
type recorderJobs struct{ rec *storetest.Recorder }

func (e recorderJobs) InsertTx(_ context.Context, tx *sql.Tx, job narrator.Job) error {
	if tx == nil {
		return errors.New("no transaction")
	}
	return e.rec.Record(job)
}

// withJobs returns Options whose job inserter is j.
func withJobs(j JobInserter) Options {
	return Options{Jobs: func(*sql.DB) (JobInserter, error) { return j, nil }}
}

// mustOpen opens and migrates a store in a new directory.
func mustOpen(tb testing.TB, opts Options) *Store {
	tb.Helper()
	return mustOpenPath(tb, filepath.Join(tb.TempDir(), "narrator.db"), opts)
}

// mustOpenPath opens and migrates the store at path, closing it at cleanup.
func mustOpenPath(tb testing.TB, path string, opts Options) *Store {
	tb.Helper()
	s, err := Open(tb.Context(), path, opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, now func() time.Time, rec *storetest.Recorder) storetest.Store {
		s := mustOpen(t, withJobs(recorderJobs{rec}))
		s.Now = now
		return s
	})
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "narrator.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := s.SchemaCurrent(ctx); err != nil || ok {
		t.Fatalf("SchemaCurrent on a new file = %v, %v; want false, nil", ok, err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
	}
	if ok, err := s.SchemaCurrent(ctx); err != nil || !ok {
		t.Fatalf("SchemaCurrent after Migrate = %v, %v; want true, nil", ok, err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) || ms[0].version != 1 {
		t.Fatalf("schema_migrations has %d rows, want %d", n, len(ms))
	}

	// Concurrent Migrate calls from two processes' worth of stores.
	other := mustOpenPath(t, path, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, st := range []*Store{s, other} {
		wg.Go(func() { errs <- st.Migrate(ctx) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Migrate: %v", err)
		}
	}

	// A migration this binary does not know is reported.
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SchemaCurrent(ctx); err == nil || !strings.Contains(err.Error(), "9999") {
		t.Fatalf("SchemaCurrent with a future migration: err = %v", err)
	}
}

func TestPragmas(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, Options{ReadConns: 3})
	ctx := t.Context()
	want := map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"busy_timeout": "10000",
		"synchronous":  "1", // NORMAL
	}
	pools := map[string]*sql.DB{"writer": s.writer, "reader": s.reader}
	for name, db := range pools {
		// Hold several connections at once so that pooled ones, not only
		// the first, are checked.
		var conns []*sql.Conn
		for i := 0; i < db.Stats().MaxOpenConnections; i++ {
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for i, c := range conns {
			for pragma, w := range want {
				var got string
				if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
					t.Fatalf("%s conn %d: PRAGMA %s: %v", name, i, pragma, err)
				}
				if got != w {
					t.Errorf("%s conn %d: %s = %s, want %s", name, i, pragma, got, w)
				}
			}
			var queryOnly string
			if err := c.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly); err != nil {
				t.Fatal(err)
			}
			if wantQO := map[string]string{"writer": "0", "reader": "1"}[name]; queryOnly != wantQO {
				t.Errorf("%s conn %d: query_only = %s, want %s", name, i, queryOnly, wantQO)
			}
		}
		for _, c := range conns {
			c.Close()
		}
	}
	if got := s.writer.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer MaxOpenConnections = %d, want 1", got)
	}
	if got := s.reader.Stats().MaxOpenConnections; got != 3 {
		t.Errorf("reader MaxOpenConnections = %d, want 3", got)
	}
	// Foreign keys are enforced.
	_, err := s.DB().ExecContext(ctx, `INSERT INTO projects (account_id, title, type, language, title_voice, body_voice, created_at)
		VALUES (999, 't', 'api', 'en_US', 'Mark', 'Sally', 0)`)
	if err == nil {
		t.Error("insert with a dangling foreign key succeeded")
	}
	// The reader refuses writes.
	if _, err := s.reader.ExecContext(ctx, `INSERT INTO accounts (name, created_at) VALUES ('x', 0)`); err == nil {
		t.Error("reader pool accepted a write")
	}
}

func TestTimesAreMicrosecondsUTC(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, Options{})
	local := time.FixedZone("X", 3*3600)
	s.Now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 123456789, local) }
	a := &narrator.Account{Name: "Acme"}
	if err := s.CreateAccount(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	var stored int64
	if err := s.DB().QueryRowContext(t.Context(), `SELECT created_at FROM accounts WHERE id = ?`, a.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2025, 1, 2, 0, 4, 5, 123456000, time.UTC)
	if stored != want.UnixMicro() {
		t.Errorf("stored created_at = %d, want %d", stored, want.UnixMicro())
	}
	got, err := s.FindAccount(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt != want || a.CreatedAt != want {
		t.Errorf("CreatedAt read %v, returned %v; want %v", got.CreatedAt, a.CreatedAt, want)
	}
}

// jobTableEnqueuer writes jobs to a table inside the caller's transaction,
// as River does, so that tests can see which jobs were committed.
type jobTableEnqueuer struct{ fail bool }

const createTestJobsSQL = `CREATE TABLE test_jobs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, arg TEXT NOT NULL)`

func (e *jobTableEnqueuer) InsertTx(ctx context.Context, tx *sql.Tx, job narrator.Job) error {
	switch j := job.(type) {
	case narrator.SynthesizeJob:
		if _, err := tx.ExecContext(ctx, `INSERT INTO test_jobs (kind, arg) VALUES ('synthesize', ?)`,
			fmt.Sprintf("%d/%d", j.AudioID, j.Revision)); err != nil {
			return err
		}
		if e.fail {
			return errors.New("enqueue failed after insert")
		}
		return nil
	case narrator.DeleteMediaJob:
		_, err := tx.ExecContext(ctx, `INSERT INTO test_jobs (kind, arg) VALUES ('delete', ?)`, strings.Join(j.Keys, ","))
		return err
	default:
		return fmt.Errorf("unknown job %T", job)
	}
}

func TestJobsInSameTransaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	enq := &jobTableEnqueuer{}
	path := filepath.Join(t.TempDir(), "narrator.db")
	bare := mustOpenPath(t, path, Options{})
	s := mustOpenPath(t, path, withJobs(enq))
	if _, err := s.DB().ExecContext(ctx, createTestJobsSQL); err != nil {
		t.Fatal(err)
	}
	acc := &narrator.Account{Name: "Acme"}
	if err := s.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: acc.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := s.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}

	// Without a job inserter, a create is refused.
	if _, err := bare.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, Body: "x"}); err == nil {
		t.Fatal("CreateAudio without a job inserter succeeded")
	}

	jobs := func() []string {
		t.Helper()
		rows, err := s.reader.QueryContext(ctx, `SELECT kind || ':' || arg FROM test_jobs ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := []string{}
		for rows.Next() {
			var j string
			if err := rows.Scan(&j); err != nil {
				t.Fatal(err)
			}
			out = append(out, j)
		}
		return out
	}
	a := &narrator.Audio{ProjectID: p.ID, Body: "Hello."}
	if _, err := s.CreateAudio(ctx, a); err != nil {
		t.Fatal(err)
	}
	enq.fail = true
	if _, err := s.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, Body: "Lost.", ExternalID: "lost"}); err == nil {
		t.Fatal("CreateAudio with a failing enqueuer succeeded")
	}
	enq.fail = false
	if err := s.PublishAudio(ctx, a.ID, 1, map[string]string{"mp3": "k1.mp3", "m3u8": "k1.m3u8"}, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteAudio(ctx, p.ID, fmt.Sprint(a.ID)); err != nil {
		t.Fatal(err)
	}
	want := []string{fmt.Sprintf("synthesize:%d/1", a.ID), "delete:k1.mp3,k1.m3u8"}
	if got := jobs(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("committed jobs = %q, want %q", got, want)
	}
	var audios int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM audios`).Scan(&audios); err != nil {
		t.Fatal(err)
	}
	if audios != 1 {
		t.Fatalf("%d audio rows, want 1 (the failed create must leave none)", audios)
	}
}

// TestConcurrentWriters writes from many goroutines through two stores on
// one file, as `narrator serve` and a CLI command do, while reading.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "narrator.db")
	rec := &storetest.Recorder{}
	s1 := mustOpenPath(t, path, withJobs(recorderJobs{rec}))
	s2 := mustOpenPath(t, path, withJobs(recorderJobs{rec}))
	acc := &narrator.Account{Name: "Acme"}
	if err := s1.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: acc.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := s1.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	const workers, each = 6, 12
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*2)
	for w := 0; w < workers; w++ {
		st := []*Store{s1, s2}[w%2]
		wg.Go(func() {
			for i := 0; i < each; i++ {
				a := &narrator.Audio{ProjectID: p.ID, Body: "Body.", ExternalID: fmt.Sprintf("w%d-%d", w, i)}
				if _, err := st.CreateAudio(ctx, a); err != nil {
					errs <- err
					continue
				}
				if _, err := st.UpdateAudio(ctx, p.ID, a.ExternalID, narrator.AudioUpdate{Title: ptr("T")}); err != nil {
					errs <- err
				}
				if _, err := st.ListAudios(ctx, p.ID, time.Time{}, 1, 50); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s2.FindProject(ctx, acc.ID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AudioCount != workers*each {
		t.Errorf("AudioCount = %d, want %d", got.AudioCount, workers*each)
	}
	if n := len(rec.Synthesized()); n != workers*each*2 {
		t.Errorf("%d synthesis jobs, want %d", n, workers*each*2)
	}
}

func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "narrator.db")
	rec := &storetest.Recorder{}
	s, err := Open(ctx, path, withJobs(recorderJobs{rec}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	acc := &narrator.Account{Name: "Acme"}
	if err := s.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: acc.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := s.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	a := &narrator.Audio{ProjectID: p.ID, Body: "Hello.", ExternalID: "e", Metadata: map[string]string{"k": "v"}}
	if _, err := s.CreateAudio(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := mustOpenPath(t, path, Options{})
	if ok, err := s2.SchemaCurrent(ctx); err != nil || !ok {
		t.Fatalf("SchemaCurrent after reopen = %v, %v", ok, err)
	}
	got, err := s2.FindAudio(ctx, p.ID, "e")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != a.ID || got.Metadata["k"] != "v" || len(got.Media) != 2 {
		t.Fatalf("reopened audio = %+v, want %+v", got, a)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", ":memory:", "file:x.db", "a?b.db", filepath.Join(t.TempDir(), "missing", "dir", "x.db")} {
		if s, err := Open(t.Context(), path, Options{}); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestQueryPlans checks that the hot queries use their indexes and sort
// nothing at run time.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, Options{})
	for _, tc := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"list", listAudiosSQL, []any{1, 0, 50, 0}, "audios_list"},
		{"external id", findLiveAudioByExternalIDSQL, []any{1, "x"}, "audios_external_id"},
		{"media", loadMediaSQL, []any{"[1,2]", `["mp3","m3u8"]`}, "sqlite_autoindex_media_1"},
		{"api key", authenticateAPIKeySQL, []any{[]byte("x")}, "sqlite_autoindex_api_keys_1"},
	} {
		rows, err := s.reader.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tc.query, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "; ")
		t.Logf("%s: %s", tc.name, text)
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s: plan %q does not use %s", tc.name, text, tc.want)
		}
		if tc.name == "list" && strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s: plan %q sorts at run time", tc.name, text)
		}
	}
}
