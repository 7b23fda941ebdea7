package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of pronunciation rules are sqlstore's, but for
// ResynthesizeMatching.

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
		if err := sqlstore.Resynthesize(ctx, s.Store, pgTx{tx}, a, false); err != nil {
			return nil, err
		}
		ids = append(ids, a.ID)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("resynthesize %q: commit: %w", rule.Phrase, err)
	}
	return ids, nil
}
