package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

const addUsageSQL = `
UPDATE accounts SET queued = queued + ?, media_bytes = media_bytes + ?
WHERE id = (SELECT account_id FROM projects WHERE id = ?)`

const addAudioCountSQL = `UPDATE projects SET audio_count = audio_count + ? WHERE id = ?`

// applyEffects does, in tx, what the write that left a as it is must do
// besides a's own rows (narrator.Effects), as sqlstore.ApplyEffects does,
// writing the account's row and the project's with the prepared
// statements. A group of creates applies the same steps in the same order
// for the whole group (createGroup).
func (s *Store) applyEffects(ctx context.Context, tx *sql.Tx, a *narrator.Audio, eff narrator.Effects) error {
	st, err := s.prepared()
	if err != nil {
		return err
	}
	return sqlstore.ApplyEffects(ctx, s.Store, sqlTx{tx}, a, eff, s.traceEffect, func(step narrator.EffectStep) error {
		var err error
		switch step {
		case narrator.StepUsage:
			_, err = tx.StmtContext(ctx, st.writes.addUsage).ExecContext(ctx, eff.Queued, eff.MediaBytes, eff.ProjectID)
		case narrator.StepAudioCount:
			_, err = tx.StmtContext(ctx, st.writes.addAudioCount).ExecContext(ctx, eff.AudioCount, eff.ProjectID)
		}
		return err
	})
}

// traceEffect tells Options.EffectFunc of a step, if it is set.
func (s *Store) traceEffect(step narrator.EffectStep) {
	if s.effect != nil {
		s.effect(step)
	}
}

// supersedeSynthesis removes, in tx, the audio's synthesis jobs that wait
// to start.
func (s *Store) supersedeSynthesis(ctx context.Context, tx *sql.Tx, audioID int64) error {
	if s.jobs == nil {
		return errors.New("the sqlite store was opened without a job inserter")
	}
	return s.jobs.SupersedeSynthesis(ctx, tx, audioID)
}
