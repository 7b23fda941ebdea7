package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/sqlite"
)

// openStore opens the data directory's database, creating the directory
// and bringing the schema (Narrator's and River's) up to date.
func openStore(ctx context.Context, dataDir string) (*sqlite.Store, error) {
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	// Commands enqueue jobs (re-synthesis) for a server to work.
	st, err := sqlite.Open(ctx, config.DBPath(dataDir), sqlite.Options{
		Jobs: func(db *sql.DB) (sqlite.JobInserter, error) { return jobs.NewSQLite(db, jobs.Config{}) },
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("migrate database: %w", err)
	}
	if err := jobs.MigrateSQLite(ctx, st.DB()); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func runMigrate(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "migrate", "migrate [--data DIR]")
	data := config.DataFlag(fs, e.getenv)
	if err := parse(fs, args); err != nil {
		return err
	}
	st, err := openStore(ctx, *data)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintln(e.stdout, "database is up to date:", config.DBPath(*data))
	return nil
}
