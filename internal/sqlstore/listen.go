package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

const liveAudioOfProjectSQL = `SELECT 1 FROM audios WHERE id = ? AND project_id = ? AND deleted_at IS NULL`

const addAudioListensSQL = `
INSERT INTO audio_listens (audio_id, event, day, count) VALUES (?, ?, ?, ?)
ON CONFLICT (audio_id, event, day) DO UPDATE SET count = audio_listens.count + excluded.count`

const addProjectListensSQL = `
INSERT INTO project_listens (project_id, day, event, count) VALUES (?, ?, ?, ?)
ON CONFLICT (project_id, day, event) DO UPDATE SET count = project_listens.count + excluded.count`

// RecordListens adds a batch of listening counts in one write transaction.
// Tallies whose audio is not a live audio of their project are dropped
// without error, so that whoever sent the events learns nothing of which
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
	tx, err := s.db.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("record listens: %w", err)
	}
	defer tx.Rollback(ctx)
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
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("record listens: commit: %w", err)
	}
	return nil
}
