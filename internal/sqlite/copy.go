package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// ExportMeta returns, in one snapshot and ordered by ID, every account, API
// key (with its hash), project, dashboard user (with its password hash),
// pronunciation rule, podcast feed (by project, with its token) and webhook
// (with its secret), and the highest IDs the store has given.
func (s *Store) ExportMeta(ctx context.Context) (*narrator.Export, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer tx.Rollback()
	e := &narrator.Export{}
	if e.Accounts, err = exportRows(ctx, tx, exportAccountsSQL, scanAccount); err != nil {
		return nil, fmt.Errorf("export accounts: %w", err)
	}
	if e.APIKeys, err = exportRows(ctx, tx, exportAPIKeysSQL, scanExportedAPIKey); err != nil {
		return nil, fmt.Errorf("export api keys: %w", err)
	}
	if e.Projects, err = exportRows(ctx, tx, exportProjectsSQL, scanProject); err != nil {
		return nil, fmt.Errorf("export projects: %w", err)
	}
	if e.Users, err = exportRows(ctx, tx, exportUsersSQL, scanUser); err != nil {
		return nil, fmt.Errorf("export users: %w", err)
	}
	if e.Pronunciations, err = exportRows(ctx, tx, exportPronunciationsSQL, scanPronunciation); err != nil {
		return nil, fmt.Errorf("export pronunciations: %w", err)
	}
	if e.Feeds, err = exportRows(ctx, tx, exportFeedsSQL, scanFeed); err != nil {
		return nil, fmt.Errorf("export feeds: %w", err)
	}
	if e.Webhooks, err = exportRows(ctx, tx, exportWebhooksSQL, scanWebhook); err != nil {
		return nil, fmt.Errorf("export webhooks: %w", err)
	}
	if e.LastIDs, err = lastIDs(ctx, tx); err != nil {
		return nil, fmt.Errorf("export last ids: %w", err)
	}
	return e, nil
}

