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

// headMemo keeps the head of the synthesis queue as one transaction saw it
// first. A group of creates reads it once: their own jobs are inserted at
// the end of the group, and a job never takes a round before the head.
type headMemo struct {
	round int64
	read  bool
}

// planSynthesis is the part of a change that queues a synthesis for an
// audio of projectID that concerns its account, in tx, before the change
// writes anything: when check is set it refuses the change if the account
// is over its limits (narrator.Limits.CheckSynthesis; adds tells whether
// the change adds an audio to the account's queue), and it returns the
// job's fair round (narrator.FairRound), which it records as the account's.
// head is the transaction's memo of the queue's head.
func (s *Store) planSynthesis(ctx context.Context, tx *sql.Tx, head *headMemo, projectID int64, adds, check bool) (int64, error) {
	var (
		accountID int64
		u         narrator.Usage
	)
	st, err := s.prepared()
	if err != nil {
		return 0, err
	}
	err = tx.StmtContext(ctx, st.writes.accountUsage).QueryRowContext(ctx, projectID).
		Scan(&accountID, &u.Queued, &u.MediaBytes, &u.NextRound)
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
	if err := s.readHead(ctx, tx, head); err != nil {
		return 0, err
	}
	round := narrator.FairRound(head.round, u)
	if _, err := tx.StmtContext(ctx, st.writes.setSynthesisRound).ExecContext(ctx, round+1, accountID); err != nil {
		return 0, fmt.Errorf("set synthesis round of account %d: %w", accountID, err)
	}
	return round, nil
}

// readHead reads the head of the synthesis queue into head, unless it
// already holds it.
func (s *Store) readHead(ctx context.Context, tx *sql.Tx, head *headMemo) error {
	if head.read {
		return nil
	}
	if s.jobs == nil {
		return fmt.Errorf("queue synthesis: the sqlite store was opened without a job inserter")
	}
	round, err := s.jobs.SynthesisHead(ctx, tx)
	if err != nil {
		return fmt.Errorf("queue synthesis: %w", err)
	}
	head.round, head.read = round, true
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
		return u, fmt.Errorf("usage of account %d: %w", accountID, unavailable(err))
	}
	return u, nil
}
