package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/sqlstore"
	"github.com/narrator/narrator/internal/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The store has every method of the suite's interface, which are those of
// the SQLite store.
var _ storetest.SchemaStore = (*postgres.Store)(nil)

const createTestJobsSQL = `CREATE TABLE test_jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, job text NOT NULL)`

// migrated is a migrated database with the test_jobs table.
var migrated = pgtest.Migrated("store", func(ctx context.Context, s *postgres.Store) error {
	_, err := s.Pool().Exec(ctx, createTestJobsSQL)
	return err
})

// recorderJobs passes jobs to a storetest.Recorder.
type recorderJobs struct{ rec *storetest.Recorder }

func (j recorderJobs) InsertTx(_ context.Context, tx pgx.Tx, job narrator.Job) error {
	if tx == nil {
		return errors.New("no transaction")
	}
	return j.rec.Record(job)
}

func (j recorderJobs) SupersedeSynthesis(_ context.Context, _ pgx.Tx, audioID int64) error {
	return j.rec.Supersede(audioID)
}

func (j recorderJobs) RemoveDeliveryJobs(_ context.Context, _ pgx.Tx, ids []int64) error {
	return j.rec.RemoveDeliveryJobs(ids)
}

// QueueInsertMany records the jobs once b has run this far: a group
// planned ahead whose checks fail inserts none.
func (j recorderJobs) QueueInsertMany(b *pgx.Batch, jobs []narrator.Job) error {
	if err := j.rec.Failing(); err != nil {
		return err
	}
	b.Queue(`SELECT`).Exec(func(pgconn.CommandTag) error {
		for _, job := range jobs {
			if err := j.rec.Record(job); err != nil {
				return err
			}
		}
		return nil
	})
	return nil
}

func (recorderJobs) Unannounce() {}

func (j recorderJobs) SynthesisHead(context.Context, pgx.Tx) (int64, error) {
	return j.rec.SynthesisHead(), nil
}

func (j recorderJobs) QueueSynthesisHead(_ *pgx.Batch, head *int64) {
	*head = j.rec.SynthesisHead()
}

func (j recorderJobs) QueueExpectSynthesisHead(b *pgx.Batch, head int64) {
	b.Queue(`SELECT narrator_expect($1)`, j.rec.SynthesisHead() == head)
}

// tableJobs writes each job to the test_jobs table inside the caller's
// transaction, as River does, then passes it to a recorder.
type tableJobs struct{ rec *storetest.Recorder }

func (j tableJobs) InsertTx(ctx context.Context, tx pgx.Tx, job narrator.Job) error {
	row, err := storetest.JobRow(job)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO test_jobs (job) VALUES ($1)`, row); err != nil {
		return err
	}
	return j.rec.Record(job)
}

func (j tableJobs) SupersedeSynthesis(_ context.Context, _ pgx.Tx, audioID int64) error {
	return j.rec.Supersede(audioID)
}

func (j tableJobs) RemoveDeliveryJobs(_ context.Context, _ pgx.Tx, ids []int64) error {
	return j.rec.RemoveDeliveryJobs(ids)
}

func (j tableJobs) QueueInsertMany(b *pgx.Batch, jobs []narrator.Job) error {
	if err := j.rec.Failing(); err != nil {
		return err
	}
	for _, job := range jobs {
		row, err := storetest.JobRow(job)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO test_jobs (job) VALUES ($1)`, row).Exec(func(pgconn.CommandTag) error {
			return j.rec.Record(job)
		})
	}
	return nil
}

func (tableJobs) Unannounce() {}

func (j tableJobs) SynthesisHead(context.Context, pgx.Tx) (int64, error) {
	return j.rec.SynthesisHead(), nil
}

func (j tableJobs) QueueSynthesisHead(_ *pgx.Batch, head *int64) {
	*head = j.rec.SynthesisHead()
}

func (j tableJobs) QueueExpectSynthesisHead(b *pgx.Batch, head int64) {
	b.Queue(`SELECT narrator_expect($1)`, j.rec.SynthesisHead() == head)
}

// withJobs returns Options whose job inserter is j.
func withJobs(j postgres.JobInserter) postgres.Options {
	return postgres.Options{Jobs: j}
}

// mustProject creates an account and an API project of it in s.
func mustProject(t *testing.T, s *postgres.Store) *narrator.Project {
	t.Helper()
	acct := &narrator.Account{Name: "Acme"}
	if err := s.CreateAccount(t.Context(), acct); err != nil {
		t.Fatal(err)
	}
	return mustProjectOf(t, s, acct.ID)
}

