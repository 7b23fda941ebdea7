package sqlstore

import (
	"context"
	"fmt"
	"slices"
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
// The limits' keys are locked (DB.LockKey, in key order) before they are
// counted, so that concurrent attempts on any node cannot all pass a
// limit. It also forgets attempts older than SignInFailureRetention.
func (s *Store) ReserveSignInAttempt(ctx context.Context, attempt string, limits []narrator.SignInLimit, at time.Time) (*narrator.SignInRefusal, error) {
	return WriteV(ctx, s, "reserve sign-in attempt", func(tx Tx) (*narrator.SignInRefusal, error) {
		var err error
		at = at.UTC().Truncate(time.Microsecond)
		keys := make([]string, len(limits))
		for i, l := range limits {
			keys[i] = l.Key
		}
		for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
			if err := s.db.LockKey(ctx, tx, k); err != nil {
				return nil, fmt.Errorf("reserve sign-in attempt: lock: %w", err)
			}
		}
		recent := make([][]time.Time, len(limits))
		for i, l := range limits {
			if recent[i], err = recentSignInAttempts(ctx, tx, l, at); err != nil {
				return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
			}
		}
		if ref := narrator.CheckSignInLimits(limits, at, recent); ref != nil {
			return ref, nil
		}
		for _, k := range keys {
			if _, err := tx.Exec(ctx, insertSignInAttemptSQL, k, at, attempt); err != nil {
				return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, pruneSignInFailuresSQL, at.Add(-SignInFailureRetention)); err != nil {
			return nil, fmt.Errorf("reserve sign-in attempt: prune: %w", err)
		}
		return nil, nil
	})
}

// recentSignInAttempts returns the times of l's attempts in its window
// before at, newest first, at most l.Max of them.
func recentSignInAttempts(ctx context.Context, tx Tx, l narrator.SignInLimit, at time.Time) ([]time.Time, error) {
	rows, err := tx.Query(ctx, recentSignInAttemptsSQL, l.Key, at.Add(-l.Window), l.Max)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row Row) (time.Time, error) {
		var t time.Time
		err := row.Scan(&t)
		return t, err
	})
}

const deleteSignInAttemptSQL = `DELETE FROM signin_failures WHERE attempt = ? AND attempt <> ''`

const clearSignInFailuresSQL = `DELETE FROM signin_failures WHERE key = ?`

// ClearSignInAttempts forgets the attempt named attempt, which succeeded,
// and every attempt recorded under keys.
func (s *Store) ClearSignInAttempts(ctx context.Context, attempt string, keys []string) error {
	return s.write(ctx, "clear sign-in attempts", func(tx Tx) error {
		if _, err := tx.Exec(ctx, deleteSignInAttemptSQL, attempt); err != nil {
			return fmt.Errorf("clear sign-in attempts: %w", err)
		}
		for _, k := range keys {
			if _, err := tx.Exec(ctx, clearSignInFailuresSQL, k); err != nil {
				return fmt.Errorf("clear sign-in attempts: %w", err)
			}
		}
		return nil
	})
}
