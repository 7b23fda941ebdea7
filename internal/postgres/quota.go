package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// accountUsageSQL reads and locks the account of a project. Every change
// that queues a synthesis takes this lock before it checks, so that
// concurrent creates of one account, on any node, take turns and never
// overshoot its limits. Audio rows are always locked before it, and
// project rows (audio_count) after it.
const accountUsageSQL = `
SELECT ac.id, ac.queued, ac.media_bytes, ac.synthesis_round
FROM projects p JOIN accounts ac ON ac.id = p.account_id
WHERE p.id = $1
FOR UPDATE OF ac`

const setSynthesisRoundSQL = `UPDATE accounts SET synthesis_round = $1 WHERE id = $2`

// planSynthesis is the part of a change that queues a synthesis for an
// audio of projectID that concerns its account, in tx, before the change
// writes anything: when check is set it refuses the change if the account
// is over its limits (narrator.Limits.CheckSynthesis; adds tells whether
// the change adds an audio to the account's queue), and it returns the
// job's fair round (narrator.FairRound), which it records as the account's.
func (s *Store) planSynthesis(ctx context.Context, tx pgx.Tx, projectID int64, adds, check bool) (int64, error) {
	var (
		accountID int64
		u         narrator.Usage
	)
	err := tx.QueryRow(ctx, accountUsageSQL, projectID).Scan(&accountID, &u.Queued, &u.MediaBytes, &u.NextRound)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	case err != nil:
		return 0, fmt.Errorf("usage of project %d's account: %w", projectID, err)
	}
	if check {
		if err := s.limits.CheckSynthesis(u, adds); err != nil {
			return 0, err
		}
	}
	if s.jobs == nil {
		return 0, fmt.Errorf("queue synthesis: the postgres store was opened without a job inserter")
	}
	head, err := s.jobs.SynthesisHead(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("queue synthesis: %w", err)
	}
	round := narrator.FairRound(head, u)
	if _, err := tx.Exec(ctx, setSynthesisRoundSQL, round+1, accountID); err != nil {
		return 0, fmt.Errorf("set synthesis round of account %d: %w", accountID, err)
	}
	return round, nil
}

const usageSQL = `SELECT queued, media_bytes, synthesis_round FROM accounts WHERE id = $1`

// AccountUsage returns what an account holds against its limits, or
// ENOTFOUND.
func (s *Store) AccountUsage(ctx context.Context, accountID int64) (narrator.Usage, error) {
	var u narrator.Usage
	err := s.queryRow(ctx, usageSQL, accountID).Scan(&u.Queued, &u.MediaBytes, &u.NextRound)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return u, narrator.Errorf(narrator.ENOTFOUND, "account %d not found", accountID)
	case err != nil:
		return u, fmt.Errorf("usage of account %d: %w", accountID, err)
	}
	return u, nil
}
