package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

const addUsageSQL = `
UPDATE accounts SET queued = queued + ?, media_bytes = media_bytes + ?
WHERE id = (SELECT account_id FROM projects WHERE id = ?)`

const addAudioCountSQL = `UPDATE projects SET audio_count = audio_count + ? WHERE id = ?`

// applyEffects does, in tx, what the write that left a as it is must do
// besides a's own rows (narrator.Effects), in the order of eff.Steps: the
// account's row, then the project's, then the jobs, then the webhook
// deliveries, then the feed's ping, as the PostgreSQL store does. It is the one place this store
// applies effects, but for a group of creates, which applies the same
// steps in the same order for the whole group (createGroup).
func (s *Store) applyEffects(ctx context.Context, tx *sql.Tx, a *narrator.Audio, eff narrator.Effects) error {
	st, err := s.prepared()
	if err != nil {
		return err
	}
	for _, step := range eff.Steps() {
		s.traceEffect(step)
		var err error
		switch step {
		case narrator.StepUsage:
			_, err = tx.StmtContext(ctx, st.writes.addUsage).ExecContext(ctx, eff.Queued, eff.MediaBytes, eff.ProjectID)
		case narrator.StepAudioCount:
			_, err = tx.StmtContext(ctx, st.writes.addAudioCount).ExecContext(ctx, eff.AudioCount, eff.ProjectID)
		case narrator.StepJobs:
			err = s.applyJobs(ctx, tx, a, eff)
		case narrator.StepDeliveries:
			err = sqlstore.Raise(ctx, s.Store, sqlTx{tx}, eff.AudioEventOf(a, s.now()))
		case narrator.StepPing:
			err = s.PingFeed(ctx, sqlTx{tx}, narrator.FeedPing(eff.ProjectID, s.now()))
		}
		if err != nil {
			return fmt.Errorf("apply %s of audio %d in project %d: %w", step, a.ID, eff.ProjectID, err)
		}
	}
	return nil
}

// traceEffect tells Options.EffectFunc of a step, if it is set.
func (s *Store) traceEffect(step narrator.EffectStep) {
	if s.effect != nil {
		s.effect(step)
	}
}

// applyJobs removes the audio's waiting synthesis if eff supersedes it,
// then inserts eff's jobs.
func (s *Store) applyJobs(ctx context.Context, tx *sql.Tx, a *narrator.Audio, eff narrator.Effects) error {
	if eff.Supersede {
		if s.jobs == nil {
			return fmt.Errorf("supersede synthesis of audio %d: the store was opened without a job inserter", a.ID)
		}
		if err := s.jobs.SupersedeSynthesis(ctx, tx, a.ID); err != nil {
			return fmt.Errorf("supersede synthesis of audio %d: %w", a.ID, err)
		}
	}
	for _, job := range eff.Jobs(a) {
		if err := s.enqueue(ctx, tx, job); err != nil {
			return err
		}
	}
	return nil
}
