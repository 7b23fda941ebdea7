package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of pronunciation rules are sqlstore's, but for
// ResynthesizeMatching; ExportMeta reads rules here.

// scanPronunciation reads a row of sqlstore.PronunciationColumns.
func scanPronunciation(row pgx.Row) (*narrator.Pronunciation, error) {
	return sqlstore.ScanPronunciation(utcRow{row})
}

// candidatesSQL narrows the search with ILIKE and locks the candidates in
// ID order, so that two such transactions never deadlock; Matches then
// decides on whole words.
const candidatesSQL = `
SELECT ` + audioColumns + ` FROM audios
WHERE project_id = $1 AND deleted_at IS NULL
	AND (title ILIKE $2 ESCAPE '\' OR body ILIKE $2 ESCAPE '\' OR author ILIKE $2 ESCAPE '\')
ORDER BY id
FOR UPDATE`

// ResynthesizeMatching makes every live audio of a project whose title,
// body or author contains the rule's phrase (as Pronunciation.Matches
// decides) unprocessed again, and enqueues its synthesis, in one
// transaction. Audios without the phrase are left alone. It returns the ids
// of the audios it re-queued.
func (s *Store) ResynthesizeMatching(ctx context.Context, projectID int64, rule *narrator.Pronunciation) ([]int64, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("resynthesize %q: %w", rule.Phrase, err)
	}
	defer rollback(ctx, tx)
	rows, err := tx.Query(ctx, candidatesSQL, projectID, likePattern(rule.Phrase))
	if err != nil {
		return nil, fmt.Errorf("resynthesize %q: %w", rule.Phrase, err)
	}
	candidates, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*narrator.Audio, error) { return scanAudio(row) })
	if err != nil {
		return nil, fmt.Errorf("resynthesize %q: %w", rule.Phrase, err)
	}
	ids := []int64{}
	for _, a := range candidates {
		if !rule.Matches(a.Title) && !rule.Matches(a.Body) && !rule.Matches(a.Author) {
			continue
		}
		if err := s.resynthesize(ctx, tx, a, false); err != nil {
			return nil, err
		}
		ids = append(ids, a.ID)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("resynthesize %q: commit: %w", rule.Phrase, err)
	}
	return ids, nil
}

const resynthesizeSQL = `
UPDATE audios SET state = $1, error = $2, revision = $3, updated_at = $4
WHERE id = $5`

// resynthesize makes a live audio, locked, unprocessed at a new revision
// (narrator.Audio.Resynthesize) and enqueues its synthesis, inside tx.
// When check is set, the account's limits apply
// (narrator.Limits.CheckSynthesis): a publisher's request does, a
// pronunciation rule's re-queueing does not.
func (s *Store) resynthesize(ctx context.Context, tx pgx.Tx, a *narrator.Audio, check bool) error {
	round, err := s.planSynthesis(ctx, tx, a.ProjectID, a.State != narrator.StateUnprocessed, check)
	if err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	before := *a
	a.Resynthesize(s.now())
	if _, err := tx.Exec(ctx, resynthesizeSQL, a.State, a.Error, a.Revision, a.UpdatedAt, a.ID); err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	eff := narrator.ChangeEffects(&before, a)
	eff.Round = round
	if err := s.applyEffects(ctx, tx, a, eff); err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	return nil
}
