package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

const leaseSynthesisSQL = `
UPDATE audios SET lease_holder = ?, lease_revision = ?, lease_until = ?
WHERE id = ? AND revision = ? AND deleted_at IS NULL
	AND (lease_until IS NULL OR lease_until <= ? OR lease_holder = ? OR lease_revision <> ?)`

// LeaseSynthesis takes, or renews, for holder the lease on synthesising a
// revision of a live audio, until the given time. It reports false, changing
// nothing, while another holder's lease on that revision runs, and when the
// audio is deleted or at another revision. A lease on an older revision
// never blocks a newer one. It returns ENOTFOUND if the audio does not exist.
func (s *Store) LeaseSynthesis(ctx context.Context, audioID int64, revision int, holder string, until time.Time) (bool, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, leaseSynthesisSQL, holder, revision, micros(until), audioID, revision,
		micros(s.now()), holder, revision)
	if err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	if n == 0 {
		var exists int
		if err := tx.QueryRowContext(ctx, audioExistsSQL, audioID).Scan(&exists); err != nil {
			return false, fmt.Errorf("lease audio %d: %w", audioID, err)
		}
		if exists == 0 {
			return false, fmt.Errorf("lease audio %d: %w", audioID, audioNotFound(strconv.FormatInt(audioID, 10)))
		}
		return false, nil
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("lease audio %d: commit: %w", audioID, err)
	}
	return true, nil
}

const releaseSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE id = ? AND lease_holder = ?`

// ReleaseSynthesis drops holder's lease on an audio, if it still holds it.
func (s *Store) ReleaseSynthesis(ctx context.Context, audioID int64, holder string) error {
	if _, err := s.writer.ExecContext(ctx, releaseSynthesisSQL, audioID, holder); err != nil {
		return fmt.Errorf("release lease on audio %d: %w", audioID, err)
	}
	return nil
}

const releaseAllSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE lease_holder IS NOT NULL`

// ReleaseSynthesisLeases drops every lease. It is for start-up recovery,
// and safe only while one process owns the database, as the embedded server
// does: the holders of the leases it finds died with the last process.
func (s *Store) ReleaseSynthesisLeases(ctx context.Context) error {
	if _, err := s.writer.ExecContext(ctx, releaseAllSynthesisSQL); err != nil {
		return fmt.Errorf("release synthesis leases: %w", err)
	}
	return nil
}
