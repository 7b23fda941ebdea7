package postgres

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// ExportMeta returns, in one snapshot and ordered by ID, every account, API
// key (with its hash), project, dashboard user (with its password hash),
// pronunciation rule and podcast feed (by project, with its token), and the
// highest IDs the store has given.
func (s *Store) ExportMeta(ctx context.Context) (*narrator.Export, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer rollback(ctx, tx)
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
	ids := &e.LastIDs
	if err := tx.QueryRow(ctx, lastIDsSQL).Scan(&ids.Account, &ids.APIKey, &ids.Project, &ids.Audio, &ids.Media,
		&ids.User, &ids.Pronunciation, &ids.Webhook); err != nil {
		return nil, fmt.Errorf("export last ids: %w", err)
	}
	return e, nil
}

// exportRows runs a query in tx and scans each row with scan. The slice is
// empty, not nil, when there are no rows.
func exportRows[T any](ctx context.Context, tx pgx.Tx, query string, scan func(pgx.Row) (T, error)) ([]T, error) {
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

const exportAccountsSQL = `SELECT id, name, created_at FROM accounts ORDER BY id`

const exportAPIKeysSQL = `SELECT id, account_id, hash, prefix, created_at, revoked_at FROM api_keys ORDER BY id`

func scanExportedAPIKey(row pgx.Row) (*narrator.ExportedAPIKey, error) {
	var k narrator.ExportedAPIKey
	if err := row.Scan(&k.ID, &k.AccountID, &k.Hash, &k.Prefix, &k.CreatedAt, &k.RevokedAt); err != nil {
		return nil, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	if k.RevokedAt != nil {
		r := k.RevokedAt.UTC()
		k.RevokedAt = &r
	}
	return &k, nil
}

const exportUsersSQL = `SELECT ` + sqlstore.UserColumns + ` FROM users ORDER BY id`

const exportPronunciationsSQL = `SELECT ` + sqlstore.PronunciationColumns + ` FROM pronunciations ORDER BY id`

const exportFeedsSQL = `SELECT ` + feedColumns + ` FROM feeds ORDER BY project_id`
const exportProjectsSQL = `SELECT ` + sqlstore.ProjectColumns + ` FROM projects ORDER BY id`

const exportWebhooksSQL = `SELECT ` + sqlstore.WebhookColumns + ` FROM webhooks ORDER BY id`

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

// IDs are identity columns GENERATED ALWAYS: an insert that gives them says
// OVERRIDING SYSTEM VALUE.
const (
	importAccountSQL = `
INSERT INTO accounts (id, name, created_at) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3)
ON CONFLICT (id) DO NOTHING`
	importAPIKeySQL = `
INSERT INTO api_keys (id, account_id, hash, prefix, created_at, revoked_at) OVERRIDING SYSTEM VALUE
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO NOTHING`
	importProjectSQL = `
INSERT INTO projects (id, account_id, title, type, language, url, title_voice, body_voice, created_at, audio_count)
OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0)
ON CONFLICT (id) DO NOTHING`
	importUserSQL = `
INSERT INTO users (id, account_id, email, password_hash, created_at, updated_at) OVERRIDING SYSTEM VALUE
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO NOTHING`
	importPronunciationSQL = `
INSERT INTO pronunciations (id, project_id, phrase, say, created_at) OVERRIDING SYSTEM VALUE
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (id) DO NOTHING`
	importFeedSQL = `
INSERT INTO feeds (` + feedColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (project_id) DO NOTHING`
	importWebhookSQL = `
INSERT INTO webhooks (id, project_id, url, events, secret, disabled_at, failing_since, created_at) OVERRIDING SYSTEM VALUE
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (id) DO NOTHING`
)

// ImportMeta inserts, in one transaction and with their IDs, the rows of e
// that the store lacks; a row whose ID the store holds (for a feed, one
// whose project has a feed) is left as it is, whatever its fields. Rows are stored as they are, without validation.
// Projects are inserted with no audios: ImportAudios counts the audios it
// imports. It then moves the store's identity sequences past e.LastIDs, so
// that new rows never reuse an ID of the exporting store (sequences are not
// transactional: a failed import may leave them moved, which only skips
// IDs). It returns ECONFLICT, storing nothing, if a row collides with
// another one on a unique field (an API key's hash, a user's email, a
// rule's phrase, a feed's token), and an error if a row's account or project is in neither
// e nor the store. Whether the store may take e at all is
// narrator.CheckCopyTarget's decision, for the caller to make first.
func (s *Store) ImportMeta(ctx context.Context, e *narrator.Export) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer rollback(ctx, tx)
	for _, a := range e.Accounts {
		if _, err := tx.Exec(ctx, importAccountSQL, a.ID, a.Name, a.CreatedAt); err != nil {
			return fmt.Errorf("import account %d: %w", a.ID, formatError(err, fmt.Sprintf("account %d", a.ID)))
		}
	}
	for _, k := range e.APIKeys {
		if _, err := tx.Exec(ctx, importAPIKeySQL, k.ID, k.AccountID, k.Hash, k.Prefix, k.CreatedAt, k.RevokedAt); err != nil {
			return fmt.Errorf("import api key %d: %w", k.ID, formatError(err, "an api key with the hash of key "+k.Prefix))
		}
	}
	for _, p := range e.Projects {
		if _, err := tx.Exec(ctx, importProjectSQL, p.ID, p.AccountID, p.Title, p.Type, p.Language,
			nullString(p.URL), p.TitleVoice, p.BodyVoice, p.CreatedAt); err != nil {
			return fmt.Errorf("import project %d: %w", p.ID, err)
		}
	}
	for _, u := range e.Users {
		if _, err := tx.Exec(ctx, importUserSQL, u.ID, u.AccountID, u.Email, u.PasswordHash, u.CreatedAt, u.UpdatedAt); err != nil {
			return fmt.Errorf("import user %d: %w", u.ID, formatError(err, "a user with email "+u.Email))
		}
	}
	for _, p := range e.Pronunciations {
		if _, err := tx.Exec(ctx, importPronunciationSQL, p.ID, p.ProjectID, p.Phrase, p.Say, p.CreatedAt); err != nil {
			return fmt.Errorf("import pronunciation %d: %w", p.ID, formatError(err, fmt.Sprintf("a rule for %q in project %d", p.Phrase, p.ProjectID)))
		}
	}
	for _, f := range e.Feeds {
		if _, err := tx.Exec(ctx, importFeedSQL, f.ProjectID, f.Enabled, f.Title, f.Description, f.Author, f.ImageURL,
			f.Language, f.Category, f.Explicit, f.Token, f.CreatedAt, f.UpdatedAt); err != nil {
			return fmt.Errorf("import feed of project %d: %w", f.ProjectID, formatError(err, fmt.Sprintf("a feed with the token of project %d's", f.ProjectID)))
		}
	}
	for _, h := range e.Webhooks {
		if _, err := tx.Exec(ctx, importWebhookSQL, h.ID, h.ProjectID, h.URL, h.Events, h.Secret,
			nullTime(h.DisabledAt), nullTime(h.FailingSince), h.CreatedAt); err != nil {
			return fmt.Errorf("import webhook %d: %w", h.ID, err)
		}
	}
	ids := e.LastIDs
	counters := map[string]int64{
		"accounts":       ids.Account,
		"api_keys":       ids.APIKey,
		"projects":       ids.Project,
		"audios":         ids.Audio,
		"media":          ids.Media,
		"users":          ids.User,
		"pronunciations": ids.Pronunciation,
		"webhooks":       ids.Webhook,
	}
	for _, table := range slices.Sorted(maps.Keys(counters)) {
		if err := raiseSequence(ctx, tx, table, counters[table]); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("import: commit: %w", err)
	}
	return nil
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
