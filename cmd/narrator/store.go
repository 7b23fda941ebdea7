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

// withStore opens the store that data names, calls do with it, and prints
// what do returns as one line of JSON before the store closes. An error
// from do is returned as it is, and nothing is printed.
func withStore(ctx context.Context, e *env, data func() (config.Backends, error), do func(st dataStore) (any, error)) error {
	return withBackends(ctx, e, data, func(bk *backends) (any, error) { return do(bk.store) })
}

// withBackends is withStore for a command that also inserts jobs outside a
// store's write (openCLIBackends).
func withBackends(ctx context.Context, e *env, data func() (config.Backends, error), do func(bk *backends) (any, error)) error {
	return useStore(ctx, e, data, func(bk *backends) error {
		out, err := do(bk)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, out)
	})
}

// useStore opens the backends that data names, calls do with them, and
// closes the store; do prints what it has to say.
func useStore(ctx context.Context, e *env, data func() (config.Backends, error), do func(bk *backends) error) error {
	bk, err := openCLIBackends(ctx, e, data)
	if err != nil {
		return err
	}
	defer bk.store.Close()
	return do(bk)
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
	return useStore(ctx, e, data, func(*backends) error {
		_, err := fmt.Fprintln(e.stdout, "database is up to date")
		return err
	})
}
