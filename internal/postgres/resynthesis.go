package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// candidatesSQL narrows the search with ILIKE; NeedsResynthesis then
// decides on whole words.
const candidatesSQL = `
SELECT ` + audioColumns + ` FROM audios
WHERE project_id = $1 AND deleted_at IS NULL AND state <> 'unprocessed'
	AND (title ILIKE $2 ESCAPE '\' OR body ILIKE $2 ESCAPE '\' OR author ILIKE $2 ESCAPE '\')
ORDER BY id`

// ResynthesisCandidates returns, in ID order, the audios of a project that
// rule's change is to re-queue (narrator.Pronunciation.NeedsResynthesis),
// read in a read-only transaction that locks nothing.
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

// ResynthesizeAudios re-queues, in one write, those of the audios ids of a
// project that still need it for rule, each locked in ID order, within the
// account's limits. It stops at the first refusal (EQUEUEFULL, EQUOTA),
// keeps what it did, and returns how many it re-queued and the refusal.
func (s *Store) ResynthesizeAudios(ctx context.Context, projectID int64, rule *narrator.Pronunciation, ids []int64) (int, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return 0, fmt.Errorf("resynthesize for %q: %w", rule.Phrase, err)
	}
	defer rollback(ctx, tx)
	n := 0
	var refused error
	for _, id := range ids {
		a, err := findAudioByID(ctx, tx, id, forUpdate)
		if narrator.ErrorCode(err) == narrator.ENOTFOUND {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("resynthesize audio %d: %w", id, err)
		}
		if a.ProjectID != projectID || !rule.NeedsResynthesis(a) {
			continue
		}
		if err := s.resynthesize(ctx, tx, a); err != nil {
			if c := narrator.ErrorCode(err); c == narrator.EQUEUEFULL || c == narrator.EQUOTA {
				refused = err
				break
			}
			return 0, err
		}
		n++
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("resynthesize for %q: commit: %w", rule.Phrase, unavailable(err))
	}
	return n, refused
}
