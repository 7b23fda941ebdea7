package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// audioFilterSQL selects a project's live audios created at or after a time
// whose title or external ID contains a pattern (LIKE, which ignores the
// case of ASCII letters); an empty pattern matches every audio.
const audioFilterSQL = `
FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND created_at >= ?
	AND (? = '' OR title LIKE ? ESCAPE '\' OR external_id LIKE ? ESCAPE '\')`

const searchAudiosSQL = `SELECT ` + audioColumns + audioFilterSQL + `
ORDER BY created_at DESC, id DESC
LIMIT ? OFFSET ?`

// countAudiosSQL counts matches up to narrator.MaxSearchCount.
const countAudiosSQL = `SELECT COUNT(*) FROM (SELECT 1` + audioFilterSQL + ` LIMIT ?)`

const projectAudioCountSQL = `SELECT audio_count FROM projects WHERE id = ?`

// likePattern returns a LIKE pattern that matches strings containing q.
func likePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(q) + "%"
}

// SearchAudios returns a page of a project's live audios created at or
// after since (the zero time means all) whose title or external ID contains
// query, ignoring the case of ASCII letters ("" matches all), newest first
// with ties broken by descending ID, media included, as narrator.PlanSearch
// plans it. It also returns how many audios match in all pages: exactly
// when nothing is filtered (the project's count), and at most
// narrator.MaxSearchCount otherwise. Pages start at 1; perPage must be
// positive.
func (s *Store) SearchAudios(ctx context.Context, projectID int64, query string, since time.Time, page, perPage int) ([]*narrator.Audio, int, error) {
	plan, err := narrator.PlanSearch(query, since, page, perPage)
	if err != nil {
		return nil, 0, err
	}
	if plan.NoMatch {
		return []*narrator.Audio{}, 0, nil
	}
	var sinceUS int64 = math.MinInt64
	if !since.IsZero() {
		sinceUS = micros(since)
	}
	pattern := likePattern(plan.Query)
	args := []any{projectID, sinceUS, plan.Query, pattern, pattern}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("search audios: %w", err)
	}
	defer tx.Rollback()
	var total int
	count, countArgs := countAudiosSQL, append(slices.Clip(args), narrator.MaxSearchCount)
	if plan.Exact {
		count, countArgs = projectAudioCountSQL, []any{projectID}
	}
	if err := tx.QueryRowContext(ctx, count, countArgs...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("search audios of project %d: count: %w", projectID, err)
	}
	audios := []*narrator.Audio{}
	if plan.Offset >= int64(total) {
		return audios, total, nil
	}
	audios, err = queryAudios(ctx, tx, searchAudiosSQL, append(args, perPage, plan.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("search audios of project %d: %w", projectID, err)
	}
	return audios, total, nil
}

// queryAudios runs a query that selects audioColumns and loads the media
// of the audios it returns.
func queryAudios(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]*narrator.Audio, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	audios := []*narrator.Audio{}
	for rows.Next() {
		a, err := scanAudio(rows)
		if err != nil {
			return nil, err
		}
		audios = append(audios, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if err := loadMedia(ctx, tx, audios...); err != nil {
		return nil, err
	}
	return audios, nil
}

const findAudiosByIDSQL = `SELECT ` + audioColumns + `
FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND id IN (SELECT value FROM json_each(?))
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
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("find audios by id: %w", err)
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find audios by id: %w", err)
	}
	defer tx.Rollback()
	audios, err := queryAudios(ctx, tx, findAudiosByIDSQL, projectID, string(idsJSON))
	if err != nil {
		return nil, fmt.Errorf("find audios by id in project %d: %w", projectID, err)
	}
	return audios, nil
}
