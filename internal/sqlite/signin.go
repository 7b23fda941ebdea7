package sqlite

import (
	"context"
	"fmt"
	"time"
)

// SignInFailureRetention is how long failed sign-ins are kept.
const SignInFailureRetention = 24 * time.Hour

const insertSignInFailureSQL = `INSERT INTO signin_failures (key, at) VALUES (?, ?)`

const pruneSignInFailuresSQL = `DELETE FROM signin_failures WHERE at < ?`

// RecordSignInFailure records a failed sign-in at time at under each key,
// and forgets failures older than SignInFailureRetention.
func (s *Store) RecordSignInFailure(ctx context.Context, keys []string, at time.Time) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("record sign-in failure: %w", err)
	}
	defer tx.Rollback()
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, insertSignInFailureSQL, k, micros(at)); err != nil {
			return fmt.Errorf("record sign-in failure: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, pruneSignInFailuresSQL, micros(at.Add(-SignInFailureRetention))); err != nil {
		return fmt.Errorf("record sign-in failure: prune: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record sign-in failure: commit: %w", err)
	}
	return nil
}

const recentSignInFailuresSQL = `
SELECT at FROM signin_failures WHERE key = ? AND at >= ? ORDER BY at DESC LIMIT ?`

// RecentSignInFailures returns the times of key's failures at or after
// since, newest first, at most limit of them.
func (s *Store) RecentSignInFailures(ctx context.Context, key string, since time.Time, limit int) ([]time.Time, error) {
	rows, err := s.reader.QueryContext(ctx, recentSignInFailuresSQL, key, micros(since), limit)
	if err != nil {
		return nil, fmt.Errorf("recent sign-in failures: %w", err)
	}
	defer rows.Close()
	out := []time.Time{}
	for rows.Next() {
		var us int64
		if err := rows.Scan(&us); err != nil {
			return nil, fmt.Errorf("recent sign-in failures: %w", err)
		}
		out = append(out, fromMicros(us))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent sign-in failures: %w", err)
	}
	return out, nil
}

const clearSignInFailuresSQL = `DELETE FROM signin_failures WHERE key = ?`

// ClearSignInFailures forgets key's failures.
func (s *Store) ClearSignInFailures(ctx context.Context, key string) error {
	if _, err := s.writer.ExecContext(ctx, clearSignInFailuresSQL, key); err != nil {
		return fmt.Errorf("clear sign-in failures: %w", err)
	}
	return nil
}
