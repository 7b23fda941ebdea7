package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/sqlstore"
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

func (e recorderJobs) InsertManyTx(_ context.Context, tx *sql.Tx, jobs []narrator.Job) error {
	if tx == nil {
		return errors.New("no transaction")
	}
	for _, job := range jobs {
		if err := e.rec.Record(job); err != nil {
			return err
		}
	}
	return nil
}

func (e recorderJobs) SynthesisHead(context.Context, *sql.Tx) (int64, error) {
	return e.rec.SynthesisHead(), nil
}

func (e recorderJobs) SupersedeSynthesis(_ context.Context, _ *sql.Tx, audioID int64) error {
	return e.rec.Supersede(audioID)
}

func (e recorderJobs) RemoveDeliveryJobs(_ context.Context, _ *sql.Tx, ids []int64) error {
	return e.rec.RemoveDeliveryJobs(ids)
}

func (recorderJobs) Prepare(context.Context) error { return nil }

// suiteOptions returns the Options the store suite opens a store with:
// rec as its job inserter, renderer of events and tracer of effects, and
// the suite's limits.
func suiteOptions(rec *storetest.Recorder) Options {
	opts := withJobs(recorderJobs{rec})
	opts.EventBody = rec.EventBody
	opts.EffectFunc = rec.Effect
	opts.FeedPings = rec.FeedPings()
	opts.Limits = storetest.SuiteLimits
	return opts
}

// withJobs returns Options whose job inserter is j.
func withJobs(j JobInserter) Options {
	return Options{Jobs: j}
}

// mustProject creates an account and an API project of it in s.
func mustProject(tb testing.TB, s *Store) *narrator.Project {
	tb.Helper()
	acc := &narrator.Account{Name: "Acme"}
	if err := s.CreateAccount(tb.Context(), acc); err != nil {
		tb.Fatal(err)
	}
	p := &narrator.Project{AccountID: acc.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := s.CreateProject(tb.Context(), p); err != nil {
		tb.Fatal(err)
	}
	return p
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

// mustOpenQueue opens and migrates a store in a new directory with River's
// queue (not started) and tables, as the server does: the database's
// pools, the queue on its writer, then the store. (sqlitetest.Open does
// the same for other packages; this package's tests cannot import it.)
func mustOpenQueue(tb testing.TB) *Store {
	tb.Helper()
	db, err := OpenDB(tb.Context(), filepath.Join(tb.TempDir(), "narrator.db"), 0)
	if err != nil {
		tb.Fatal(err)
	}
	q, err := jobs.NewSQLite(db.Writer(), jobs.Config{})
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	s := New(db, Options{Jobs: q})
	tb.Cleanup(func() { s.Close() })
	if err := jobs.MigrateSQLite(tb.Context(), s.DB()); err != nil {
		tb.Fatal(err)
	}
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// The store has every method of the suite's interface.
var _ storetest.SchemaStore = (*Store)(nil)

func TestStore(t *testing.T) {
	t.Parallel()
	runSuite(t, false)
}

// TestStoreWithoutReadCache runs the store suite with the read cache off:
// every read goes to the database, the simple path.
func TestStoreWithoutReadCache(t *testing.T) {
	t.Parallel()
	runSuite(t, true)
}

func runSuite(t *testing.T, noReadCache bool) {
	storetest.Run(t, func(t *testing.T, now func() time.Time, rec *storetest.Recorder) storetest.Store {
		opts := suiteOptions(rec)
		opts.NoReadCache = noReadCache
		s := mustOpen(t, opts)
		s.Now = now
		return s
	})
}

func TestPragmas(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, Options{ReadConns: 3})
	ctx := t.Context()
	want := map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"busy_timeout": "10000",
		"synchronous":  "2", // FULL: every commit is fsynced
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

// TestTimesStoredAsMicroseconds checks the stored form of a time; the
// suite checks that times read back as written.
func TestTimesStoredAsMicroseconds(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, Options{})
	s.Now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3*3600)) }
	a := &narrator.Account{Name: "Acme"}
	if err := s.CreateAccount(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	var stored int64
	if err := s.DB().QueryRowContext(t.Context(), `SELECT created_at FROM accounts WHERE id = ?`, a.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2025, 1, 2, 0, 4, 5, 123456000, time.UTC).UnixMicro(); stored != want {
		t.Errorf("stored created_at = %d, want %d", stored, want)
	}
}

// tableJobs writes each job to the test_jobs table inside the caller's
// transaction, as River does, then passes it to a recorder; it is
// recorderJobs otherwise.
type tableJobs struct{ recorderJobs }

