package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/narrator/narrator"
)

const liveAudioOfProjectSQL = `SELECT 1 FROM audios WHERE id = ? AND project_id = ? AND deleted_at IS NULL`

const countAudioListenSQL = `
INSERT INTO audio_listens (audio_id, event, day, count) VALUES (?, ?, ?, 1)
ON CONFLICT (audio_id, event, day) DO UPDATE SET count = audio_listens.count + 1`

const countProjectListenSQL = `
INSERT INTO project_listens (project_id, day, event, count) VALUES (?, ?, ?, 1)
ON CONFLICT (project_id, day, event) DO UPDATE SET count = project_listens.count + 1`

// RecordListen counts one listening event of a live audio of a project on
// the UTC day of at. It returns EINVALID for an unknown event and
// ENOTFOUND if the audio is not a live audio of that project.
func (s *Store) RecordListen(ctx context.Context, projectID, audioID int64, event string, at time.Time) error {
	if err := narrator.ValidateListenEvent(event); err != nil {
		return err
	}
	tx, err := s.db.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("record listen of audio %d: %w", audioID, err)
	}
	defer tx.Rollback(ctx)
	var one int
	err = tx.QueryRow(ctx, liveAudioOfProjectSQL, audioID, projectID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return narrator.Errorf(narrator.ENOTFOUND, "audio %s not found", strconv.FormatInt(audioID, 10))
	}
	if err != nil {
		return fmt.Errorf("record listen of audio %d: %w", audioID, err)
	}
	day := narrator.ListenDay(at)
	if _, err := tx.Exec(ctx, countAudioListenSQL, audioID, event, day); err != nil {
		return fmt.Errorf("record listen of audio %d: %w", audioID, err)
	}
	if _, err := tx.Exec(ctx, countProjectListenSQL, projectID, day, event); err != nil {
		return fmt.Errorf("record listen of audio %d: project: %w", audioID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("record listen of audio %d: commit: %w", audioID, err)
	}
	return nil
}

// AudioListensSQL is a range scan of audio_listens' primary key.
const AudioListensSQL = `SELECT event, CAST(SUM(count) AS BIGINT) FROM audio_listens WHERE audio_id = ? GROUP BY event`

// AudioListens returns an audio's listening counts of all time; an audio
// without any, or an unknown one, has zero counts.
func (s *Store) AudioListens(ctx context.Context, audioID int64) (narrator.ListenCounts, error) {
	var c narrator.ListenCounts
	tx, err := s.db.BeginRead(ctx)
	if err != nil {
		return c, fmt.Errorf("listens of audio %d: %w", audioID, err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, AudioListensSQL, audioID)
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

// ProjectListensSQL is a range scan of project_listens' primary key: a
// project has at most one row per day and event.
const ProjectListensSQL = `SELECT day, event, count FROM project_listens WHERE project_id = ? ORDER BY day`

// ProjectListens returns a project's listening counts of all time, and
// those of each day since the UTC day of since that has any. An unknown
// project has none.
func (s *Store) ProjectListens(ctx context.Context, projectID int64, since time.Time) (*narrator.ProjectListens, error) {
	tx, err := s.db.BeginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("listens of project %d: %w", projectID, err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, ProjectListensSQL, projectID)
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
