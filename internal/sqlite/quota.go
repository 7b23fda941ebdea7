package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/narrator/narrator"
)

// queuedCountCap bounds the count of an account's queued audios when no
// limit is set: beyond it the count only bounds a stale fair round
// (narrator.FairRound), for which this many is as good as more.
const queuedCountCap = 10_000

const accountUsageSQL = `
SELECT ac.id, ac.media_bytes, ac.synthesis_round
FROM projects p JOIN accounts ac ON ac.id = p.account_id
WHERE p.id = ?`

// countQueuedSQL counts an account's unprocessed live audios, stopping at
// the bound, through the partial index audios_queued.
const countQueuedSQL = `
SELECT COUNT(*) FROM (
	SELECT 1 FROM audios
	WHERE project_id IN (SELECT id FROM projects WHERE account_id = ?)
		AND deleted_at IS NULL AND state = 'unprocessed'
	LIMIT ? + 0)`

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
	err := tx.QueryRowContext(ctx, accountUsageSQL, projectID).Scan(&accountID, &u.MediaBytes, &u.NextRound)
	switch {
	case err == sql.ErrNoRows:
		return 0, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	case err != nil:
		return 0, fmt.Errorf("usage of project %d's account: %w", projectID, err)
	}
	bound := queuedCountCap
	if s.limits.MaxQueued > 0 {
		bound = s.limits.MaxQueued
	}
	if err := tx.QueryRowContext(ctx, countQueuedSQL, accountID, bound).Scan(&u.Queued); err != nil {
		return 0, fmt.Errorf("count queued audios of account %d: %w", accountID, err)
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

const addMediaBytesSQL = `
UPDATE accounts SET media_bytes = media_bytes + ?
WHERE id = (SELECT account_id FROM projects WHERE id = ?)`

// addMediaBytes moves the published media bytes of projectID's account by
// delta, in the transaction that publishes, deletes or imports audios.
func addMediaBytes(ctx context.Context, tx *sql.Tx, projectID, delta int64) error {
	if delta == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, addMediaBytesSQL, delta, projectID); err != nil {
		return fmt.Errorf("count media bytes of project %d's account: %w", projectID, err)
	}
	return nil
}
