package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// audioFilterSQL selects a project's live audios created at or after $2
// whose title or external ID contains a pattern ($4, for ILIKE, which
// ignores letter case as the database's locale has it); an empty query
// ($3) matches every audio.
const audioFilterSQL = `
FROM audios
WHERE project_id = $1 AND deleted_at IS NULL AND created_at >= $2
	AND ($3 = '' OR title ILIKE $4 ESCAPE '\' OR external_id ILIKE $4 ESCAPE '\')`

const searchAudiosSQL = `SELECT ` + audioColumns + audioFilterSQL + `
ORDER BY created_at DESC, id DESC
LIMIT $5 OFFSET $6`

// countAudiosSQL counts matches up to $5, narrator.MaxSearchCount.
const countAudiosSQL = `SELECT count(*) FROM (SELECT 1` + audioFilterSQL + ` LIMIT $5) AS matches`

const projectAudioCountSQL = `SELECT audio_count FROM projects WHERE id = $1`

// likePattern returns a LIKE pattern that matches strings containing q.
func likePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(q) + "%"
}

// SearchAudios returns a page of a project's live audios created at or
// after since (the zero time means all) whose title or external ID contains
// query, ignoring letter case ("" matches all), newest first with ties
// broken by descending ID, media included, as narrator.PlanSearch plans it.
// It also returns how many audios match in all pages: exactly when nothing
// is filtered (the project's count), and at most narrator.MaxSearchCount
// otherwise. Pages start at 1; perPage must be positive.
//
// Letter case is ignored as the database's locale folds it, which includes
// ASCII and, in UTF-8 locales, other letters too.
func (s *Store) SearchAudios(ctx context.Context, projectID int64, query string, since time.Time, page, perPage int) ([]*narrator.Audio, int, error) {
	plan, err := narrator.PlanSearch(query, since, page, perPage)
	if err != nil {
		return nil, 0, err
	}
	if plan.NoMatch {
		return []*narrator.Audio{}, 0, nil
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("search audios: %w", err)
	}
	defer rollback(ctx, tx)
	args := []any{projectID, since, plan.Query, likePattern(plan.Query)}
	var total int
	if plan.Exact {
		err = tx.QueryRow(ctx, projectAudioCountSQL, projectID).Scan(&total)
	} else {
		err = tx.QueryRow(ctx, countAudiosSQL, append(args, narrator.MaxSearchCount)...).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("search audios of project %d: count: %w", projectID, err)
	}
	if plan.Offset >= int64(total) {
		return []*narrator.Audio{}, total, nil
	}
	audios, err := queryAudios(ctx, tx, searchAudiosSQL, append(args, perPage, plan.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("search audios of project %d: %w", projectID, err)
	}
	return audios, total, nil
}

const findAudiosByIDSQL = `SELECT ` + audioColumns + `
FROM audios
WHERE project_id = $1 AND deleted_at IS NULL AND id = ANY($2)
ORDER BY id`

// FindAudiosByID returns the live audios of a project among the given IDs,
// ordered by ID, media included. IDs of missing, deleted or other
// projects' audios are left out. At most narrator.MaxAudiosByID IDs may be
// given; more is EINVALID.
func (s *Store) FindAudiosByID(ctx context.Context, projectID int64, ids []int64) ([]*narrator.Audio, error) {
	if err := narrator.ValidateAudioIDs(ids); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []*narrator.Audio{}, nil
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find audios by id: %w", err)
	}
	defer rollback(ctx, tx)
	audios, err := queryAudios(ctx, tx, findAudiosByIDSQL, projectID, ids)
	if err != nil {
		return nil, fmt.Errorf("find audios by id in project %d: %w", projectID, err)
	}
	return audios, nil
}
