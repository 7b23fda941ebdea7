package postgres

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// lastIDsSQL reads the last value of each table's identity sequence: the
// highest ID the table has given, deleted rows included (a sequence never
// goes back, even when its transaction rolls back). A sequence never used
// has none.
const lastIDsSQL = `
SELECT
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('accounts', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('api_keys', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('projects', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('audios', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('media', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('users', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('pronunciations', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('webhooks', 'id')::regclass), 0)`

// lastIDs reads lastIDsSQL in tx.
func lastIDs(ctx context.Context, tx pgx.Tx) (narrator.LastIDs, error) {
	var ids narrator.LastIDs
	err := tx.QueryRow(ctx, lastIDsSQL).Scan(&ids.Account, &ids.APIKey, &ids.Project, &ids.Audio, &ids.Media,
		&ids.User, &ids.Pronunciation, &ids.Webhook)
	return ids, err
}

// raiseSequenceSQL moves the identity sequence of table $1 to $2 unless it
// is there or past it already.
const raiseSequenceSQL = `
SELECT setval(pg_get_serial_sequence($1, 'id'), $2::bigint)
WHERE $2::bigint > COALESCE(pg_sequence_last_value(pg_get_serial_sequence($1, 'id')::regclass), 0)`

// raiseSequence moves the identity sequence of a table up to last, if it is
// lower, so that the table's next ID is past last.
func raiseSequence(ctx context.Context, tx pgx.Tx, table string, last int64) error {
	if last <= 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, raiseSequenceSQL, table, last); err != nil {
		return fmt.Errorf("raise id sequence of %s: %w", table, err)
	}
	return nil
}

const exportAudiosSQL = `
SELECT ` + audioColumns + `
FROM audios
WHERE id > $1 AND deleted_at IS NULL
ORDER BY id
LIMIT $2`

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
	defer rollback(ctx, tx)
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
OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
	(SELECT coalesce(max(seq), 0) + 1 FROM audios WHERE project_id = $2))`

const importMediaSQL = `
INSERT INTO media (id, audio_id, content_type, key, bytes) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5)`

// ImportAudios inserts, in one transaction and with their IDs, the live
// audios the store lacks, with their media (IDs, keys and sizes) and every field
// as given, counts them in their projects, and enqueues the synthesis of
// those that narrator.Audio.AwaitsSynthesis says need it. An audio whose ID
// the store holds, live or deleted, is left as it is if
// narrator.CheckCopiedAudio finds it is the same audio. It moves the audio
// and media ID sequences past the IDs it inserts, and returns how many
// audios it inserted. It returns EINVALID for a deleted audio, ECONFLICT if
// the store holds another audio under the ID of one of audios, or one of its
// external IDs on another live audio of the project, and an error if a
// project is missing; then, or if the enqueuer fails, nothing is stored.
func (s *Store) ImportAudios(ctx context.Context, audios []*narrator.Audio) (inserted int, err error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return 0, fmt.Errorf("import audios: %w", err)
	}
	defer rollback(ctx, tx)
	counts := map[int64]int{}
	var lastAudio, lastMedia int64
	for _, a := range audios {
		ok, err := s.importAudio(ctx, tx, a)
		if err != nil {
			return 0, fmt.Errorf("import audio %d: %w", a.ID, err)
		}
		if !ok {
			continue
		}
		inserted++
		counts[a.ProjectID]++
		lastAudio = max(lastAudio, a.ID)
		for _, m := range a.Media {
			lastMedia = max(lastMedia, m.ID)
		}
	}
	// Projects last and in order of ID: their rows stay locked until the
	// commit, and writers of other nodes lock them last too.
	for _, id := range slices.SortedFunc(maps.Keys(counts), cmp.Compare) {
		if _, err := tx.Exec(ctx, addAudioCountSQL, counts[id], id); err != nil {
			return 0, fmt.Errorf("import audios: count audios of project %d: %w", id, err)
		}
	}
	if err := raiseSequence(ctx, tx, "audios", lastAudio); err != nil {
		return 0, fmt.Errorf("import audios: %w", err)
	}
	if err := raiseSequence(ctx, tx, "media", lastMedia); err != nil {
		return 0, fmt.Errorf("import audios: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("import audios: commit: %w", err)
	}
	return inserted, nil
}

// importAudio inserts a as ImportAudios does, without counting it in its
// project, and reports whether it did.
func (s *Store) importAudio(ctx context.Context, tx pgx.Tx, a *narrator.Audio) (bool, error) {
	if a.Deleted {
		return false, narrator.Errorf(narrator.EINVALID, "audio %d is deleted; only live audios are imported", a.ID)
	}
	have, err := findAudioByID(ctx, tx, a.ID, noLock)
	switch {
	case err == nil:
		return false, narrator.CheckCopiedAudio(have, a)
	case narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return false, err
	}
	meta := a.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	if _, err := tx.Exec(ctx, importAudioSQL, a.ID, a.ProjectID, nullString(a.ExternalID), a.Title, a.Body,
		a.Author, a.ArticleURL, meta, a.State, a.Error, a.Revision, a.DurationMS,
		a.CreatedAt, a.UpdatedAt); err != nil {
		return false, formatError(err, fmt.Sprintf("an audio with external_id %q in project %d", a.ExternalID, a.ProjectID))
	}
	for _, m := range a.Media {
		if _, err := tx.Exec(ctx, importMediaSQL, m.ID, a.ID, m.ContentType, nullString(m.Key), m.Bytes); err != nil {
			return false, fmt.Errorf("insert %s media %d: %w", m.ContentType, m.ID, formatError(err, fmt.Sprintf("media %d", m.ID)))
		}
	}
	// The project's count is moved by ImportAudios, once per project and
	// after every account's row.
	eff := narrator.ChangeEffects(nil, a)
	eff.AudioCount = 0
	if eff.Synthesize {
		if eff.Round, err = s.planSynthesis(ctx, tx, a.ProjectID, false, false); err != nil {
			return false, err
		}
	}
	if err := s.applyEffects(ctx, tx, a, eff); err != nil {
		return false, err
	}
	return true, nil
}
