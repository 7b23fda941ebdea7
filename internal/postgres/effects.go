package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

const addUsageSQL = `
UPDATE accounts SET queued = queued + $1, media_bytes = media_bytes + $2
WHERE id = (SELECT account_id FROM projects WHERE id = $3)`

const addAudioCountSQL = `UPDATE projects SET audio_count = audio_count + $1 WHERE id = $2`

// applyEffects does, in tx, what the write that left a as it is must do
// besides a's own rows (narrator.Effects), as sqlstore.ApplyEffects does,
// writing the account's row and the project's. The write has locked a's
// row before, and a write that queues a synthesis its account's row too
// (planSynthesis), so the locks are taken audio, account, project by every
// write.
func (s *Store) applyEffects(ctx context.Context, tx pgx.Tx, a *narrator.Audio, eff narrator.Effects) error {
	return sqlstore.ApplyEffects(ctx, s.Store, pgTx{tx}, a, eff, s.traceEffect, func(step narrator.EffectStep) error {
		var err error
		switch step {
		case narrator.StepUsage:
			_, err = tx.Exec(ctx, addUsageSQL, eff.Queued, eff.MediaBytes, eff.ProjectID)
		case narrator.StepAudioCount:
			_, err = tx.Exec(ctx, addAudioCountSQL, eff.AudioCount, eff.ProjectID)
		}
		return err
	})
}

// supersedeSynthesis removes, in tx, the audio's synthesis jobs that wait
// to start.
func (s *Store) supersedeSynthesis(ctx context.Context, tx pgx.Tx, audioID int64) error {
	if s.jobs == nil {
		return errors.New("the postgres store was opened without a job inserter")
	}
	return s.jobs.SupersedeSynthesis(ctx, tx, audioID)
}
