package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

const upsertClipSQL = `
INSERT INTO project_clips (project_id, kind, sample_rate, pcm, text, voice, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (project_id, kind) DO UPDATE SET sample_rate = excluded.sample_rate, pcm = excluded.pcm,
	text = excluded.text, voice = excluded.voice, updated_at = excluded.updated_at`

// SetClip sets a project's intro or outro, replacing the one it had, and
// fills in c.UpdatedAt. It returns EINVALID for a clip that
// narrator.Clip.Validate refuses and ENOTFOUND if the project does not
// exist. It renders nothing again: the audios made before keep theirs.
func (s *Store) SetClip(ctx context.Context, c *narrator.Clip) error {
	if err := c.Validate(); err != nil {
		return err
	}
	what := fmt.Sprintf("set %s of project %d", c.Kind, c.ProjectID)
	return s.write(ctx, what, func(tx Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, lockProjectSQL+s.db.ForUpdate(), c.ProjectID).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return narrator.Errorf(narrator.ENOTFOUND, "project %d not found", c.ProjectID)
		} else if err != nil {
			return fmt.Errorf("%s: lock: %w", what, err)
		}
		now := s.now()
		if _, err := tx.Exec(ctx, upsertClipSQL, c.ProjectID, string(c.Kind), c.SampleRate, encodePCM(c.Samples), c.Text, c.Voice, now); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		c.UpdatedAt = now
		return nil
	})
}

const findClipSQL = `
SELECT project_id, kind, sample_rate, pcm, text, voice, updated_at FROM project_clips WHERE project_id = ? AND kind = ?`

// Clip returns a project's intro or outro, or ENOTFOUND if it has none.
func (s *Store) Clip(ctx context.Context, projectID int64, kind narrator.ClipKind) (*narrator.Clip, error) {
	what := fmt.Sprintf("read %s of project %d", kind, projectID)
	return ReadV(ctx, s, what, func(tx Tx) (*narrator.Clip, error) {
		var (
			c   narrator.Clip
			pcm []byte
		)
		err := tx.QueryRow(ctx, findClipSQL, projectID, string(kind)).Scan(&c.ProjectID, &c.Kind, &c.SampleRate, &pcm, &c.Text, &c.Voice, &c.UpdatedAt)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d has no %s", projectID, kind)
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		c.Samples = decodePCM(pcm)
		return &c, nil
	})
}

const deleteClipSQL = `DELETE FROM project_clips WHERE project_id = ? AND kind = ?`

// RemoveClip removes a project's intro or outro, or returns ENOTFOUND if
// it has none. Audios made before keep theirs.
func (s *Store) RemoveClip(ctx context.Context, projectID int64, kind narrator.ClipKind) error {
	what := fmt.Sprintf("remove %s of project %d", kind, projectID)
	return s.write(ctx, what, func(tx Tx) error {
		n, err := tx.Exec(ctx, deleteClipSQL, projectID, string(kind))
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if n == 0 {
			return narrator.Errorf(narrator.ENOTFOUND, "project %d has no %s", projectID, kind)
		}
		return nil
	})
}

// encodePCM returns samples as 16-bit little-endian bytes.
func encodePCM(samples []int16) []byte {
	b := make([]byte, 0, 2*len(samples))
	for _, v := range samples {
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	return b
}

// decodePCM reads 16-bit little-endian samples; an odd last byte is
// dropped.
func decodePCM(b []byte) []int16 {
	out := make([]int16, len(b)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}
