package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

// SignInFailureRetention is how long failed sign-ins are kept.
const SignInFailureRetention = 24 * time.Hour

const recentSignInAttemptsSQL = `
SELECT at FROM signin_failures WHERE key = ? AND at >= ? ORDER BY at DESC LIMIT ?`

const insertSignInAttemptSQL = `INSERT INTO signin_failures (key, at, attempt) VALUES (?, ?, ?)`

const pruneSignInFailuresSQL = `DELETE FROM signin_failures WHERE at < ?`

// ReserveSignInAttempt records a sign-in attempt at time at under the key
// of every limit, named attempt, unless a limit is full
// (narrator.CheckSignInLimits): then it records nothing and says which.
// The check and the record are one write transaction, and SQLite has one
// writer, so concurrent attempts cannot all pass a limit. It also forgets
// attempts older than SignInFailureRetention.
func (s *Store) ReserveSignInAttempt(ctx context.Context, attempt string, limits []narrator.SignInLimit, at time.Time) (*narrator.SignInRefusal, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
	}
	defer tx.Rollback()
	recent := make([][]time.Time, len(limits))
	for i, l := range limits {
		if recent[i], err = recentSignInAttempts(ctx, tx, l, at); err != nil {
			return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
		}
	}
	if ref := narrator.CheckSignInLimits(limits, at, recent); ref != nil {
		return ref, nil
	}
	for _, l := range limits {
		if _, err := tx.ExecContext(ctx, insertSignInAttemptSQL, l.Key, micros(at), attempt); err != nil {
			return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, pruneSignInFailuresSQL, micros(at.Add(-SignInFailureRetention))); err != nil {
		return nil, fmt.Errorf("reserve sign-in attempt: prune: %w", err)
	}
	if err := commit(tx); err != nil {
		return nil, fmt.Errorf("reserve sign-in attempt: commit: %w", err)
	}
	return nil, nil
}

// recentSignInAttempts returns the times of l's attempts in its window
// before at, newest first, at most l.Max of them.
func recentSignInAttempts(ctx context.Context, tx *sql.Tx, l narrator.SignInLimit, at time.Time) ([]time.Time, error) {
	rows, err := tx.QueryContext(ctx, recentSignInAttemptsSQL, l.Key, micros(at.Add(-l.Window)), l.Max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var us int64
		if err := rows.Scan(&us); err != nil {
			return nil, err
		}
		out = append(out, fromMicros(us))
	}
	return out, rows.Err()
}

const deleteSignInAttemptSQL = `DELETE FROM signin_failures WHERE attempt = ? AND attempt <> ''`

const clearSignInFailuresSQL = `DELETE FROM signin_failures WHERE key = ?`

// ClearSignInAttempts forgets the attempt named attempt, which succeeded,
// and every attempt recorded under keys.
func (s *Store) ClearSignInAttempts(ctx context.Context, attempt string, keys []string) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("clear sign-in attempts: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, deleteSignInAttemptSQL, attempt); err != nil {
		return fmt.Errorf("clear sign-in attempts: %w", err)
	}
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, clearSignInFailuresSQL, k); err != nil {
			return fmt.Errorf("clear sign-in attempts: %w", err)
		}
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("clear sign-in attempts: commit: %w", err)
	}
	return nil
}
