package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// The methods of pronunciation rules are sqlstore's, but for
// ResynthesisCandidates.

// candidatesSQL narrows the search with ILIKE; NeedsResynthesis then
// decides on whole words.
const candidatesSQL = `
SELECT ` + audioColumns + ` FROM audios
WHERE project_id = $1 AND deleted_at IS NULL AND state <> 'unprocessed'
	AND (title ILIKE $2 ESCAPE '\' OR body ILIKE $2 ESCAPE '\' OR author ILIKE $2 ESCAPE '\')
ORDER BY id`

// ResynthesisCandidates returns, in ID order, the audios of a project that
// rule's change is to re-queue (narrator.Pronunciation.NeedsResynthesis),
// read outside any transaction that writes: it locks nothing.
func (s *Store) ResynthesisCandidates(ctx context.Context, projectID int64, rule *narrator.Pronunciation) ([]int64, error) {
	rows, err := s.query(ctx, candidatesSQL, projectID, likePattern(rule.Phrase))
	if err != nil {
		return nil, fmt.Errorf("resynthesis candidates of %q: %w", rule.Phrase, err)
	}
	audios, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*narrator.Audio, error) { return scanAudio(row) })
	if err != nil {
		return nil, fmt.Errorf("resynthesis candidates of %q: %w", rule.Phrase, unavailable(err))
	}
	ids := []int64{}
	for _, a := range audios {
		if rule.NeedsResynthesis(a) {
			ids = append(ids, a.ID)
		}
	}
	return ids, nil
}
