package sqlstore

import (
	"context"
	"database/sql"
	"errors"
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
// ENOTFOUND if the audio does not exist. The audio's row is locked while
// the lease is decided, so two nodes never both take it.
func (s *Store) LeaseSynthesis(ctx context.Context, audioID int64, revision int, holder string, until time.Time) (bool, error) {
	name := fmt.Sprintf("lease audio %d", audioID)
	return WriteV(ctx, s, name, func(tx Tx) (bool, error) {
		a, err := findAudioByID(ctx, tx, audioID, s.db.ForUpdate())
		if err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		var cur narrator.SynthesisLease
		var curHolder *string
		var curRevision *int
		var curUntil *time.Time
		if err := tx.QueryRow(ctx, findLeaseSQL, audioID).Scan(&curHolder, &curRevision, &curUntil); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		if curHolder != nil && curRevision != nil && curUntil != nil {
			cur = narrator.SynthesisLease{Holder: *curHolder, Revision: *curRevision, Until: *curUntil}
		}
		if !narrator.PlanLease(a, cur, holder, revision, s.now()) {
			return false, nil // nothing written: the commit only ends the transaction
		}
		if _, err := tx.Exec(ctx, leaseSynthesisSQL, holder, revision, until.UTC().Truncate(time.Microsecond), audioID); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		return true, nil
	})
}

// RequeueSynthesis queues, for a synthesis job of a revision of an audio
// that found another attempt holding the revision's lease, the job's next
// try, to start after the given time (narrator.SynthesizeJob.After), if
// the audio still awaits that revision (narrator.Audio.AwaitsRevision);
// it reports whether it did. The audio's row is locked meanwhile, so a
// change of the audio either comes first, and nothing is queued, or
// after, and removes the new job with the other waiting ones. It returns
// ENOTFOUND if the audio does not exist.
func (s *Store) RequeueSynthesis(ctx context.Context, audioID int64, revision int, after time.Time) (bool, error) {
	name := fmt.Sprintf("requeue synthesis of audio %d", audioID)
	return WriteV(ctx, s, name, func(tx Tx) (bool, error) {
		a, err := findAudioByID(ctx, tx, audioID, s.db.ForUpdate())
		if err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		if !a.AwaitsRevision(revision) {
			return false, nil // nothing written
		}
		job := narrator.SynthesizeJob{AudioID: audioID, Revision: revision, After: after.UTC().Truncate(time.Microsecond)}
		if err := s.db.Enqueue(ctx, tx, job); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		return true, nil
	})
}

const releaseSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE id = ? AND lease_holder = ?`

const deleteProgressSQL = `DELETE FROM synthesis_progress WHERE audio_id = ? AND holder = ?`

// ReleaseSynthesis drops holder's lease on an audio, if it still holds it,
// and the progress holder reported (ReportSynthesis).
func (s *Store) ReleaseSynthesis(ctx context.Context, audioID int64, holder string) error {
	name := fmt.Sprintf("release lease on audio %d", audioID)
	return s.write(ctx, name, func(tx Tx) error {
		// Each statement checks the holder atomically.
		for _, q := range []string{releaseSynthesisSQL, deleteProgressSQL} {
			if _, err := tx.Exec(ctx, q, audioID, holder); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	})
}

const releaseAllSynthesisSQL = `
UPDATE audios SET lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE lease_holder IS NOT NULL`

const deleteAllProgressSQL = `DELETE FROM synthesis_progress`

// ReleaseSynthesisLeases drops every lease, and all progress reported. It
// is for start-up recovery, and safe only while one process uses the
// database, as the embedded server does: the holders of the leases it
// finds died with the last process. A node of a cluster must not call it,
// since other nodes' leases are alive; their leases run out by themselves.
func (s *Store) ReleaseSynthesisLeases(ctx context.Context) error {
	return s.write(ctx, "release synthesis leases", func(tx Tx) error {
		for _, q := range []string{releaseAllSynthesisSQL, deleteAllProgressSQL} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("release synthesis leases: %w", err)
			}
		}
		return nil
	})
}

const reportSynthesisSQL = `
INSERT INTO synthesis_progress (audio_id, holder, revision, units_done, units_total, live_key, started_at, updated_at)
SELECT id, lease_holder, lease_revision, ?, ?, ?, ?, ? FROM audios
WHERE id = ? AND lease_holder = ? AND lease_revision = ?
ON CONFLICT (audio_id) DO UPDATE SET
	holder = excluded.holder, revision = excluded.revision,
	units_done = excluded.units_done, units_total = excluded.units_total,
	live_key = excluded.live_key, started_at = excluded.started_at, updated_at = excluded.updated_at`

// ReportSynthesis records the progress of holder's synthesis of
// p.Revision of an audio, stamped with the store's clock as UpdatedAt. It
// reports false, changing nothing, unless holder holds the audio's
// synthesis lease on that revision: a stale attempt never overwrites the
// progress of the one that took over.
func (s *Store) ReportSynthesis(ctx context.Context, audioID int64, holder string, p narrator.SynthesisProgress) (bool, error) {
	name := fmt.Sprintf("report synthesis of audio %d", audioID)
	return WriteV(ctx, s, name, func(tx Tx) (bool, error) {
		n, err := tx.Exec(ctx, reportSynthesisSQL, p.UnitsDone, p.UnitsTotal, p.LiveKey, p.StartedAt.UTC().Truncate(time.Microsecond),
			s.now(), audioID, holder, p.Revision)
		if err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		return n > 0, nil
	})
}

const findSynthesisProgressSQL = `
SELECT units_done, units_total, live_key, started_at, updated_at
FROM synthesis_progress WHERE audio_id = ? AND revision = ?`

// SynthesisProgress returns the last progress reported on synthesising a
// revision of an audio. It returns ENOTFOUND if none was, or if the
// attempt that reported it has released its lease.
func (s *Store) SynthesisProgress(ctx context.Context, audioID int64, revision int) (narrator.SynthesisProgress, error) {
	name := fmt.Sprintf("synthesis progress of audio %d", audioID)
	return ReadV(ctx, s, name, func(tx Tx) (narrator.SynthesisProgress, error) {
		p := narrator.SynthesisProgress{Revision: revision}
		err := tx.QueryRow(ctx, findSynthesisProgressSQL, audioID, revision).
			Scan(&p.UnitsDone, &p.UnitsTotal, &p.LiveKey, &p.StartedAt, &p.UpdatedAt)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return narrator.SynthesisProgress{}, narrator.Errorf(narrator.ENOTFOUND, "no progress reported on synthesising audio %d revision %d", audioID, revision)
		case err != nil:
			return narrator.SynthesisProgress{}, fmt.Errorf("%s: %w", name, err)
		}
		return p, nil
	})

}
