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

// FindAudioByExternalID returns the live audio of a project with that
// external ID, media included. Unlike FindAudio it never takes the
// reference for an audio ID, so an embed cannot reach audios by counting.
// It returns ENOTFOUND if there is none.
func (s *Store) FindAudioByExternalID(ctx context.Context, projectID int64, externalID string) (*narrator.Audio, error) {
	if externalID == "" || !narrator.ValidText(externalID) {
		return nil, AudioNotFound(strconv.Quote(externalID))
	}
	return ReadV(ctx, s, fmt.Sprintf("find audio by external id %q", externalID), func(tx Tx) (*narrator.Audio, error) {
		a, err := AudioByExternalID(ctx, tx, projectID, externalID, "")
		if err != nil {
			return nil, fmt.Errorf("find audio by external id %q in project %d: %w", externalID, projectID, err)
		}
		if err := LoadMedia(ctx, s.db, tx, a); err != nil {
			return nil, fmt.Errorf("find audio by external id %q in project %d: %w", externalID, projectID, err)
		}
		return a, nil
	})
}

const liveAudioOfProjectSQL = `SELECT 1 FROM audios WHERE id = ? AND project_id = ? AND deleted_at IS NULL`

const addAudioListensSQL = `
INSERT INTO audio_listens (audio_id, event, day, count) VALUES (?, ?, ?, ?)
ON CONFLICT (audio_id, event, day) DO UPDATE SET count = audio_listens.count + excluded.count`

const addProjectListensSQL = `
INSERT INTO project_listens (project_id, day, event, count) VALUES (?, ?, ?, ?)
ON CONFLICT (project_id, day, event) DO UPDATE SET count = project_listens.count + excluded.count`

// RecordListens adds a batch of listening counts in one write transaction.
// Tallies whose audio is not a live, published audio of their project are
// dropped without error, so that whoever sent the events learns nothing of which
// pairs exist. It returns EINVALID, and writes nothing, if a tally has an
// unknown event or a count below 1.
func (s *Store) RecordListens(ctx context.Context, tallies []narrator.ListenTally) error {
	for _, t := range tallies {
		if err := narrator.ValidateListenEvent(t.Event); err != nil {
			return err
		}
		if t.Count < 1 {
			return narrator.Errorf(narrator.EINVALID, "a tally counts at least one event")
		}
	}
	if len(tallies) == 0 {
		return nil
	}
	return s.write(ctx, "record listens", func(tx Tx) error {
		type pair struct{ project, audio int64 }
		live := map[pair]bool{}
		for _, t := range tallies {
			p := pair{t.ProjectID, t.AudioID}
			ok, seen := live[p]
			if !seen {
				var one int
				err := tx.QueryRow(ctx, liveAudioOfProjectSQL, t.AudioID, t.ProjectID).Scan(&one)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("record listens of audio %d: %w", t.AudioID, err)
				}
				ok = err == nil
				if ok {
					// An audio that is not published is not listened to.
					pub, err := findPublication(ctx, tx, t.AudioID)
					if err != nil {
						return fmt.Errorf("record listens of audio %d: %w", t.AudioID, err)
					}
					ok = pub.Public(s.now())
				}
				live[p] = ok
			}
			if !ok {
				continue
			}
			day := narrator.ListenDay(t.Day)
			if _, err := tx.Exec(ctx, addAudioListensSQL, t.AudioID, t.Event, day, t.Count); err != nil {
				return fmt.Errorf("record listens of audio %d: %w", t.AudioID, err)
			}
			if _, err := tx.Exec(ctx, addProjectListensSQL, t.ProjectID, day, t.Event, t.Count); err != nil {
				return fmt.Errorf("record listens of audio %d: project: %w", t.AudioID, err)
			}
		}
		return nil
	})
}

// AudioListensSQL is a range scan of audio_listens' primary key.
const AudioListensSQL = `SELECT event, CAST(SUM(count) AS BIGINT) FROM audio_listens WHERE audio_id = ? GROUP BY event`

// AudioListens returns an audio's listening counts of all time; an audio
// without any, or an unknown one, has zero counts.
func (s *Store) AudioListens(ctx context.Context, audioID int64) (narrator.ListenCounts, error) {
	var c narrator.ListenCounts
	return ReadV(ctx, s, fmt.Sprintf("listens of audio %d", audioID), func(tx Tx) (narrator.ListenCounts, error) {
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
	})
}

// ProjectListensSQL is a range scan of project_listens' primary key: a
// project has at most one row per day and event.
const ProjectListensSQL = `SELECT day, event, count FROM project_listens WHERE project_id = ? ORDER BY day`

// ProjectListens returns a project's listening counts of all time, and
// those of each day since the UTC day of since that has any. An unknown
// project has none.
func (s *Store) ProjectListens(ctx context.Context, projectID int64, since time.Time) (*narrator.ProjectListens, error) {
	return ReadV(ctx, s, fmt.Sprintf("listens of project %d", projectID), func(tx Tx) (*narrator.ProjectListens, error) {
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
	})
}
