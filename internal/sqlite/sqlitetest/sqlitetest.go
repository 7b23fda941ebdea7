// Package sqlitetest opens SQLite stores for the tests of the packages that
// use one: a new migrated database with River's tables and queue, built as
// the server builds it. It is for tests only.
package sqlitetest

import (
	"database/sql"
	"path/filepath"
	"testing"

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
