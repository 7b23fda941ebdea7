package jobs_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// seamRiverVersion is the River the seam (insert.go) was written against.
const seamRiverVersion = "v0.47.0"

// riverColumns are the columns of River's job table, with their types, as
// River seamRiverVersion makes them, on each database.
var riverColumns = map[string][]string{
	"sqlite": {
		"id INTEGER", "args BLOB", "attempt INTEGER", "attempted_at timestamp", "attempted_by BLOB",
		"created_at timestamp", "errors BLOB", "finalized_at timestamp", "kind TEXT", "metadata BLOB",
		"priority INTEGER", "queue TEXT", "state TEXT", "scheduled_at timestamp", "tags BLOB",
		"unique_key BLOB", "unique_states INTEGER", "max_attempts INTEGER",
	},
	"postgres": {
		"id bigint", "state USER-DEFINED", "attempt smallint", "max_attempts smallint",
		"attempted_at timestamp with time zone", "created_at timestamp with time zone",
		"finalized_at timestamp with time zone", "scheduled_at timestamp with time zone", "priority smallint",
		"args jsonb", "attempted_by ARRAY", "errors ARRAY", "kind text", "metadata jsonb", "queue text",
		"tags ARRAY", "unique_key bytea", "unique_states bit",
	},
}

// TestSeamRiverColumns: River's job table has the columns, and types, the
// seam was written against, and the seam writes only columns of it, so
// that a River upgrade that changes the table fails here: then check the
// seam's statements against River's insert, and update riverColumns and
// seamRiverVersion.
func TestSeamRiverColumns(t *testing.T) {
	t.Parallel()
	if got := riverVersion(t); got != seamRiverVersion {
		t.Errorf("River is %s, the seam was written against %s: check its statements (insert.go) against River's insert", got, seamRiverVersion)
	}
	for name, columns := range map[string]func(t *testing.T) []string{
		"sqlite": func(t *testing.T) []string {
			st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
			return sqlitetest.Strings(t, st.DB(), `SELECT name || ' ' || type FROM pragma_table_info('river_job') ORDER BY cid`)
		},
		"postgres": func(t *testing.T) []string {
			pool := riverPool(t)
			rows, err := pool.Query(t.Context(), `SELECT column_name || ' ' || data_type FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'river_job' ORDER BY ordinal_position`)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			return got
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := columns(t)
			if diff := cmp.Diff(riverColumns[name], got); diff != "" {
				t.Errorf("River's job table changed (-River %s +now):\n%s", seamRiverVersion, diff)
			}
			names := make([]string, len(got))
			for i, c := range got {
				names[i], _, _ = strings.Cut(c, " ")
			}
			for _, c := range seamColumns(t, jobs.SeamInserts[name]) {
				if !slices.Contains(names, c) {
					t.Errorf("the seam writes %s, which River's job table lacks", c)
				}
			}
		})
	}
}

// riverVersion is the version of River the module requires (go.mod).
func riverVersion(t *testing.T) string {
	t.Helper()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/riverqueue/river (\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod does not require River")
	}
	return string(m[1])
}

// seamColumns are the columns an INSERT statement names.
func seamColumns(t *testing.T, insert string) []string {
	t.Helper()
	m := regexp.MustCompile(`INSERT INTO river_job \(([^)]*)\)`).FindStringSubmatch(insert)
	if m == nil {
		t.Fatalf("no column list in %s", insert)
	}
	return strings.Split(m[1], ", ")
}

// TestSeamWritesRiversRow: the seam writes, for new synthesis jobs, the
// rows River's own insert (InsertManyFastTx) writes for them, column for
// column, but for their IDs and creation times, which it takes from the
// database's clock; on SQLite those are compared by their format. A River
// upgrade that changes the row it writes, or the table's defaults, fails
// here.
func TestSeamWritesRiversRow(t *testing.T) {
	t.Parallel()
	js := synthesisJobs(2, 5)
	cfg := jobs.Config{MaxAttempts: 3}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, q := sqlitetest.Open(t, sqlite.Options{}, cfg)
		db := st.DB()
		cols := sqlitetest.Strings(t, db, `SELECT name FROM pragma_table_info('river_job') WHERE name NOT IN ('id', 'created_at') ORDER BY cid`)
		for i, c := range cols {
			cols[i] = fmt.Sprintf("quote(%s)", c)
		}
		read := `SELECT ` + strings.Join(cols, " || ' ' || ") + ` || ' ' || typeof(created_at) || length(created_at) FROM river_job ORDER BY id`
		rows := func(insert func(context.Context, *sql.Tx, []narrator.SynthesizeJob) error) []string {
			tx, err := db.BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if err := insert(t.Context(), tx, js); err != nil {
				t.Fatal(err)
			}
			return sqlitetest.Strings(t, tx, read)
		}
		river, seam := rows(q.InsertSynthesesRiver), rows(q.InsertSynthesesSQLite)
		if len(river) != len(js) {
			t.Fatalf("River wrote %d rows, want %d", len(river), len(js))
		}
		if diff := cmp.Diff(river, seam); diff != "" {
			t.Errorf("the seam's rows differ from River's (-River +seam):\n%s", diff)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pool := riverPool(t)
		q, err := jobs.NewPostgres(pool, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := func(insert func(context.Context, pgx.Tx) error) []map[string]any {
			tx, err := pool.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(t.Context())
			if err := insert(t.Context(), tx); err != nil {
				t.Fatal(err)
			}
			r, err := tx.Query(t.Context(), `SELECT to_jsonb(j) - 'id' - 'created_at' FROM river_job j ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pgx.CollectRows(r, pgx.RowTo[map[string]any])
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		river := rows(func(ctx context.Context, tx pgx.Tx) error { return q.InsertSynthesesRiver(ctx, tx, js) })
		seam := rows(func(ctx context.Context, tx pgx.Tx) error {
			b := &pgx.Batch{}
			if err := q.QueueInsertMany(b, asJobs(js)); err != nil {
				return err
			}
			return tx.SendBatch(ctx, b).Close()
		})
		if len(river) != len(js) {
			t.Fatalf("River wrote %d rows, want %d", len(river), len(js))
		}
		if diff := cmp.Diff(river, seam); diff != "" {
			t.Errorf("the seam's rows differ from River's (-River +seam):\n%s", diff)
		}
	})
}

// TestSeamTakesNewSynthesesOnly: a synthesis job that waits for another
// attempt's lease (narrator.SynthesizeJob.After) is not the seam's: on
// SQLite it goes through River's insert, at its time and priority, and
// PostgreSQL's batch refuses it.
func TestSeamTakesNewSynthesesOnly(t *testing.T) {
	t.Parallel()
	after := narrator.SynthesizeJob{AudioID: 1, Revision: 1, Round: 7, After: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, q := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
		tx, err := st.DB().BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := q.InsertManyTx(t.Context(), tx, []narrator.Job{after}); err != nil {
			t.Fatal(err)
		}
		got := sqlitetest.Strings(t, tx, `SELECT priority || ' ' || scheduled_at FROM river_job`)
		if want := []string{"1 2030-01-02 03:04:05.000"}; !slices.Equal(got, want) {
			t.Errorf("priority and scheduled_at %q, want %q", got, want)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		q, err := jobs.NewPostgres(riverPool(t), jobs.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.QueueInsertMany(&pgx.Batch{}, []narrator.Job{after}); err == nil {
			t.Error("QueueInsertMany took a job that waits for a lease")
		}
	})
}

// riverPool is a pool on a new PostgreSQL database with River's tables.
func riverPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := postgres.OpenPool(t.Context(), pgtest.NewDatabase(t, riverTemplate))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
