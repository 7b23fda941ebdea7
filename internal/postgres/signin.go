package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// SignInFailureRetention is how long failed sign-ins are kept.
const SignInFailureRetention = 24 * time.Hour

// lockSignInKeySQL serialises the attempts under one key until the end of
// the transaction, on every node.
const lockSignInKeySQL = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

const recentSignInAttemptsSQL = `
SELECT at FROM signin_failures WHERE key = $1 AND at >= $2 ORDER BY at DESC LIMIT $3`

const insertSignInAttemptSQL = `INSERT INTO signin_failures (key, at, attempt) SELECT unnest($1::text[]), $2, $3`

const pruneSignInFailuresSQL = `DELETE FROM signin_failures WHERE at < $1`

// ReserveSignInAttempt records a sign-in attempt at time at under the key
// of every limit, named attempt, unless a limit is full
// (narrator.CheckSignInLimits): then it records nothing and says which.
// The limits' keys are locked (advisory transaction locks, taken in key
// order) before they are counted, so that concurrent attempts on any node
// cannot all pass a limit. It also forgets attempts older than
// SignInFailureRetention.
func (s *Store) ReserveSignInAttempt(ctx context.Context, attempt string, limits []narrator.SignInLimit, at time.Time) (*narrator.SignInRefusal, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
	}
	defer rollback(ctx, tx)
	at = at.UTC().Truncate(time.Microsecond)
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = l.Key
	}
	locked := slices.Compact(slices.Sorted(slices.Values(keys)))
	for _, k := range locked {
		if _, err := tx.Exec(ctx, lockSignInKeySQL, k); err != nil {
			return nil, fmt.Errorf("reserve sign-in attempt: lock: %w", err)
		}
	}
	recent := make([][]time.Time, len(limits))
	for i, l := range limits {
		rows, err := tx.Query(ctx, recentSignInAttemptsSQL, l.Key, at.Add(-l.Window), l.Max)
		if err != nil {
			return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
		}
		recent[i], err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (time.Time, error) {
			var t time.Time
			err := r.Scan(&t)
			return t.UTC(), err
		})
		if err != nil {
			return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
		}
	}
	if ref := narrator.CheckSignInLimits(limits, at, recent); ref != nil {
		return ref, nil
	}
	if _, err := tx.Exec(ctx, insertSignInAttemptSQL, keys, at, attempt); err != nil {
		return nil, fmt.Errorf("reserve sign-in attempt: %w", err)
	}
	if _, err := tx.Exec(ctx, pruneSignInFailuresSQL, at.Add(-SignInFailureRetention)); err != nil {
		return nil, fmt.Errorf("reserve sign-in attempt: prune: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("reserve sign-in attempt: commit: %w", err)
	}
	return nil, nil
}

const deleteSignInAttemptSQL = `DELETE FROM signin_failures WHERE attempt = $1 AND attempt <> ''`

const clearSignInFailuresSQL = `DELETE FROM signin_failures WHERE key = ANY($1::text[])`

// ClearSignInAttempts forgets the attempt named attempt, which succeeded,
// and every attempt recorded under keys.
func (s *Store) ClearSignInAttempts(ctx context.Context, attempt string, keys []string) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("clear sign-in attempts: %w", err)
	}
	defer rollback(ctx, tx)
	if _, err := tx.Exec(ctx, deleteSignInAttemptSQL, attempt); err != nil {
		return fmt.Errorf("clear sign-in attempts: %w", err)
	}
	if _, err := tx.Exec(ctx, clearSignInFailuresSQL, keys); err != nil {
		return fmt.Errorf("clear sign-in attempts: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("clear sign-in attempts: commit: %w", err)
	}
	return nil
}
