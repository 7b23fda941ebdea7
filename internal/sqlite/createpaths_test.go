package sqlite

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/storetest"
)

// TestCreatePaths compares the group commit of creates with the reference
// create (Options.NoGroupCommit): the same outcomes, rows and jobs.
func TestCreatePaths(t *testing.T) {
	t.Parallel()
	path := func(name string, noGroup bool) storetest.CreatePath {
		return storetest.CreatePath{Name: name, Open: func(t *testing.T, now func() time.Time, rec *storetest.Recorder) (storetest.Store, storetest.TablesFunc) {
			opts := suiteOptions(rec)
			opts.NoGroupCommit = noGroup
			s := mustOpen(t, opts)
			s.Now = now
			return s, func(t *testing.T) map[string][]map[string]string { return dumpTables(t, s.DB()) }
		}}
	}
	storetest.RunCreatePaths(t, path("reference", true), path("group commit", false))
}

// dumpTables reads every table of the store's schema, as
// storetest.TablesFunc returns them.
func dumpTables(t *testing.T, db *sql.DB) map[string][]map[string]string {
	t.Helper()
	ctx := t.Context()
	tables := queryStrings(t, db, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'river%' AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' ORDER BY name`)
	out := map[string][]map[string]string{}
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := map[string]string{}
			for i, c := range cols {
				switch v := vals[i].(type) {
				case nil:
					row[c] = "NULL"
				case []byte:
					row[c] = storetest.BytesText(v)
				default:
					row[c] = fmt.Sprint(v)
				}
			}
			out[table] = append(out[table], row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out
}
