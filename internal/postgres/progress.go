package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

const reportSynthesisSQL = `
INSERT INTO synthesis_progress (audio_id, holder, revision, units_done, units_total, live_key, started_at, updated_at)
SELECT id, lease_holder, lease_revision, $1, $2, $3, $4, $5 FROM audios
WHERE id = $6 AND lease_holder = $7 AND lease_revision = $8
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
	tag, err := s.exec(ctx, reportSynthesisSQL,
		p.UnitsDone, p.UnitsTotal, p.LiveKey, p.StartedAt.UTC().Truncate(time.Microsecond), s.now(),
		audioID, holder, p.Revision)
	if err != nil {
		return false, fmt.Errorf("report synthesis of audio %d: %w", audioID, err)
	}
	return tag.RowsAffected() > 0, nil
}

const findSynthesisProgressSQL = `
SELECT units_done, units_total, live_key, started_at, updated_at
FROM synthesis_progress WHERE audio_id = $1 AND revision = $2`

// SynthesisProgress returns the last progress reported on synthesising a
// revision of an audio. It returns ENOTFOUND if none was, or if the
// attempt that reported it has released its lease.
func (s *Store) SynthesisProgress(ctx context.Context, audioID int64, revision int) (narrator.SynthesisProgress, error) {
	p := narrator.SynthesisProgress{Revision: revision}
	err := s.queryRow(ctx, findSynthesisProgressSQL, audioID, revision).
		Scan(&p.UnitsDone, &p.UnitsTotal, &p.LiveKey, &p.StartedAt, &p.UpdatedAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return narrator.SynthesisProgress{}, narrator.Errorf(narrator.ENOTFOUND, "no progress reported on synthesising audio %d revision %d", audioID, revision)
	case err != nil:
		return narrator.SynthesisProgress{}, fmt.Errorf("synthesis progress of audio %d: %w", audioID, err)
	}
	p.StartedAt, p.UpdatedAt = p.StartedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}
