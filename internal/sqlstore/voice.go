package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

const (
	insertVoiceSQL = `
INSERT INTO voices (id, name, gender, language, engine, quality, license, speaker, priority, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertVoiceFileSQL = `INSERT INTO voice_files (voice_id, role, name, size, sha256) VALUES (?, ?, ?, ?, ?)`
	listVoicesSQL      = `
SELECT id, name, gender, language, engine, quality, license, speaker, priority, created_at
FROM voices ORDER BY language, name`
	listVoiceFilesSQL = `SELECT voice_id, role, name, size, sha256 FROM voice_files ORDER BY voice_id, role`
	deleteVoiceSQL    = `DELETE FROM voices WHERE id = ?`
)

// InstallVoice adds an installed voice's catalog entry and the list of its
// files, setting its CreatedAt. It returns EINVALID for an invalid entry and
// ECONFLICT if a voice has its ID, or its name in its language.
func (s *Store) InstallVoice(ctx context.Context, v *narrator.InstalledVoice) error {
	if err := v.Validate(); err != nil {
		return err
	}
	now, err := WriteV(ctx, s, "install voice", func(tx Tx) (time.Time, error) {
		now := s.now()
		if _, err := tx.Exec(ctx, insertVoiceSQL, v.EngineVoice, v.Name, v.Gender, v.Language, v.Engine, v.Quality, v.License, v.Speaker, v.Priority, now); err != nil {
			return now, fmt.Errorf("install voice %s: %w", v.EngineVoice, s.db.Conflict(err, "a voice with this ID, or this name in "+v.Language+","))
		}
		for _, f := range v.Files {
			if _, err := tx.Exec(ctx, insertVoiceFileSQL, v.EngineVoice, f.Role, f.Name, f.Size, f.SHA256); err != nil {
				return now, fmt.Errorf("install voice %s: file %s: %w", v.EngineVoice, f.Name, err)
			}
		}
		return now, nil
	})
	if err != nil {
		return err
	}
	v.CreatedAt = now

	return nil
}

// ListInstalledVoices returns the installed voices with their files, by
// language, then name.
func (s *Store) ListInstalledVoices(ctx context.Context) ([]*narrator.InstalledVoice, error) {
	return ReadV(ctx, s, "list voices", func(tx Tx) ([]*narrator.InstalledVoice, error) {
		out, err := listVoices(ctx, tx)
		if err != nil {
			return nil, fmt.Errorf("list voices: %w", err)
		}
		return out, nil
	})
}

func listVoices(ctx context.Context, tx Tx) ([]*narrator.InstalledVoice, error) {
	rows, err := tx.Query(ctx, listVoicesSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*narrator.InstalledVoice{}
	byID := map[string]*narrator.InstalledVoice{}
	for rows.Next() {
		var v narrator.InstalledVoice
		if err := rows.Scan(&v.EngineVoice, &v.Name, &v.Gender, &v.Language, &v.Engine, &v.Quality, &v.License, &v.Speaker, &v.Priority, &v.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, &v)
		byID[v.EngineVoice] = &v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	files, err := tx.Query(ctx, listVoiceFilesSQL)
	if err != nil {
		return nil, err
	}
	defer files.Close()
	for files.Next() {
		var id string
		var f narrator.VoiceFile
		if err := files.Scan(&id, &f.Role, &f.Name, &f.Size, &f.SHA256); err != nil {
			return nil, err
		}
		if v := byID[id]; v != nil {
			v.Files = append(v.Files, f)
		}
	}
	return out, files.Err()
}

// RemoveVoice deletes an installed voice's entry and returns it. It returns
// ENOTFOUND if no voice has the ID. The caller deletes the files that no
// voice left uses.
func (s *Store) RemoveVoice(ctx context.Context, id string) (*narrator.InstalledVoice, error) {
	return WriteV(ctx, s, "remove voice", func(tx Tx) (*narrator.InstalledVoice, error) {
		all, err := listVoices(ctx, tx)
		if err != nil {
			return nil, fmt.Errorf("remove voice %s: %w", id, err)
		}
		v, err := narrator.FindInstalledVoice(all, id)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, deleteVoiceSQL, id); err != nil {
			return nil, fmt.Errorf("remove voice %s: %w", id, err)
		}
		return v, nil
	})
}
