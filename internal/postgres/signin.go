package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SignInFailureRetention is how long failed sign-ins are kept.
const SignInFailureRetention = 24 * time.Hour

const insertSignInFailureSQL = `INSERT INTO signin_failures (key, at) SELECT unnest($1::text[]), $2`

const pruneSignInFailuresSQL = `DELETE FROM signin_failures WHERE at < $1`

// RecordSignInFailure records a failed sign-in at time at under each key,
// and forgets failures older than SignInFailureRetention.
func (s *Store) RecordSignInFailure(ctx context.Context, keys []string, at time.Time) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("record sign-in failure: %w", err)
	}
	defer rollback(ctx, tx)
	at = at.UTC().Truncate(time.Microsecond)
	if _, err := tx.Exec(ctx, insertSignInFailureSQL, keys, at); err != nil {
		return fmt.Errorf("record sign-in failure: %w", err)
	}
	if _, err := tx.Exec(ctx, pruneSignInFailuresSQL, at.Add(-SignInFailureRetention)); err != nil {
		return fmt.Errorf("record sign-in failure: prune: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("record sign-in failure: commit: %w", err)
	}
	return nil
}

const recentSignInFailuresSQL = `
SELECT at FROM signin_failures WHERE key = $1 AND at >= $2 ORDER BY at DESC LIMIT $3`

// RecentSignInFailures returns the times of key's failures at or after
// since, newest first, at most limit of them.
func (s *Store) RecentSignInFailures(ctx context.Context, key string, since time.Time, limit int) ([]time.Time, error) {
	rows, err := s.pool.Query(ctx, recentSignInFailuresSQL, key, since.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("recent sign-in failures: %w", err)
	}
	times, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (time.Time, error) {
		var t time.Time
		err := r.Scan(&t)
		return t.UTC(), err
	})
	if err != nil {
		return nil, fmt.Errorf("recent sign-in failures: %w", err)
	}
	if times == nil {
		times = []time.Time{}
	}
	return times, nil
}

const clearSignInFailuresSQL = `DELETE FROM signin_failures WHERE key = $1`

// ClearSignInFailures forgets key's failures.
func (s *Store) ClearSignInFailures(ctx context.Context, key string) error {
	if _, err := s.pool.Exec(ctx, clearSignInFailuresSQL, key); err != nil {
		return fmt.Errorf("clear sign-in failures: %w", err)
	}
	return nil
}
