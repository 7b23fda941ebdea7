package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/narrator/narrator"
)

const upsertPronunciationSQL = `
INSERT INTO pronunciations (project_id, phrase, say, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT (project_id, lower(phrase)) DO UPDATE SET phrase = excluded.phrase, say = excluded.say
RETURNING id, created_at`

const countPronunciationsSQL = `
SELECT count(*), count(CASE WHEN lower(phrase) = lower(?) THEN 1 END) FROM pronunciations WHERE project_id = ?`

// SetPronunciation adds a rule to a project, or replaces the rule for the
// same phrase (in any letter case). It fills in p's ID and CreatedAt, and
// returns ENOTFOUND if the project does not exist and ECONFLICT if it
// has narrator.MaxPronunciations rules already and p adds one.
func (s *Store) SetPronunciation(ctx context.Context, p *narrator.Pronunciation) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return s.write(ctx, "set pronunciation", func(tx Tx) error {
		p.Trim()
		// The project's row lock serialises the rules added to it, so that
		// concurrent adds cannot pass the count together.
		var id int64
		if err := tx.QueryRow(ctx, lockProjectSQL+s.db.ForUpdate(), p.ProjectID).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("set pronunciation in project %d: %w", p.ProjectID, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", p.ProjectID))
		} else if err != nil {
			return fmt.Errorf("set pronunciation in project %d: lock: %w", p.ProjectID, err)
		}
		var count, same int
		if err := tx.QueryRow(ctx, countPronunciationsSQL, p.Phrase, p.ProjectID).Scan(&count, &same); err != nil {
			return fmt.Errorf("set pronunciation in project %d: count: %w", p.ProjectID, err)
		}
		if err := narrator.CheckPronunciationCount(count, same > 0); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, upsertPronunciationSQL, p.ProjectID, p.Phrase, p.Say, s.now()).Scan(&p.ID, &p.CreatedAt); err != nil {
			return fmt.Errorf("set pronunciation %q: %w", p.Phrase, err)
		}
		return nil
	})
}

// PronunciationColumns are the columns ScanPronunciation reads.
const PronunciationColumns = `id, project_id, phrase, say, created_at`

// ScanPronunciation reads a row of PronunciationColumns.
func ScanPronunciation(row Row) (*narrator.Pronunciation, error) {
	var p narrator.Pronunciation
	if err := row.Scan(&p.ID, &p.ProjectID, &p.Phrase, &p.Say, &p.CreatedAt); err != nil {
		return nil, err
	}
	return &p, nil
}

const listPronunciationsSQL = `
SELECT ` + PronunciationColumns + ` FROM pronunciations WHERE project_id = ? ORDER BY lower(phrase), id`

// ListPronunciations returns a project's rules, by phrase.
func (s *Store) ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error) {
	return ReadV(ctx, s, fmt.Sprintf("list pronunciations of project %d", projectID), func(tx Tx) ([]*narrator.Pronunciation, error) {
		out, err := queryAll(ctx, tx, ScanPronunciation, listPronunciationsSQL, projectID)
		if err != nil {
			return nil, fmt.Errorf("list pronunciations of project %d: %w", projectID, err)
		}
		return out, nil
	})
}

const deletePronunciationSQL = `
DELETE FROM pronunciations WHERE id = ? AND project_id = ?
RETURNING ` + PronunciationColumns

// RemovePronunciation deletes a rule of a project and returns it, or
// ENOTFOUND.
func (s *Store) RemovePronunciation(ctx context.Context, projectID, id int64) (*narrator.Pronunciation, error) {
	return WriteV(ctx, s, fmt.Sprintf("remove pronunciation %d", id), func(tx Tx) (*narrator.Pronunciation, error) {
		p, err := ScanPronunciation(tx.QueryRow(ctx, deletePronunciationSQL, id, projectID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d has no pronunciation %d", projectID, id)
		}
		if err != nil {
			return nil, fmt.Errorf("remove pronunciation %d: %w", id, err)
		}
		return p, nil
	})
}

// candidatesSQL narrows the search with the dialect's case-folding LIKE
// (%[1]s, DB.ILike), given the pattern three times; NeedsResynthesis then
// decides on whole words in any case.
const candidatesSQL = `
SELECT ` + AudioColumns + ` FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND state <> 'unprocessed'
	AND (title %[1]s ? ESCAPE '\' OR body %[1]s ? ESCAPE '\' OR author %[1]s ? ESCAPE '\')
ORDER BY id`

// candidatePattern is likePattern of phrase with each letter outside ASCII
// that has another case turned into "_", any one character: SQLite's LIKE
// folds the case of ASCII letters only, and the pattern must find every
// audio that NeedsResynthesis, which folds all letters, selects.
func candidatePattern(phrase string) string {
	return strings.Map(func(r rune) rune {
		if r >= utf8.RuneSelf && unicode.ToUpper(r) != unicode.ToLower(r) {
			return '_'
		}
		return r
	}, likePattern(phrase))
}

// everyCandidateSQL lists a project's audios that a resynthesis of every
// audio may re-queue; ResynthesizeAudios applies the job's rule
// (narrator.ResynthesisJob.Needs) under its write. It reads IDs only: no
// article of a large project is held in memory.
const everyCandidateSQL = `
SELECT id FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND state <> 'unprocessed'
ORDER BY id`

// scanID reads a row of one ID.
func scanID(r Row) (int64, error) {
	var id int64
	err := r.Scan(&id)
	return id, err
}

// ResynthesisCandidates returns, in ID order, the audios of a project that
// job is to re-queue (narrator.ResynthesisJob.Needs), read in a
// transaction that only reads: the scan holds no write lock.
func (s *Store) ResynthesisCandidates(ctx context.Context, job narrator.ResynthesisJob) ([]int64, error) {
	return ReadV(ctx, s, fmt.Sprintf("resynthesis candidates of project %d", job.ProjectID), func(tx Tx) ([]int64, error) {
		if job.All {
			ids, err := queryAll(ctx, tx, scanID, everyCandidateSQL, job.ProjectID)
			if err != nil {
				return nil, fmt.Errorf("resynthesis candidates of project %d: %w", job.ProjectID, err)
			}
			return ids, nil
		}
		pattern := candidatePattern(strings.TrimSpace(job.Phrase))
		audios, err := queryAll(ctx, tx, ScanAudio, fmt.Sprintf(candidatesSQL, s.db.ILike()), job.ProjectID, pattern, pattern, pattern)
		if err != nil {
			return nil, fmt.Errorf("resynthesis candidates of %q: %w", job.Phrase, err)
		}
		ids := []int64{}
		for _, a := range audios {
			if job.Needs(a) {
				ids = append(ids, a.ID)
			}
		}
		return ids, nil
	})
}
