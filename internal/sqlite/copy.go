package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/narrator/narrator"
)

// lastIDsSQL reads the counters of the AUTOINCREMENT tables: the highest
// ID each table has ever held, deleted rows included. A table that never
// held a row has none.
const lastIDsSQL = `SELECT name, seq FROM sqlite_sequence`

// idCounters maps the tables whose IDs an import preserves to their field
// of narrator.LastIDs.
func idCounters(ids *narrator.LastIDs) map[string]*int64 {
	return map[string]*int64{
		"accounts":       &ids.Account,
		"api_keys":       &ids.APIKey,
		"projects":       &ids.Project,
		"audios":         &ids.Audio,
		"media":          &ids.Media,
		"users":          &ids.User,
		"pronunciations": &ids.Pronunciation,
		"webhooks":       &ids.Webhook,
	}
}

func lastIDs(ctx context.Context, tx *sql.Tx) (narrator.LastIDs, error) {
	var ids narrator.LastIDs
	counters := idCounters(&ids)
	rows, err := tx.QueryContext(ctx, lastIDsSQL)
	if err != nil {
		return ids, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			return ids, err
		}
		if p := counters[name]; p != nil {
			*p = seq
		}
	}
	return ids, rows.Err()
}

const (
	raiseCounterSQL = `UPDATE sqlite_sequence SET seq = ? WHERE name = ? AND seq < ?`
	addCounterSQL   = `
INSERT INTO sqlite_sequence (name, seq) SELECT ?, ?
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)`
)

// raiseCounter moves the AUTOINCREMENT counter of a table up to last, if it
// is lower, so that the table's next ID is past last.
func raiseCounter(ctx context.Context, tx *sql.Tx, table string, last int64) error {
	if last <= 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, raiseCounterSQL, last, table, last); err != nil {
		return fmt.Errorf("raise id counter of %s: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, addCounterSQL, table, last, table); err != nil {
		return fmt.Errorf("raise id counter of %s: %w", table, err)
	}
	return nil
}

const exportAudiosSQL = `
SELECT ` + audioColumns + `
FROM audios
WHERE id > ? AND deleted_at IS NULL
ORDER BY id
LIMIT ?`

// ExportAudios returns up to limit live audios with IDs above afterID, by
// ID, with their media. Pass the last ID of one page as afterID to get the
// next; an empty slice ends the export. limit must be positive.
func (s *Store) ExportAudios(ctx context.Context, afterID int64, limit int) ([]*narrator.Audio, error) {
	if limit <= 0 {
		return nil, narrator.Errorf(narrator.EINVALID, "limit must be positive")
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("export audios after %d: %w", afterID, err)
	}
	defer tx.Rollback()
	audios, err := queryAudios(ctx, tx, exportAudiosSQL, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("export audios after %d: %w", afterID, err)
	}
	return audios, nil
}

// importAudioSQL inserts an audio as the newest of its project, as
// insertAudioSQL does.
const importAudioSQL = `
INSERT INTO audios (id, project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, seq)
VALUES (?, ?2, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	(SELECT coalesce(max(seq), 0) + 1 FROM audios WHERE project_id = ?2))`

const importMediaSQL = `INSERT INTO media (id, audio_id, content_type, key, bytes) VALUES (?, ?, ?, ?, ?)`

// ImportAudios inserts, in one transaction and with their IDs, the live
// audios the store lacks, with their media (IDs, keys and sizes) and every field
// as given, counts them in their projects, and enqueues the synthesis of
// those that narrator.Audio.AwaitsSynthesis says need it. An audio whose ID
// the store holds, live or deleted, is left as it is if
// narrator.CheckCopiedAudio finds it is the same audio. It returns how many
// audios it inserted. It returns EINVALID for a deleted audio, ECONFLICT if
// the store holds another audio under the ID of one of audios, or one of its
// external IDs on another live audio of the project, and an error if a
// project is missing; then, or if the enqueuer fails, nothing is stored.
func (s *Store) ImportAudios(ctx context.Context, audios []*narrator.Audio) (inserted int, err error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return 0, fmt.Errorf("import audios: %w", err)
	}
	defer tx.Rollback()
	for _, a := range audios {
		ok, err := s.importAudio(ctx, tx, a)
		if err != nil {
			return 0, fmt.Errorf("import audio %d: %w", a.ID, err)
		}
		if ok {
			inserted++
		}
	}
	if err := commit(tx); err != nil {
		return 0, fmt.Errorf("import audios: commit: %w", err)
	}
	return inserted, nil
}

// importAudio inserts a as ImportAudios does and reports whether it did.
func (s *Store) importAudio(ctx context.Context, tx *sql.Tx, a *narrator.Audio) (bool, error) {
	if a.Deleted {
		return false, narrator.Errorf(narrator.EINVALID, "audio %d is deleted; only live audios are imported", a.ID)
	}
	have, err := findAudioByID(ctx, tx, a.ID)
	switch {
	case err == nil:
		return false, narrator.CheckCopiedAudio(have, a)
	case narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return false, err
	}
	meta, err := encodeMetadata(a.Metadata)
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, importAudioSQL, a.ID, a.ProjectID, nullString(a.ExternalID), a.Title, a.Body,
		a.Author, a.ArticleURL, meta, a.State, a.Error, a.Revision, a.DurationMS,
		micros(a.CreatedAt), micros(a.UpdatedAt)); err != nil {
		return false, formatError(err, fmt.Sprintf("an audio with external_id %q in project %d", a.ExternalID, a.ProjectID))
	}
	for _, m := range a.Media {
		if _, err := tx.ExecContext(ctx, importMediaSQL, m.ID, a.ID, m.ContentType, nullString(m.Key), m.Bytes); err != nil {
			return false, fmt.Errorf("insert %s media %d: %w", m.ContentType, m.ID, formatError(err, fmt.Sprintf("media %d", m.ID)))
		}
	}
	eff := narrator.ChangeEffects(nil, a)
	if eff.Synthesize {
		if eff.Round, err = s.planSynthesis(ctx, tx, &headMemo{}, a.ProjectID, false, false); err != nil {
			return false, err
		}
	}
	if err := s.applyEffects(ctx, tx, a, eff); err != nil {
		return false, err
	}
	return true, nil
}
