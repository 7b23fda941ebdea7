package sqlstore

import (
	"context"
	"fmt"

	"github.com/narrator/narrator"
)

// ApplyEffects does in tx, for s, what the write that left a as it is must
// do besides a's own rows (narrator.Effects), in the order of eff.Steps,
// telling trace of each step before it applies it: the account's row and
// the project's, which rows writes as its store does; then the jobs
// (DB.SupersedeSynthesis, DB.Enqueue); then the webhook deliveries (Raise); then the podcast feed's hub ping
// (PingFeed).
// It is each store's DB.ApplyEffects, the one place a store applies
// effects.
func ApplyEffects(ctx context.Context, s *Store, tx Tx, a *narrator.Audio, eff narrator.Effects, trace func(narrator.EffectStep), rows func(narrator.EffectStep) error) error {
	for _, step := range eff.Steps() {
		trace(step)
		var err error
		switch step {
		case narrator.StepUsage, narrator.StepAudioCount:
			err = rows(step)
		case narrator.StepJobs:
			err = applyJobs(ctx, s.db, tx, a, eff)
		case narrator.StepDeliveries:
			err = Raise(ctx, s, tx, eff.AudioEventOf(a, s.now()))
		case narrator.StepPing:
			err = s.PingFeed(ctx, tx, narrator.FeedPing(eff.ProjectID, s.now()))
		}
		if err != nil {
			return fmt.Errorf("apply %s of audio %d in project %d: %w", step, a.ID, eff.ProjectID, err)
		}
	}
	return nil
}

// applyJobs removes the audio's waiting synthesis if eff supersedes it,
// then inserts eff's jobs.
func applyJobs(ctx context.Context, db DB, tx Tx, a *narrator.Audio, eff narrator.Effects) error {
	if eff.Supersede {
		if err := db.SupersedeSynthesis(ctx, tx, a.ID); err != nil {
			return fmt.Errorf("supersede synthesis of audio %d: %w", a.ID, err)
		}
	}
	for _, job := range eff.Jobs(a) {
		if err := db.Enqueue(ctx, tx, job); err != nil {
			return err
		}
	}
	return nil
}