func (j tableJobs) InsertTx(ctx context.Context, tx *sql.Tx, job narrator.Job) error {
	row, err := storetest.JobRow(job)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO test_jobs (job) VALUES (?)`, row); err != nil {
		return err
	}
	return j.rec.Record(job)
}

func (j tableJobs) InsertManyTx(ctx context.Context, tx *sql.Tx, jobs []narrator.Job) error {
	for _, job := range jobs {
		if err := j.InsertTx(ctx, tx, job); err != nil {
			return err
		}
	}
	return nil
}

func TestDatabase(t *testing.T) {
	t.Parallel()
	storetest.RunDatabase(t, func(t *testing.T) storetest.Database {
		path := filepath.Join(t.TempDir(), "narrator.db")
		admin, err := Open(t.Context(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.Close() })
		if _, err := admin.DB().ExecContext(t.Context(), `CREATE TABLE test_jobs (id INTEGER PRIMARY KEY, job TEXT NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		return storetest.Database{
			Open: func(t *testing.T, now func() time.Time, rec *storetest.Recorder) storetest.SchemaStore {
				var opts Options
				if rec != nil {
					opts = withJobs(tableJobs{recorderJobs{rec}})
				}
				s, err := Open(t.Context(), path, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				s.Now = now
				return s
			},
			CommittedJobs: func(t *testing.T) []string {
				return append([]string{}, queryStrings(t, admin.DB(), `SELECT job FROM test_jobs ORDER BY id`)...)
			},
			CountRows: func(t *testing.T, table string) int {
				var n int
				if err := admin.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
			RecordMigration: func(t *testing.T, version int) {
				if _, err := admin.DB().ExecContext(t.Context(), `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)`,
					version, fmt.Sprintf("%04d_future.sql", version)); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
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
	p := mustProject(t, s)
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
		{"list", listAudiosPageSQL, []any{1, 0, 50, 0}, "audios_seq"},
		{"newest", newestSeqSQL, []any{1}, "audios_seq"},
		{"list media", listPageMediaSQL, []any{1, 0, 50, 0}, "sqlite_autoindex_media_1"},
		{"external id", sqlstore.FindLiveAudioByExternalIDSQL, []any{1, "x"}, "audios_external_id"},
		{"one by id", findLiveAudioWithMediaByIDSQL, []any{1, 1}, "sqlite_autoindex_media_1"},
		{"one by external id", findLiveAudioWithMediaByExternalIDSQL, []any{1, "x"}, "audios_external_id"},
		{"authorize project", authorizeProjectSQL, []any{1, []byte("x")}, "sqlite_autoindex_api_keys_1"},
		{"media", sqlstore.LoadMediaSQL(dialect{}), []any{"[1,2]"}, "sqlite_autoindex_media_1"},
		{"api key", `SELECT account_id FROM api_keys WHERE hash = ? AND revoked_at IS NULL`, []any{[]byte("x")}, "sqlite_autoindex_api_keys_1"},
		{"article url", findAudioByArticleURLSQL, []any{1, "https://x.test/a"}, "audios_article_url"},
		{"audio listens", sqlstore.AudioListensSQL, []any{1}, "PRIMARY KEY (audio_id=?)"},
		{"project listens", sqlstore.ProjectListensSQL, []any{1}, "PRIMARY KEY (project_id=?)"},
		{"feed", sqlstore.FeedByTokenSQL, []any{"x"}, "sqlite_autoindex_feeds_1"},
		{"feed audios", sqlstore.FeedAudiosSQL(dialect{}), []any{2000, 1, 0, 300}, "audios_feed"},
		{"feed publications", sqlstore.FeedPublicationsSQL(dialect{}), []any{"[1,2]"}, "SEARCH audio_publications USING INTEGER PRIMARY KEY"},
		{"feed audios published", sqlstore.FeedAudiosSQL(dialect{}), []any{2000, 1, 0, 300}, "SEARCH p USING INTEGER PRIMARY KEY"},
		{"feed changed", sqlstore.AudiosChangedSQL, []any{1, 1}, "audios_changed"},
		{"feed deleted", sqlstore.AudiosChangedSQL, []any{1, 1}, "audios_list"},
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
		if (strings.HasPrefix(tc.name, "list") || tc.name == "article url" || tc.name == "project listens" || strings.HasPrefix(tc.name, "feed")) && strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s: plan %q sorts at run time", tc.name, text)
		}
	}
}

// queryStrings returns the one text column of query's rows, in order.
func queryStrings(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
