package sqlstore

import (
	"context"
	"fmt"
)

// inTx runs fn in a transaction that begin starts, and ends it: it commits
// it when commit is set and fn returns no error, and rolls it back
// otherwise, a panic of fn included. Errors beginning and committing are
// wrapped with name (the commit's as "name: commit"); fn's own error is
// returned as it is, with fn's value, so that the codes of narrator.Error
// pass through as fn gives them.
func inTx[T any](ctx context.Context, name string, begin func(context.Context) (Tx, error), commit bool, fn func(tx Tx) (T, error)) (T, error) {
	var zero T
	tx, err := begin(ctx)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", name, err)
	}
	defer tx.Rollback(ctx)
	v, err := fn(tx)
	if err != nil || !commit {
		return v, err
	}
	if err := tx.Commit(ctx); err != nil {
		return zero, fmt.Errorf("%s: commit: %w", name, err)
	}
	return v, nil
}

// ReadV runs fn in a transaction of s that only reads (DB.BeginRead), as
// inTx does. A store runs its own reads with it too, its transaction
// being the store's Tx.
func ReadV[T any](ctx context.Context, s *Store, name string, fn func(tx Tx) (T, error)) (T, error) {
	return inTx(ctx, name, s.db.BeginRead, false, fn)
}

// WriteV runs fn in a transaction of s that writes (DB.BeginWrite) and
// commits it if fn returns no error, as inTx does.
func WriteV[T any](ctx context.Context, s *Store, name string, fn func(tx Tx) (T, error)) (T, error) {
	return inTx(ctx, name, s.db.BeginWrite, true, fn)
}

// read is ReadV for an fn that returns only an error.
func (s *Store) read(ctx context.Context, name string, fn func(tx Tx) error) error {
	_, err := ReadV(ctx, s, name, noValue(fn))
	return err
}

// write is WriteV for an fn that returns only an error.
func (s *Store) write(ctx context.Context, name string, fn func(tx Tx) error) error {
	_, err := WriteV(ctx, s, name, noValue(fn))
	return err
}

// noValue adapts fn to inTx.
func noValue(fn func(tx Tx) error) func(tx Tx) (struct{}, error) {
	return func(tx Tx) (struct{}, error) { return struct{}{}, fn(tx) }
}
