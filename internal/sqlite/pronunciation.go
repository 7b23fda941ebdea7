package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/narrator/narrator"
)

// The methods of pronunciation rules are sqlstore's, but for
// ResynthesisCandidates.

// candidatesSQL narrows the search with a case-insensitive LIKE (ASCII
// case only); NeedsResynthesis then decides on whole words in any case.
const candidatesSQL = `
SELECT ` + audioColumns + ` FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND state <> 'unprocessed'
	AND (lower(title) LIKE ? ESCAPE '\' OR lower(body) LIKE ? ESCAPE '\' OR lower(author) LIKE ? ESCAPE '\')
ORDER BY id`

// ResynthesisCandidates returns, in ID order, the audios of a project that
// rule's change is to re-queue (narrator.Pronunciation.NeedsResynthesis),
// read on the read pool: the scan holds no write lock.
func (s *Store) ResynthesisCandidates(ctx context.Context, projectID int64, rule *narrator.Pronunciation) ([]int64, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("resynthesis candidates of %q: %w", rule.Phrase, err)
	}
	defer tx.Rollback()
	pattern := likePattern(strings.ToLower(strings.TrimSpace(rule.Phrase)))
	rows, err := tx.QueryContext(ctx, candidatesSQL, projectID, pattern, pattern, pattern)
	if err != nil {
		return nil, fmt.Errorf("resynthesis candidates of %q: %w", rule.Phrase, unavailable(err))
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		a, err := scanAudio(rows)
		if err != nil {
			return nil, fmt.Errorf("resynthesis candidates of %q: %w", rule.Phrase, err)
		}
		if rule.NeedsResynthesis(a) {
			ids = append(ids, a.ID)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("resynthesis candidates of %q: %w", rule.Phrase, unavailable(err))
	}
	return ids, nil
}
