package postgres_test

import (
	"fmt"
	"maps"
	"sync"
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
// (Options.NoGroupCommit): the same outcomes, rows and jobs. Each path
// must have run its way: the reference in no group, the group commit in
// groups that read first, plan-ahead in some groups planned ahead.
func TestCreatePaths(t *testing.T) {
	t.Parallel()
	pgtest.URL(t)
	path := func(name string, opts postgres.Options, want func(plans map[string]int) bool) storetest.CreatePath {
		return storetest.CreatePath{Name: name, Open: func(t *testing.T, now func() time.Time, rec *storetest.Recorder) (storetest.Store, storetest.TablesFunc) {
			opts.Jobs = recorderJobs{rec}
			opts.EventBody = rec.EventBody
			opts.EffectFunc = rec.Effect
			opts.Limits = storetest.SuiteLimits
			groups := &planCounts{plans: map[string]int{}}
			opts.Groups = groups
			s := mustOpen(t, pgtest.NewDatabase(t, migrated), opts)
			s.Now = now
			return s, func(t *testing.T) map[string][]map[string]string {
				if plans := groups.counts(); !want(plans) {
					t.Errorf("%s: groups by plan %v", name, plans)
				}
				return dumpTables(t, s.Pool())
			}
		}}
	}
	storetest.RunCreatePaths(t,
		path("reference", postgres.Options{NoGroupCommit: true}, func(p map[string]int) bool { return len(p) == 0 }),
		path("group commit", postgres.Options{NoPlanAhead: true}, func(p map[string]int) bool { return p["read"] > 0 && len(p) == 1 }),
		path("plan ahead", postgres.Options{}, func(p map[string]int) bool { return p["ahead"] > 0 }))
}

// planCounts counts groups of creates by plan (postgres.GroupRecorder).
type planCounts struct {
	mu    sync.Mutex
	plans map[string]int
}

func (c *planCounts) CreateGroup(plan string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plans[plan]++
}

func (c *planCounts) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.plans)
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
