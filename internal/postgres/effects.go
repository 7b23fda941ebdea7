package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

const addUsageSQL = `
UPDATE accounts SET queued = queued + $1, media_bytes = media_bytes + $2
WHERE id = (SELECT account_id FROM projects WHERE id = $3)`

const addAudioCountSQL = `UPDATE projects SET audio_count = audio_count + $1 WHERE id = $2`

// applyEffects does, in tx, what the write that left a as it is must do
// besides a's own rows (narrator.Effects), in the order of eff.Steps: the
// account's row, then the project's, then the jobs, then the webhook
// deliveries, then the feed's ping. It is the one place this store applies effects. The write
// has locked a's row before, and a write that queues a synthesis its
// account's row too (planSynthesis), so the locks are taken audio, account,
// project by every write.
func (s *Store) applyEffects(ctx context.Context, tx pgx.Tx, a *narrator.Audio, eff narrator.Effects) error {
	for _, step := range eff.Steps() {
		s.traceEffect(step)
		var err error
		switch step {
		case narrator.StepUsage:
			_, err = tx.Exec(ctx, addUsageSQL, eff.Queued, eff.MediaBytes, eff.ProjectID)
		case narrator.StepAudioCount:
			_, err = tx.Exec(ctx, addAudioCountSQL, eff.AudioCount, eff.ProjectID)
		case narrator.StepJobs:
			err = s.applyJobs(ctx, tx, a, eff)
		case narrator.StepDeliveries:
			err = sqlstore.Raise(ctx, s.Store, pgTx{tx}, eff.AudioEventOf(a, s.now()))
		case narrator.StepPing:
			err = s.PingFeed(ctx, pgTx{tx}, narrator.FeedPing(eff.ProjectID, s.now()))
		}
		if err != nil {
			return fmt.Errorf("apply %s of audio %d in project %d: %w", step, a.ID, eff.ProjectID, err)
		}
	}
	return nil
}

// applyJobs removes the audio's waiting synthesis if eff supersedes it,
// then inserts eff's jobs.
func (s *Store) applyJobs(ctx context.Context, tx pgx.Tx, a *narrator.Audio, eff narrator.Effects) error {
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
