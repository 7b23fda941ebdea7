package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// FindAudioByExternalID returns the live audio of a project with that
// external ID, media included. Unlike FindAudio it never takes the
// reference for an audio ID, so an embed cannot reach audios by counting.
// It returns ENOTFOUND if there is none.
func (s *Store) FindAudioByExternalID(ctx context.Context, projectID int64, externalID string) (*narrator.Audio, error) {
	if externalID == "" || !narrator.ValidText(externalID) {
		return nil, audioNotFound(strconv.Quote(externalID))
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find audio by external id %q: %w", externalID, err)
	}
	defer rollback(ctx, tx)
	a, err := findAudioByExternalID(ctx, tx, projectID, externalID, noLock)
	if err != nil {
		return nil, fmt.Errorf("find audio by external id %q in project %d: %w", externalID, projectID, err)
	}
	if err := loadMedia(ctx, tx, a); err != nil {
		return nil, fmt.Errorf("find audio by external id %q in project %d: %w", externalID, projectID, err)
	}
	return a, nil
}

// findAudioByArticleURLSQL reads the audios_article_url index, on a hash
// of the URL; the URL itself is compared too.
const findAudioByArticleURLSQL = `SELECT ` + audioColumns + `
FROM audios
WHERE project_id = $1 AND md5(article_url) = md5($2) AND article_url = $2
	AND deleted_at IS NULL AND article_url <> ''
ORDER BY created_at DESC, id DESC
LIMIT 1`

// FindAudioByArticleURL returns the newest live audio of a project whose
// article URL is articleURL, media included. It returns ENOTFOUND if there
// is none.
func (s *Store) FindAudioByArticleURL(ctx context.Context, projectID int64, articleURL string) (*narrator.Audio, error) {
	notFound := narrator.Errorf(narrator.ENOTFOUND, "no audio of project %d has article URL %q", projectID, articleURL)
	if !narrator.ValidText(articleURL) {
		return nil, notFound
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find audio by article url: %w", err)
	}
	defer rollback(ctx, tx)
	a, err := scanAudio(tx.QueryRow(ctx, findAudioByArticleURLSQL, projectID, articleURL))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("find audio by article url in project %d: %w", projectID, err)
	}
	if err := loadMedia(ctx, tx, a); err != nil {
		return nil, fmt.Errorf("find audio by article url in project %d: %w", projectID, err)
	}
	return a, nil
}

// audioListensSQL is a range scan of audio_listens' primary key.
const audioListensSQL = `SELECT event, SUM(count)::bigint FROM audio_listens WHERE audio_id = $1 GROUP BY event`

// AudioListens returns an audio's listening counts of all time; an audio
// without any, or an unknown one, has zero counts.
func (s *Store) AudioListens(ctx context.Context, audioID int64) (narrator.ListenCounts, error) {
	var c narrator.ListenCounts
	rows, err := s.query(ctx, audioListensSQL, audioID)
	if err != nil {
		return c, fmt.Errorf("listens of audio %d: %w", audioID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var event string
		var n int64
		if err := rows.Scan(&event, &n); err != nil {
			return c, fmt.Errorf("listens of audio %d: %w", audioID, err)
		}
		c.Add(event, n)
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("listens of audio %d: %w", audioID, err)
	}
	return c, nil
}

// projectListensSQL is a range scan of project_listens' primary key: a
// project has at most one row per day and event.
const projectListensSQL = `SELECT day, event, count FROM project_listens WHERE project_id = $1 ORDER BY day`

// ProjectListens returns a project's listening counts of all time, and
// those of each day since the UTC day of since that has any. An unknown
// project has none.
func (s *Store) ProjectListens(ctx context.Context, projectID int64, since time.Time) (*narrator.ProjectListens, error) {
	rows, err := s.query(ctx, projectListensSQL, projectID)
	if err != nil {
		return nil, fmt.Errorf("listens of project %d: %w", projectID, err)
	}
	defer rows.Close()
	out := &narrator.ProjectListens{Days: []narrator.DailyListens{}}
	from := narrator.ListenDay(since)
	for rows.Next() {
		var day time.Time
		var event string
		var n int64
		if err := rows.Scan(&day, &event, &n); err != nil {
			return nil, fmt.Errorf("listens of project %d: %w", projectID, err)
		}
		out.Total.Add(event, n)
		day = narrator.ListenDay(day)
		if day.Before(from) {
			continue
		}
		if k := len(out.Days); k == 0 || !out.Days[k-1].Day.Equal(day) {
			out.Days = append(out.Days, narrator.DailyListens{Day: day})
		}
		out.Days[len(out.Days)-1].Counts.Add(event, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listens of project %d: %w", projectID, err)
	}
	return out, nil
}
