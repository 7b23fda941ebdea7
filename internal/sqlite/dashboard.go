package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
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

// MaxSearchCount bounds how many matches SearchAudios counts for a search
// or period filter, so that a search in a large archive stays fast.
const MaxSearchCount = 10_000

// countAudiosSQL counts matches up to MaxSearchCount.
const countAudiosSQL = `SELECT COUNT(*) FROM (SELECT 1` + audioFilterSQL + ` LIMIT 10000)`

const projectAudioCountSQL = `SELECT audio_count FROM projects WHERE id = ?`

// likePattern returns a LIKE pattern that matches strings containing q.
func likePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(q) + "%"
}

// SearchAudios returns a page of a project's live audios created at or
// after since (the zero time means all) whose title or external ID contains
// query, ignoring the case of ASCII letters ("" matches all), newest first
// with ties broken by descending ID, media included. It also returns how
// many audios match in all pages: exactly when nothing is filtered (the
// project's count), and at most MaxSearchCount otherwise. Pages start at 1;
// perPage must be positive.
func (s *Store) SearchAudios(ctx context.Context, projectID int64, query string, since time.Time, page, perPage int) ([]*narrator.Audio, int, error) {
	if perPage <= 0 {
		return nil, 0, narrator.Errorf(narrator.EINVALID, "per_page must be positive")
	}
	if page < 1 {
		page = 1
	}
	query = strings.TrimSpace(query)
	var sinceUS int64 = math.MinInt64
	if !since.IsZero() {
		sinceUS = micros(since)
	}
	pattern := likePattern(query)
	args := []any{projectID, sinceUS, query, pattern, pattern}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("search audios: %w", err)
	}
	defer tx.Rollback()
	var total int
	count, countArgs := countAudiosSQL, args
	if query == "" && since.IsZero() {
		count, countArgs = projectAudioCountSQL, []any{projectID}
	}
	if err := tx.QueryRowContext(ctx, count, countArgs...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("search audios of project %d: count: %w", projectID, err)
	}
	audios := []*narrator.Audio{}
	if int64(page-1) > int64(total)/int64(perPage) {
		return audios, total, nil
	}
	offset := int64(page-1) * int64(perPage)
	audios, err = queryAudios(ctx, tx, searchAudiosSQL, append(args, perPage, offset)...)
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

// MaxAudiosByID bounds how many audios FindAudiosByID reads at once.
const MaxAudiosByID = 500

const findAudiosByIDSQL = `SELECT ` + audioColumns + `
FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND id IN (SELECT value FROM json_each(?))
ORDER BY id`

// FindAudiosByID returns the live audios of a project among the given IDs,
// ordered by ID, media included. IDs of missing, deleted or other
// projects' audios are left out. At most MaxAudiosByID IDs may be given;
// more is EINVALID.
func (s *Store) FindAudiosByID(ctx context.Context, projectID int64, ids []int64) ([]*narrator.Audio, error) {
	if len(ids) > MaxAudiosByID {
		return nil, narrator.Errorf(narrator.EINVALID, "at most %d audios can be read at once", MaxAudiosByID)
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

// RegenerateAudio makes a live audio, found by reference as FindAudio does,
// unprocessed again even if its text is unchanged: in one transaction it
// clears its error, bumps its revision and enqueues its synthesis. Its
// media keep their keys until the new result is published. It returns the
// updated audio, or ENOTFOUND.
func (s *Store) RegenerateAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("regenerate audio %q: %w", ref, err)
	}
	defer tx.Rollback()
	a, err := resolveAudio(ctx, tx, projectID, ref)
	if err != nil {
		return nil, fmt.Errorf("regenerate audio %q in project %d: %w", ref, projectID, err)
	}
	if err := s.resynthesize(ctx, tx, a); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("regenerate audio %d: commit: %w", a.ID, err)
	}
	return a, nil
}
