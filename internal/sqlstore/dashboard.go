package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// audioFilterSQL selects a project's live audios created at or after a
// time whose title or external ID contains a pattern, given twice, as the
// dialect's case-folding LIKE (%[1]s, DB.ILike) reads it; an empty query
// matches every audio.
const audioFilterSQL = `
FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND created_at >= ?
	AND (? = '' OR title %[1]s ? ESCAPE '\' OR external_id %[1]s ? ESCAPE '\')`

const searchAudiosSQL = `SELECT ` + AudioColumns + audioFilterSQL + `
ORDER BY created_at DESC, id DESC
LIMIT ? OFFSET ?`

// countAudiosSQL counts matches up to narrator.MaxSearchCount.
const countAudiosSQL = `SELECT count(*) FROM (SELECT 1` + audioFilterSQL + ` LIMIT ?) AS matches`

const projectAudioCountSQL = `SELECT audio_count FROM projects WHERE id = ?`

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
// Letter case is ignored as the dialect's LIKE folds it (DB.ILike): ASCII
// letters on SQLite; on PostgreSQL as the database's locale has it, which
// in UTF-8 locales includes other letters too.
func (s *Store) SearchAudios(ctx context.Context, projectID int64, query string, since time.Time, page, perPage int) ([]*narrator.Audio, int, error) {
	plan, err := narrator.PlanSearch(query, since, page, perPage)
	if err != nil {
		return nil, 0, err
	}
	if plan.NoMatch {
		return []*narrator.Audio{}, 0, nil
	}
	var audios []*narrator.Audio
	var total int
	err = s.read(ctx, "search audios", func(tx Tx) error {
		pattern := likePattern(plan.Query)
		args := []any{projectID, since, plan.Query, pattern, pattern}
		like := s.db.ILike()
		var err error
		if plan.Exact {
			err = tx.QueryRow(ctx, projectAudioCountSQL, projectID).Scan(&total)
		} else {
			err = tx.QueryRow(ctx, fmt.Sprintf(countAudiosSQL, like), append(args, narrator.MaxSearchCount)...).Scan(&total)
		}
		if err != nil {
			return fmt.Errorf("search audios of project %d: count: %w", projectID, err)
		}
		if plan.Offset >= int64(total) {
			audios = []*narrator.Audio{}
			return nil
		}
		audios, err = QueryAudios(ctx, s.db, tx, fmt.Sprintf(searchAudiosSQL, like), append(args, perPage, plan.Offset)...)
		if err != nil {
			return fmt.Errorf("search audios of project %d: %w", projectID, err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return audios, total, nil

}

// findAudiosByIDSQL takes the IDs as the dialect's list (%s, DB.InList).
const findAudiosByIDSQL = `SELECT ` + AudioColumns + `
FROM audios
WHERE project_id = ? AND deleted_at IS NULL AND id %s
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
	return ReadV(ctx, s, "find audios by id", func(tx Tx) ([]*narrator.Audio, error) {
		audios, err := QueryAudios(ctx, s.db, tx, fmt.Sprintf(findAudiosByIDSQL, s.db.InList()), projectID, ids)
		if err != nil {
			return nil, fmt.Errorf("find audios by id in project %d: %w", projectID, err)
		}
		return audios, nil
	})
}
