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

const resynthesizeSQL = `
UPDATE audios SET state = $1, error = $2, revision = $3, updated_at = $4
WHERE id = $5`

// resynthesize makes a live audio, locked, unprocessed at a new revision
// (narrator.Audio.Resynthesize) and enqueues its synthesis, inside tx.
// The account's limits apply (narrator.Limits.CheckSynthesis).
func (s *Store) resynthesize(ctx context.Context, tx pgx.Tx, a *narrator.Audio) error {
	round, err := s.planSynthesis(ctx, tx, a.ProjectID, a.State != narrator.StateUnprocessed, true)
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
