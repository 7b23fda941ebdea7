package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

const upsertPronunciationSQL = `
INSERT INTO pronunciations (project_id, phrase, say, created_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (project_id, lower(phrase)) DO UPDATE SET phrase = excluded.phrase, say = excluded.say
RETURNING id, created_at`

const countPronunciationsSQL = `
SELECT count(*), count(*) FILTER (WHERE lower(phrase) = lower($2)) FROM pronunciations WHERE project_id = $1`

// SetPronunciation adds a rule to a project, or replaces the rule for the
// same phrase (in any letter case). It fills in p's ID and CreatedAt, and
// returns ENOTFOUND if the project does not exist and ECONFLICT if it
// has narrator.MaxPronunciations rules already and p adds one.
func (s *Store) SetPronunciation(ctx context.Context, p *narrator.Pronunciation) error {
	if err := p.Validate(); err != nil {
		return err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("set pronunciation: %w", err)
	}
	defer rollback(ctx, tx)
	if _, err := findProject(ctx, tx, p.ProjectID); err != nil {
		return fmt.Errorf("set pronunciation in project %d: %w", p.ProjectID, err)
	}
	p.Trim()
	// The project's row lock (lockProjectSQL) serialises the rules added
	// to it, so that concurrent adds cannot pass the count together.
	if _, err := tx.Exec(ctx, lockProjectSQL, p.ProjectID); err != nil {
		return fmt.Errorf("set pronunciation in project %d: lock: %w", p.ProjectID, err)
	}
	var count, same int
	if err := tx.QueryRow(ctx, countPronunciationsSQL, p.ProjectID, p.Phrase).Scan(&count, &same); err != nil {
		return fmt.Errorf("set pronunciation in project %d: count: %w", p.ProjectID, err)
	}
	if err := narrator.CheckPronunciationCount(count, same > 0); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, upsertPronunciationSQL, p.ProjectID, p.Phrase, p.Say, s.now()).Scan(&p.ID, &p.CreatedAt); err != nil {
		return fmt.Errorf("set pronunciation %q: %w", p.Phrase, err)
	}
	p.CreatedAt = p.CreatedAt.UTC()
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("set pronunciation %q: commit: %w", p.Phrase, err)
	}
	return nil
}

const pronunciationColumns = `id, project_id, phrase, say, created_at`

func scanPronunciation(row pgx.Row) (*narrator.Pronunciation, error) {
	var p narrator.Pronunciation
	if err := row.Scan(&p.ID, &p.ProjectID, &p.Phrase, &p.Say, &p.CreatedAt); err != nil {
		return nil, err
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return &p, nil
}

const listPronunciationsSQL = `
SELECT ` + pronunciationColumns + ` FROM pronunciations WHERE project_id = $1 ORDER BY lower(phrase), id`

// ListPronunciations returns a project's rules, by phrase.
func (s *Store) ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error) {
	rows, err := s.query(ctx, listPronunciationsSQL, projectID)
	if err != nil {
		return nil, fmt.Errorf("list pronunciations of project %d: %w", projectID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*narrator.Pronunciation, error) { return scanPronunciation(row) })
	if err != nil {
		return nil, fmt.Errorf("list pronunciations of project %d: %w", projectID, err)
	}
	if out == nil {
		out = []*narrator.Pronunciation{}
	}
	return out, nil
}

const deletePronunciationSQL = `
DELETE FROM pronunciations WHERE id = $1 AND project_id = $2
RETURNING ` + pronunciationColumns

// RemovePronunciation deletes a rule of a project and returns it, or
// ENOTFOUND.
func (s *Store) RemovePronunciation(ctx context.Context, projectID, id int64) (*narrator.Pronunciation, error) {
	p, err := scanPronunciation(s.queryRow(ctx, deletePronunciationSQL, id, projectID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d has no pronunciation %d", projectID, id)
	}
	if err != nil {
		return nil, fmt.Errorf("remove pronunciation %d: %w", id, err)
	}
	return p, nil
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