// exportRows runs a query in tx and scans each row with scan. The slice is
// empty, not nil, when there are no rows.
func exportRows[T any](ctx context.Context, tx *sql.Tx, query string, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

const exportProjectsSQL = `SELECT ` + sqlstore.ProjectColumns + ` FROM projects ORDER BY id`

const exportAccountsSQL = `SELECT id, name, created_at FROM accounts ORDER BY id`

const exportAPIKeysSQL = `SELECT id, account_id, hash, prefix, created_at, revoked_at FROM api_keys ORDER BY id`

func scanExportedAPIKey(sc interface{ Scan(...any) error }) (*narrator.ExportedAPIKey, error) {
	var k narrator.ExportedAPIKey
	var created int64
	var revoked sql.NullInt64
	if err := sc.Scan(&k.ID, &k.AccountID, &k.Hash, &k.Prefix, &created, &revoked); err != nil {
		return nil, err
	}
	k.CreatedAt = fromMicros(created)
	if revoked.Valid {
		t := fromMicros(revoked.Int64)
		k.RevokedAt = &t
	}
	return &k, nil
}

const exportUsersSQL = `SELECT ` + sqlstore.UserColumns + ` FROM users ORDER BY id`

const exportPronunciationsSQL = `SELECT ` + sqlstore.PronunciationColumns + ` FROM pronunciations ORDER BY id`

const exportFeedsSQL = `SELECT ` + feedColumns + ` FROM feeds ORDER BY project_id`
const exportWebhooksSQL = `SELECT ` + sqlstore.WebhookColumns + ` FROM webhooks ORDER BY id`

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
	importAccountSQL = `INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`
	importAPIKeySQL  = `
INSERT INTO api_keys (id, account_id, hash, prefix, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importProjectSQL = `
INSERT INTO projects (id, account_id, title, type, language, url, title_voice, body_voice, created_at, audio_count)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
ON CONFLICT (id) DO NOTHING`
	importUserSQL = `
INSERT INTO users (id, account_id, email, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importPronunciationSQL = `
INSERT INTO pronunciations (id, project_id, phrase, say, created_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importFeedSQL = `
INSERT INTO feeds (` + feedColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (project_id) DO NOTHING`
	importWebhookSQL = `
INSERT INTO webhooks (id, project_id, url, events, secret, disabled_at, failing_since, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
)

// ImportMeta inserts, in one transaction and with their IDs, the rows of e
// that the store lacks; a row whose ID the store holds (for a feed, one
// whose project has a feed) is left as it is, whatever its fields. Rows are stored as they are, without validation.
// Projects are inserted with no audios: ImportAudios counts the audios it
// imports. It then moves the store's ID counters past e.LastIDs, so that
// new rows never reuse an ID of the exporting store. It returns ECONFLICT,
// storing nothing, if a row collides with another one on a unique field
// (an API key's hash, a user's email, a rule's phrase, a feed's token), and an error if a
// row's account or project is in neither e nor the store.
// Whether the store may take e at all is narrator.CheckCopyTarget's
// decision, for the caller to make first.
func (s *Store) ImportMeta(ctx context.Context, e *narrator.Export) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer tx.Rollback()
	for _, a := range e.Accounts {
		if _, err := tx.ExecContext(ctx, importAccountSQL, a.ID, a.Name, micros(a.CreatedAt)); err != nil {
			return fmt.Errorf("import account %d: %w", a.ID, formatError(err, fmt.Sprintf("account %d", a.ID)))
		}
	}
	for _, k := range e.APIKeys {
		var revoked sql.NullInt64
		if k.RevokedAt != nil {
			revoked = sql.NullInt64{Int64: micros(*k.RevokedAt), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, importAPIKeySQL, k.ID, k.AccountID, k.Hash, k.Prefix, micros(k.CreatedAt), revoked); err != nil {
			return fmt.Errorf("import api key %d: %w", k.ID, formatError(err, "an api key with the hash of key "+k.Prefix))
		}
	}
	for _, p := range e.Projects {
		if _, err := tx.ExecContext(ctx, importProjectSQL, p.ID, p.AccountID, p.Title, p.Type, p.Language,
			nullString(p.URL), p.TitleVoice, p.BodyVoice, micros(p.CreatedAt)); err != nil {
			return fmt.Errorf("import project %d: %w", p.ID, err)
		}
	}
	for _, u := range e.Users {
		if _, err := tx.ExecContext(ctx, importUserSQL, u.ID, u.AccountID, u.Email, u.PasswordHash,
			micros(u.CreatedAt), micros(u.UpdatedAt)); err != nil {
			return fmt.Errorf("import user %d: %w", u.ID, formatError(err, "a user with email "+u.Email))
		}
	}
	for _, p := range e.Pronunciations {
		if _, err := tx.ExecContext(ctx, importPronunciationSQL, p.ID, p.ProjectID, p.Phrase, p.Say, micros(p.CreatedAt)); err != nil {
			return fmt.Errorf("import pronunciation %d: %w", p.ID, formatError(err, fmt.Sprintf("a rule for %q in project %d", p.Phrase, p.ProjectID)))
		}
	}
	for _, f := range e.Feeds {
		if _, err := tx.ExecContext(ctx, importFeedSQL, f.ProjectID, f.Enabled, f.Title, f.Description, f.Author, f.ImageURL,
			f.Language, f.Category, f.Explicit, f.Token, micros(f.CreatedAt), micros(f.UpdatedAt)); err != nil {
			return fmt.Errorf("import feed of project %d: %w", f.ProjectID, formatError(err, fmt.Sprintf("a feed with the token of project %d's", f.ProjectID)))
		}
	}
	for _, h := range e.Webhooks {
		if _, err := tx.ExecContext(ctx, importWebhookSQL, h.ID, h.ProjectID, h.URL, strings.Join(h.Events, ","), h.Secret,
			nullMicros(h.DisabledAt), nullMicros(h.FailingSince), micros(h.CreatedAt)); err != nil {
			return fmt.Errorf("import webhook %d: %w", h.ID, err)
		}
	}
	ids := e.LastIDs
	for table, last := range idCounters(&ids) {
		if err := raiseCounter(ctx, tx, table, *last); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("import: commit: %w", err)
	}
	return nil
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
