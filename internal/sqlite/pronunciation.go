package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

const upsertPronunciationSQL = `
INSERT INTO pronunciations (project_id, phrase, say, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT (project_id, lower(phrase)) DO UPDATE SET phrase = excluded.phrase, say = excluded.say
RETURNING id, created_at`

const countPronunciationsSQL = `
SELECT count(*), coalesce(sum(lower(phrase) = lower(?)), 0) FROM pronunciations WHERE project_id = ?`

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
	defer tx.Rollback()
	if _, err := findProject(ctx, tx, p.ProjectID); err != nil {
		return fmt.Errorf("set pronunciation in project %d: %w", p.ProjectID, err)
	}
	p.Trim()
	// SQLite has one writer: no rule is added between the count and the
	// insert.
	var count, same int
	if err := tx.QueryRowContext(ctx, countPronunciationsSQL, p.Phrase, p.ProjectID).Scan(&count, &same); err != nil {
		return fmt.Errorf("set pronunciation in project %d: count: %w", p.ProjectID, err)
	}
	if err := narrator.CheckPronunciationCount(count, same > 0); err != nil {
		return err
	}
	var created int64
	if err := tx.QueryRowContext(ctx, upsertPronunciationSQL, p.ProjectID, p.Phrase, p.Say, micros(s.now())).Scan(&p.ID, &created); err != nil {
		return fmt.Errorf("set pronunciation %q: %w", p.Phrase, err)
	}
	p.CreatedAt = fromMicros(created)
	if err := commit(tx); err != nil {
		return fmt.Errorf("set pronunciation %q: commit: %w", p.Phrase, err)
	}
	return nil
}

const pronunciationColumns = `id, project_id, phrase, say, created_at`

func scanPronunciation(sc interface{ Scan(...any) error }) (*narrator.Pronunciation, error) {
	var p narrator.Pronunciation
	var created int64
	if err := sc.Scan(&p.ID, &p.ProjectID, &p.Phrase, &p.Say, &created); err != nil {
		return nil, err
	}
	p.CreatedAt = fromMicros(created)
	return &p, nil
}

const listPronunciationsSQL = `
SELECT ` + pronunciationColumns + ` FROM pronunciations WHERE project_id = ? ORDER BY lower(phrase), id`

// ListPronunciations returns a project's rules, by phrase.
func (s *Store) ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error) {
	rows, err := s.reader.QueryContext(ctx, listPronunciationsSQL, projectID)
	if err != nil {
		return nil, fmt.Errorf("list pronunciations of project %d: %w", projectID, unavailable(err))
	}
	defer rows.Close()
	out := []*narrator.Pronunciation{}
	for rows.Next() {
		p, err := scanPronunciation(rows)
		if err != nil {
			return nil, fmt.Errorf("list pronunciations of project %d: %w", projectID, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list pronunciations of project %d: %w", projectID, err)
	}
	return out, nil
}

const deletePronunciationSQL = `
DELETE FROM pronunciations WHERE id = ? AND project_id = ?
RETURNING id, project_id, phrase, say, created_at`

// RemovePronunciation deletes a rule of a project and returns it, or
// ENOTFOUND.
func (s *Store) RemovePronunciation(ctx context.Context, projectID, id int64) (*narrator.Pronunciation, error) {
	var p narrator.Pronunciation
	var created int64
	err := s.writer.QueryRowContext(ctx, deletePronunciationSQL, id, projectID).Scan(&p.ID, &p.ProjectID, &p.Phrase, &p.Say, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d has no pronunciation %d", projectID, id)
	}
	if err != nil {
		return nil, fmt.Errorf("remove pronunciation %d: %w", id, unavailable(err))
	}
	p.CreatedAt = fromMicros(created)
	return &p, nil
}

const resynthesizeSQL = `
UPDATE audios SET state = 'unprocessed', error = '', revision = ?, updated_at = ?
WHERE id = ?`

// resynthesize makes a live audio unprocessed at a new revision
// (narrator.Audio.Resynthesize) and enqueues its synthesis, inside tx.
// The account's limits apply (narrator.Limits.CheckSynthesis).
func (s *Store) resynthesize(ctx context.Context, tx *sql.Tx, a *narrator.Audio) error {
	round, err := s.planSynthesis(ctx, tx, &headMemo{}, a.ProjectID, a.State != narrator.StateUnprocessed, true)
	if err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	before := *a
	a.Resynthesize(s.now())
	if _, err := tx.ExecContext(ctx, resynthesizeSQL, a.Revision, micros(a.UpdatedAt), a.ID); err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	eff := narrator.ChangeEffects(&before, a)
	eff.Round = round
	if err := s.applyEffects(ctx, tx, a, eff); err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	return nil
}
