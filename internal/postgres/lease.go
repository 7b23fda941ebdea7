package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

const findLeaseSQL = `SELECT lease_holder, lease_revision, lease_until FROM audios WHERE id = $1`

const leaseSynthesisSQL = `UPDATE audios SET lease_holder = $1, lease_revision = $2, lease_until = $3 WHERE id = $4`

// LeaseSynthesis takes, or renews, for holder the lease on synthesising a
// revision of a live audio, until the given time. It reports false, changing
// nothing, when narrator.PlanLease refuses: while another holder's lease on
// that revision runs, and when the audio is deleted or at another revision.
// A lease on an older revision never blocks a newer one. It returns
// ENOTFOUND if the audio does not exist. The audio's row is locked while
// the lease is decided, so two nodes never both take it.
func (s *Store) LeaseSynthesis(ctx context.Context, audioID int64, revision int, holder string, until time.Time) (bool, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	defer rollback(ctx, tx)
	a, err := findAudioByID(ctx, tx, audioID, forUpdate)
	if err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	var cur narrator.SynthesisLease
	var curHolder *string
	var curRevision *int
	var curUntil *time.Time
	if err := tx.QueryRow(ctx, findLeaseSQL, audioID).Scan(&curHolder, &curRevision, &curUntil); err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	if curHolder != nil && curRevision != nil && curUntil != nil {
		cur = narrator.SynthesisLease{Holder: *curHolder, Revision: *curRevision, Until: curUntil.UTC()}
	}
	if !narrator.PlanLease(a, cur, holder, revision, s.now()) {
		return false, nil
	}
	if _, err := tx.Exec(ctx, leaseSynthesisSQL, holder, revision, until.Truncate(time.Microsecond), audioID); err != nil {
		return false, fmt.Errorf("lease audio %d: %w", audioID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("lease audio %d: commit: %w", audioID, err)
	}
	return true, nil
}

const releaseSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE id = $1 AND lease_holder = $2`

const deleteProgressSQL = `DELETE FROM synthesis_progress WHERE audio_id = $1 AND holder = $2`

// ReleaseSynthesis drops holder's lease on an audio, if it still holds it,
// and the progress holder reported (ReportSynthesis).
func (s *Store) ReleaseSynthesis(ctx context.Context, audioID int64, holder string) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("release lease on audio %d: %w", audioID, err)
	}
	defer rollback(ctx, tx)
	// Each statement checks the holder atomically.
	for _, q := range []string{releaseSynthesisSQL, deleteProgressSQL} {
		if _, err := tx.Exec(ctx, q, audioID, holder); err != nil {
			return fmt.Errorf("release lease on audio %d: %w", audioID, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("release lease on audio %d: commit: %w", audioID, err)
	}
	return nil
}

const releaseAllSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE lease_holder IS NOT NULL`

// ReleaseSynthesisLeases drops every lease, and all progress reported. It is for start-up recovery,
// and safe only while one process uses the database: the holders of the
// leases it finds died with the last process. A node of a cluster must not
// call it, since other nodes' leases are alive; their leases run out by
// themselves.
func (s *Store) ReleaseSynthesisLeases(ctx context.Context) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("release synthesis leases: %w", err)
	}
	defer rollback(ctx, tx)
	for _, q := range []string{releaseAllSynthesisSQL, deleteAllProgressSQL} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("release synthesis leases: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("release synthesis leases: commit: %w", err)
	}
	return nil
}

const deleteAllProgressSQL = `DELETE FROM synthesis_progress`
