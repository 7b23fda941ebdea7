package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of pronunciation rules are sqlstore's, but for
// ResynthesizeMatching.

// candidatesSQL narrows the search with a case-insensitive LIKE (ASCII
// case only); Matches then decides on whole words in any case.
const candidatesSQL = `
SELECT ` + audioColumns + ` FROM audios
WHERE project_id = ? AND deleted_at IS NULL
	AND (lower(title) LIKE ? ESCAPE '\' OR lower(body) LIKE ? ESCAPE '\' OR lower(author) LIKE ? ESCAPE '\')`

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
	defer tx.Rollback()
	pattern := likePattern(strings.ToLower(rule.Phrase))
	rows, err := tx.QueryContext(ctx, candidatesSQL, projectID, pattern, pattern, pattern)
	if err != nil {
		return nil, fmt.Errorf("resynthesize %q: %w", rule.Phrase, err)
	}
	var matching []*narrator.Audio
	for rows.Next() {
		a, err := scanAudio(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("resynthesize %q: %w", rule.Phrase, err)
		}
		if rule.Matches(a.Title) || rule.Matches(a.Body) || rule.Matches(a.Author) {
			matching = append(matching, a)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("resynthesize %q: %w", rule.Phrase, err)
	}
	ids := []int64{}
	for _, a := range matching {
		if err := sqlstore.Resynthesize(ctx, s.Store, sqlTx{tx}, a, false); err != nil {
			return nil, err
		}
		ids = append(ids, a.ID)
	}
	if err := commit(tx); err != nil {
		return nil, fmt.Errorf("resynthesize %q: commit: %w", rule.Phrase, err)
	}
	return ids, nil
}