// mustProjectOf creates an API project of the account accountID in s.
func mustProjectOf(t *testing.T, s *postgres.Store, accountID int64) *narrator.Project {
	t.Helper()
	p := &narrator.Project{AccountID: accountID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := s.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// eventually waits until ok, checking it every few milliseconds, and
// fails t if it is still false after 10 s; what says what was awaited.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, still not: %s", what)
		}
	}
}

// audioRows counts the rows of the project projectID in the audios table
// of pool's database, deleted or not.
func audioRows(t *testing.T, pool *pgxpool.Pool, projectID int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM audios WHERE project_id = $1`, projectID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// lockWaiters counts the statements like pattern, on pool's database,
// that wait for a lock.
func lockWaiters(t *testing.T, pool *pgxpool.Pool, pattern string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`, pattern).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// mustOpen opens a store on the database at url, closing it at cleanup.
func mustOpen(tb testing.TB, url string, opts postgres.Options) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(tb.Context(), url, opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	t.Parallel()
	runSuite(t, false)
}

// TestStoreWithoutPlanAhead runs the store suite with every group of
// creates reading before it plans: the simple path.
func TestStoreWithoutPlanAhead(t *testing.T) {
	t.Parallel()
	runSuite(t, true)
}

func runSuite(t *testing.T, noPlanAhead bool) {
	pgtest.URL(t)
	storetest.Run(t, func(t *testing.T, now func() time.Time, rec *storetest.Recorder) storetest.Store {
		opts := withJobs(recorderJobs{rec})
		opts.EventBody = rec.EventBody
		opts.EffectFunc = rec.Effect
		opts.FeedPings = rec.FeedPings()
		opts.Limits = storetest.SuiteLimits
		opts.NoPlanAhead = noPlanAhead
		s := mustOpen(t, pgtest.NewDatabase(t, migrated), opts)
		s.Now = now
		return s
	})
}

