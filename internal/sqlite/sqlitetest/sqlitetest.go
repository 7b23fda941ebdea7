// Package sqlitetest opens SQLite stores for the tests of the packages that
// use one: a new migrated database with River's tables and queue, built as
// the server builds it. It is for tests only.
package sqlitetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/sqlite"
)

// Open returns a store on a new database in tb's temporary directory, and
// its River queue of cfg, not started: the database's pools, the queue on
// its writer, then the store with opts and the queue as its Jobs. Both the
// store's schema and River's are migrated. The store is closed at tb's
// cleanup.
func Open(tb testing.TB, opts sqlite.Options, cfg jobs.Config) (*sqlite.Store, *jobs.Queue[*sql.Tx]) {
	tb.Helper()
	return OpenPath(tb, filepath.Join(tb.TempDir(), "narrator.db"), opts, cfg)
}

// OpenPath is Open with the database file at path, for tests that read the
// file.
func OpenPath(tb testing.TB, path string, opts sqlite.Options, cfg jobs.Config) (*sqlite.Store, *jobs.Queue[*sql.Tx]) {
	tb.Helper()
	ctx := tb.Context()
	db, err := sqlite.OpenDB(ctx, path, opts.ReadConns)
	if err != nil {
		tb.Fatal(err)
	}
	q, err := jobs.NewSQLite(db.Writer(), cfg)
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	opts.Jobs = q
	st := sqlite.New(db, opts)
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	// River's tables first: the store's Migrate prepares the queue's
	// statements on them.
	if err := jobs.MigrateSQLite(ctx, st.DB()); err != nil {
		tb.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return st, q
}

// Querier is what Strings reads from: a database, a connection or a
// transaction.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Strings returns the one text column of query's rows, in order, failing
// tb on any error.
func Strings(tb testing.TB, db Querier, query string, args ...any) []string {
	tb.Helper()
	rows, err := db.QueryContext(tb.Context(), query, args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return got
}

// QueuedResyntheses returns the resynthesis jobs in River's table of db,
// as they were queued, in the order of their IDs.
func QueuedResyntheses(tb testing.TB, db Querier) []narrator.ResynthesisJob {
	tb.Helper()
	var out []narrator.ResynthesisJob
	for _, raw := range Strings(tb, db, `SELECT json(args) FROM river_job WHERE kind = ? ORDER BY id`, narrator.ResynthesisJob{}.JobKind()) {
		var args jobs.ResynthesisArgs
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			tb.Fatalf("resynthesis job args %s: %v", raw, err)
		}
		out = append(out, narrator.ResynthesisJob{ProjectID: args.ProjectID, Phrase: args.Phrase, All: args.All})
	}
	return out
}
