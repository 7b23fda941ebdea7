package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

const findLeaseSQL = `SELECT lease_holder, lease_revision, lease_until FROM audios WHERE id = ?`

const leaseSynthesisSQL = `UPDATE audios SET lease_holder = ?, lease_revision = ?, lease_until = ? WHERE id = ?`

// LeaseSynthesis takes, or renews, for holder the lease on synthesising a
// revision of a live audio, until the given time. It reports false, changing
// nothing, when narrator.PlanLease refuses: while another holder's lease on
// that revision runs, and when the audio is deleted or at another revision.
// A lease on an older revision never blocks a newer one. It returns
// ENOTFOUND if the audio does not exist.
func (s *Store) LeaseSynthesis(ctx context.Context, audioID int64, revision int, holder string, until time.Time) (bool, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	defer tx.Rollback()
	a, err := findAudioByID(ctx, tx, audioID)
	if err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	var cur narrator.SynthesisLease
	var holderCol sql.NullString
	var rev, untilCol sql.NullInt64
	if err := tx.QueryRowContext(ctx, findLeaseSQL, audioID).Scan(&holderCol, &rev, &untilCol); err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	if holderCol.Valid {
		cur = narrator.SynthesisLease{Holder: holderCol.String, Revision: int(rev.Int64), Until: fromMicros(untilCol.Int64)}
	}
	if !narrator.PlanLease(a, cur, holder, revision, s.now()) {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, leaseSynthesisSQL, holder, revision, micros(until), audioID); err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	if err := commit(tx); err != nil {
		return false, fmt.Errorf("lease audio %d: commit: %w", audioID, err)
	}
	return true, nil
}

const releaseSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE id = ? AND lease_holder = ?`

const deleteProgressSQL = `DELETE FROM synthesis_progress WHERE audio_id = ? AND holder = ?`

// ReleaseSynthesis drops holder's lease on an audio, if it still holds it,
// and the progress holder reported (ReportSynthesis).
func (s *Store) ReleaseSynthesis(ctx context.Context, audioID int64, holder string) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("release lease on audio %d: %w", audioID, err)
	}
	defer tx.Rollback()
	for _, q := range []string{releaseSynthesisSQL, deleteProgressSQL} {
		if _, err := tx.ExecContext(ctx, q, audioID, holder); err != nil {
			return fmt.Errorf("release lease on audio %d: %w", audioID, err)
		}
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("release lease on audio %d: commit: %w", audioID, err)
	}
	return nil
}

const releaseAllSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE lease_holder IS NOT NULL`

// ReleaseSynthesisLeases drops every lease, and all progress reported. It is for start-up recovery,
// and safe only while one process owns the database, as the embedded server
// does: the holders of the leases it finds died with the last process.
func (s *Store) ReleaseSynthesisLeases(ctx context.Context) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("release synthesis leases: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{releaseAllSynthesisSQL, deleteAllProgressSQL} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("release synthesis leases: %w", err)
		}
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("release synthesis leases: commit: %w", err)
	}
	return nil
}

const deleteAllProgressSQL = `DELETE FROM synthesis_progress`