func TestDatabase(t *testing.T) {
	t.Parallel()
	pgtest.URL(t)
	storetest.RunDatabase(t, func(t *testing.T) storetest.Database {
		url := pgtest.NewDatabase(t, pgtest.Template{})
		admin := mustOpen(t, url, postgres.Options{})
		if _, err := admin.Pool().Exec(t.Context(), createTestJobsSQL); err != nil {
			t.Fatal(err)
		}
		return storetest.Database{
			Open: func(t *testing.T, now func() time.Time, rec *storetest.Recorder) storetest.SchemaStore {
				var opts postgres.Options
				if rec != nil {
					opts = withJobs(tableJobs{rec})
				}
				s := mustOpen(t, url, opts)
				s.Now = now
				return s
			},
			CommittedJobs: func(t *testing.T) []string {
				rows, err := admin.Pool().Query(t.Context(), `SELECT job FROM test_jobs ORDER BY id`)
				if err != nil {
					t.Fatal(err)
				}
				jobs, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				if jobs == nil {
					jobs = []string{}
				}
				return jobs
			},
			CountRows: func(t *testing.T, table string) int {
				var n int
				if err := admin.Pool().QueryRow(t.Context(), `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
			RecordMigration: func(t *testing.T, version int) {
				if _, err := admin.Pool().Exec(t.Context(), `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())`,
					version, fmt.Sprintf("%04d_future.sql", version)); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	pgtest.URL(t)
	for _, url := range []string{
		"postgres://narrator:s3cret-pw@127.0.0.1:1/narrator?connect_timeout=2",
		"postgres://narrator:s3cret-pw@127.0.0.1:1/narrator?sslmode=nonsense",
		"host=127.0.0.1 port=1 password=s3cret-pw sslmode=nonsense",
	} {
		s, err := postgres.Open(t.Context(), url, postgres.Options{})
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", url)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
}

// bulkLoadSQL fills two projects with audios as doc.go tells a bulk load
// to: audios (numbered in their project by age, seq), their media, and
// projects.audio_count.
const bulkLoadSQL = `
INSERT INTO accounts (name, created_at) VALUES ('Acme', now());
INSERT INTO projects (account_id, title, type, language, title_voice, body_voice, created_at)
SELECT id, 'News ' || n, 'api', 'en_US', 'Mark', 'Sally', now() FROM accounts, generate_series(1, 2) n;
INSERT INTO audios (project_id, external_id, title, body, author, article_url, state, created_at, updated_at, seq)
SELECT p.id, 'ext-' || g, 'Title ' || g, 'Body.', '', '', 'processed',
	now() - g * interval '1 second', now() - g * interval '1 second', 10001 - g
FROM projects p, generate_series(1, 10000) g;
INSERT INTO media (audio_id, content_type, key)
SELECT a.id, t, a.id || '/audio.' || t FROM audios a, unnest(ARRAY['mp3', 'm3u8']) t;
UPDATE projects p SET audio_count = (SELECT count(*) FROM audios a WHERE a.project_id = p.id AND a.deleted_at IS NULL);
UPDATE audios SET article_url = 'https://news.test/' || id WHERE id % 2 = 0;
INSERT INTO audio_listens (audio_id, event, day, count)
SELECT a.id, 'play', current_date - d, 1 FROM audios a, generate_series(0, 2) d;
INSERT INTO project_listens (project_id, day, event, count)
SELECT p.id, current_date - d, e, 10 FROM projects p, generate_series(0, 999) d,
	unnest(ARRAY['load', 'play', 'progress_25', 'progress_50', 'progress_75', 'complete']) e;
ANALYZE;
`

// TestQueryPlans checks, on bulk-loaded projects, that the hot queries use
// their indexes and that page 1 of the list is read in index order without
// a sort, and that the store reads what the bulk load wrote.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := mustOpen(t, pgtest.NewDatabase(t, migrated), postgres.Options{})
	if _, err := s.Pool().Exec(ctx, bulkLoadSQL); err != nil {
		t.Fatal(err)
	}
	projects, err := s.ListProjects(ctx, 0)
	if err != nil || len(projects) != 2 || projects[0].AudioCount != 10000 {
		t.Fatalf("projects = %+v, %v", projects, err)
	}
	p := projects[0]
	list, err := s.ListAudios(ctx, p.ID, time.Time{}, 1, 50)
	if err != nil || len(list) != 50 || list[0].ExternalID != "ext-1" || list[0].Media[0].Key == "" {
		t.Fatalf("page 1 = %d audios, %v", len(list), err)
	}
	a, err := s.FindAudio(ctx, p.ID, "ext-20")
	if err != nil || a.ProjectID != p.ID || len(a.Media) != 2 || a.Media[0].ContentType != narrator.ContentTypeMP3 || len(a.Metadata) != 0 {
		t.Fatalf("FindAudio(ext-20) = %+v, %v", a, err)
	}
	for _, tc := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"list", postgres.ListAudiosSQL, []any{p.ID, 9950, 10000, time.Time{}}, "Index Scan Backward using audios_seq"},
		{"list deep", postgres.ListAudiosSQL, []any{p.ID, 0, 50, time.Time{}}, "Index Scan Backward using audios_seq"},
		{"external id", postgres.Numbered(sqlstore.FindLiveAudioByExternalIDSQL), []any{p.ID, "ext-20"}, "audios_external_id"},
		{"id", postgres.FindLiveAudioByIDSQL, []any{a.ID, p.ID}, "audios_pkey"},
		{"media", postgres.LoadMediaSQL, []any{[]int64{a.ID, a.ID + 1}}, "media_audio_id_content_type_key"},
		{"article url", postgres.FindAudioByArticleURLSQL, []any{p.ID, "https://news.test/20"}, "audios_article_url"},
		{"audio listens", postgres.Numbered(sqlstore.AudioListensSQL), []any{a.ID}, "audio_listens_pkey"},
		{"project listens", postgres.Numbered(sqlstore.ProjectListensSQL), []any{p.ID}, "project_listens_pkey"},
		{"feed audios", postgres.FeedAudiosSQL, []any{narrator.FeedBodyChars, p.ID, time.Now(), narrator.MaxFeedItems}, "Index Scan using audios_feed"},
		{"feed changed", postgres.Numbered(sqlstore.AudiosChangedSQL), []any{p.ID, p.ID}, "Index Only Scan Backward using audios_changed"},
		{"feed deleted", postgres.Numbered(sqlstore.AudiosChangedSQL), []any{p.ID, p.ID}, "Index Only Scan Backward using audios_deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := s.Pool().Query(ctx, "EXPLAIN "+tc.query, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			plan := strings.Join(lines, "\n")
			t.Logf("%s:\n%s", tc.name, plan)
			if !strings.Contains(plan, tc.want) {
				t.Errorf("plan does not use %s", tc.want)
			}
			if (tc.name == "list" || tc.name == "feed audios" || tc.name == "article url" || tc.name == "project listens") && strings.Contains(plan, "Sort") {
				t.Errorf("the list is sorted at run time")
			}
		})
	}
}
