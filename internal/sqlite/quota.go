package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/narrator/narrator"
)

const accountUsageSQL = `
SELECT ac.id, ac.queued, ac.media_bytes, ac.synthesis_round
FROM projects p JOIN accounts ac ON ac.id = p.account_id
WHERE p.id = ?`

const setSynthesisRoundSQL = `UPDATE accounts SET synthesis_round = ? WHERE id = ?`

// planSynthesis is the part of a change that queues a synthesis for an
// audio of projectID that concerns its account, in tx, before the change
// writes anything: when check is set it refuses the change if the account
// is over its limits (narrator.Limits.CheckSynthesis; adds tells whether
// the change adds an audio to the account's queue), and it returns the
// job's fair round (narrator.FairRound), which it records as the account's.
func (s *Store) planSynthesis(ctx context.Context, tx *sql.Tx, projectID int64, adds, check bool) (int64, error) {
	var (
		accountID int64
		u         narrator.Usage
	)
	err := tx.QueryRowContext(ctx, accountUsageSQL, projectID).Scan(&accountID, &u.Queued, &u.MediaBytes, &u.NextRound)
	switch {
	case err == sql.ErrNoRows:
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
		return 0, fmt.Errorf("queue synthesis: the sqlite store was opened without a job inserter")
	}
	head, err := s.jobs.SynthesisHead(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("queue synthesis: %w", err)
	}
	round := narrator.FairRound(head, u)
	if _, err := tx.ExecContext(ctx, setSynthesisRoundSQL, round+1, accountID); err != nil {
		return 0, fmt.Errorf("set synthesis round of account %d: %w", accountID, err)
	}
	return round, nil
}

const addUsageSQL = `
UPDATE accounts SET queued = queued + ?, media_bytes = media_bytes + ?
WHERE id = (SELECT account_id FROM projects WHERE id = ?)`

// addUsage moves the usage of the account of the audio that changed from
// before to after (narrator.UsageDelta), in the transaction of the change.
func addUsage(ctx context.Context, tx *sql.Tx, before, after *narrator.Audio) error {
	queued, bytes := narrator.UsageDelta(before, after)
	if queued == 0 && bytes == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, addUsageSQL, queued, bytes, after.ProjectID); err != nil {
		return fmt.Errorf("count usage of project %d's account: %w", after.ProjectID, err)
	}
	return nil
}

const usageSQL = `SELECT queued, media_bytes, synthesis_round FROM accounts WHERE id = ?`

// AccountUsage returns what an account holds against its limits, or
// ENOTFOUND.
func (s *Store) AccountUsage(ctx context.Context, accountID int64) (narrator.Usage, error) {
	var u narrator.Usage
	err := s.reader.QueryRowContext(ctx, usageSQL, accountID).Scan(&u.Queued, &u.MediaBytes, &u.NextRound)
	switch {
	case err == sql.ErrNoRows:
		return u, narrator.Errorf(narrator.ENOTFOUND, "account %d not found", accountID)
	case err != nil:
		return u, fmt.Errorf("usage of account %d: %w", accountID, err)
	}
	return u, nil
}
