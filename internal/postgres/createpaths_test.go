package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// TestCreatePaths compares the fast paths of creates, the group commit
// with and without planning ahead, with the reference create
// (Options.NoGroupCommit): the same outcomes, rows and jobs.
func TestCreatePaths(t *testing.T) {
	t.Parallel()
	pgtest.URL(t)
	path := func(name string, opts postgres.Options) storetest.CreatePath {
		return storetest.CreatePath{Name: name, Open: func(t *testing.T, now func() time.Time, rec *storetest.Recorder) (storetest.Store, storetest.TablesFunc) {
			opts.Jobs = recorderJobs{rec}
			opts.EventBody = rec.EventBody
			opts.EffectFunc = rec.Effect
			opts.Limits = storetest.SuiteLimits
			s := mustOpen(t, pgtest.NewDatabase(t, migrated), opts)
			s.Now = now
			return s, func(t *testing.T) map[string][]map[string]string { return dumpTables(t, s.Pool()) }
		}}
	}
	storetest.RunCreatePaths(t, path("reference", postgres.Options{NoGroupCommit: true}),
		path("group commit", postgres.Options{NoPlanAhead: true}),
		path("plan ahead", postgres.Options{}))
}

// dumpTables reads every table of the store's schema, as
// storetest.TablesFunc returns them.
func dumpTables(t *testing.T, pool *pgxpool.Pool) map[string][]map[string]string {
	t.Helper()
	ctx := t.Context()
	rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
			AND table_name NOT LIKE 'river%' AND table_name NOT IN ('schema_migrations', 'test_jobs')`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]string{}
	for _, table := range tables {
		rows, err := pool.Query(ctx, `SELECT * FROM `+pgx.Identifier{table}.Sanitize())
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			row := map[string]string{}
			for i, f := range rows.FieldDescriptions() {
				switch v := vals[i].(type) {
				case nil:
					row[f.Name] = "NULL"
				case []byte:
					row[f.Name] = storetest.BytesText(v)
				case time.Time:
					row[f.Name] = v.UTC().Format(time.RFC3339Nano)
				default:
					row[f.Name] = fmt.Sprint(v)
				}
			}
			out[table] = append(out[table], row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
