package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/narrator/narrator/internal/config"
)

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// migrateCommand is `narrator migrate`.
type migrateCommand struct{ e *env }

// Run runs `narrator migrate`.
func (cmd migrateCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "migrate", "migrate [--data DIR] [--database URL] [--media URL]")
	data := config.BackendFlags(fs, e.getenv)
	if err := parse(fs, args); err != nil {
		return err
	}
	st, err := openStore(ctx, e, data)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintln(e.stdout, "database is up to date")
	return nil
}
