package sqlstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/narrator/narrator"
)

// ExportMeta returns, in one snapshot and ordered by ID, every account, API
// key (with its hash), project, dashboard user (with its password hash),
// pronunciation rule, podcast feed (by project, with its token), webhook
// (with its secret) and rss projects' feed (with its headers), and the highest IDs the store has given
// (DB.LastIDs).
func (s *Store) ExportMeta(ctx context.Context) (*narrator.Export, error) {
	return ReadV(ctx, s, "export", func(tx Tx) (*narrator.Export, error) {
		e := &narrator.Export{}
		var err error
		if e.Accounts, err = queryAll(ctx, tx, ScanAccount, exportAccountsSQL); err != nil {
			return nil, fmt.Errorf("export accounts: %w", err)
		}
		if e.APIKeys, err = queryAll(ctx, tx, scanExportedAPIKey, exportAPIKeysSQL); err != nil {
			return nil, fmt.Errorf("export api keys: %w", err)
		}
		if e.Projects, err = queryAll(ctx, tx, ScanProject, exportProjectsSQL); err != nil {
			return nil, fmt.Errorf("export projects: %w", err)
		}
		if e.Users, err = queryAll(ctx, tx, ScanUser, exportUsersSQL); err != nil {
			return nil, fmt.Errorf("export users: %w", err)
		}
		if e.Pronunciations, err = queryAll(ctx, tx, ScanPronunciation, exportPronunciationsSQL); err != nil {
			return nil, fmt.Errorf("export pronunciations: %w", err)
		}
		if e.Feeds, err = queryAll(ctx, tx, ScanFeed, exportFeedsSQL); err != nil {
			return nil, fmt.Errorf("export feeds: %w", err)
		}
		if e.Webhooks, err = queryAll(ctx, tx, ScanWebhook, exportWebhooksSQL); err != nil {
			return nil, fmt.Errorf("export webhooks: %w", err)
		}
		if e.Sources, err = queryAll(ctx, tx, scanSource, exportSourcesSQL); err != nil {
			return nil, fmt.Errorf("export feed sources: %w", err)
		}
		if e.LastIDs, err = s.db.LastIDs(ctx, tx); err != nil {
			return nil, fmt.Errorf("export last ids: %w", err)
		}
		return e, nil
	})
}

const (
	exportAccountsSQL       = `SELECT id, name, created_at FROM accounts ORDER BY id`
	exportAPIKeysSQL        = `SELECT id, account_id, hash, prefix, created_at, revoked_at FROM api_keys ORDER BY id`
	exportProjectsSQL       = `SELECT ` + ProjectColumns + ` FROM projects ORDER BY id`
	exportUsersSQL          = `SELECT ` + UserColumns + ` FROM users ORDER BY id`
	exportPronunciationsSQL = `SELECT ` + PronunciationColumns + ` FROM pronunciations ORDER BY id`
	exportFeedsSQL          = `SELECT ` + FeedColumns + ` FROM feeds ORDER BY project_id`
	exportWebhooksSQL       = `SELECT ` + WebhookColumns + ` FROM webhooks ORDER BY id`
	exportSourcesSQL        = `SELECT ` + sourceColumns + ` FROM sources ORDER BY id`
)

func scanExportedAPIKey(row Row) (*narrator.ExportedAPIKey, error) {
	var k narrator.ExportedAPIKey
	if err := row.Scan(&k.ID, &k.AccountID, &k.Hash, &k.Prefix, &k.CreatedAt, &k.RevokedAt); err != nil {
		return nil, err
	}
	return &k, nil
}

const exportAudiosSQL = `
SELECT ` + AudioColumns + `
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
	return ReadV(ctx, s, fmt.Sprintf("export audios after %d", afterID), func(tx Tx) ([]*narrator.Audio, error) {
		audios, err := QueryAudios(ctx, s.db, tx, exportAudiosSQL, afterID, limit)
		if err != nil {
			return nil, fmt.Errorf("export audios after %d: %w", afterID, err)
		}
		return audios, nil
	})
}

// The inserts of ImportMeta give the rows their IDs: each holds %s where
// the dialect says so (DB.Overriding).
const (
	importAccountSQL = `
INSERT INTO accounts (id, name, created_at) %sVALUES (?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importAPIKeySQL = `
INSERT INTO api_keys (id, account_id, hash, prefix, created_at, revoked_at) %sVALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importProjectSQL = `
INSERT INTO projects (id, account_id, title, type, language, url, title_voice, body_voice, speech_rate, created_at, audio_count)
%sVALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
ON CONFLICT (id) DO NOTHING`
	importUserSQL = `
INSERT INTO users (id, account_id, email, password_hash, created_at, updated_at) %sVALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importPronunciationSQL = `
INSERT INTO pronunciations (id, project_id, phrase, say, created_at) %sVALUES (?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importFeedSQL = `
INSERT INTO feeds (` + FeedColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (project_id) DO NOTHING`
	importWebhookSQL = `
INSERT INTO webhooks (id, project_id, url, events, secret, disabled_at, failing_since, created_at)
%sVALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`
	importSourceSQL = `
INSERT INTO sources (id, project_id, url, headers, mapping, full_text, backfill_items, backfill_since, poll_interval, created_at,
	status, last_error, next_poll_at, failures, etag, last_modified, items_seen, created_count, updated_count, hub, websub_topic, websub_secret)
%sVALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, 0, '', '', 0, 0, 0, '', '', '')
ON CONFLICT (id) DO NOTHING`
)

// ImportMeta inserts, in one transaction and with their IDs, the rows of e
// that the store lacks; a row whose ID the store holds (for a feed, one
// whose project has a feed) is left as it is, whatever its fields. Rows are
// stored as they are, without validation. Projects are inserted with no
// audios: ImportAudios counts the audios it imports. It then moves the
// store's ID counters past e.LastIDs (DB.RaiseID), so that new rows never
// reuse an ID of the exporting store. It returns ECONFLICT, storing
// nothing, if a row collides with another one on a unique field (an API
// key's hash, a user's email, a rule's phrase, a feed's token), and an
// error if a row's account or project is in neither e nor the store.
// Whether the store may take e at all is narrator.CheckCopyTarget's
// decision, for the caller to make first.
func (s *Store) ImportMeta(ctx context.Context, e *narrator.Export) error {
	return s.write(ctx, "import", func(tx Tx) error {
		ids := s.db.Overriding()
		for _, a := range e.Accounts {
			if _, err := tx.Exec(ctx, fmt.Sprintf(importAccountSQL, ids), a.ID, a.Name, a.CreatedAt); err != nil {
				return fmt.Errorf("import account %d: %w", a.ID, s.db.Conflict(err, fmt.Sprintf("account %d", a.ID)))
			}
		}
		for _, k := range e.APIKeys {
			if _, err := tx.Exec(ctx, fmt.Sprintf(importAPIKeySQL, ids), k.ID, k.AccountID, k.Hash, k.Prefix, k.CreatedAt, k.RevokedAt); err != nil {
				return fmt.Errorf("import api key %d: %w", k.ID, s.db.Conflict(err, "an api key with the hash of key "+k.Prefix))
			}
		}
		for _, p := range e.Projects {
			if _, err := tx.Exec(ctx, fmt.Sprintf(importProjectSQL, ids), p.ID, p.AccountID, p.Title, p.Type, p.Language,
				NullString(p.URL), p.TitleVoice, p.BodyVoice, p.Rate(), p.CreatedAt); err != nil {
				return fmt.Errorf("import project %d: %w", p.ID, err)
			}
		}
		for _, u := range e.Users {
			if _, err := tx.Exec(ctx, fmt.Sprintf(importUserSQL, ids), u.ID, u.AccountID, u.Email, u.PasswordHash, u.CreatedAt, u.UpdatedAt); err != nil {
				return fmt.Errorf("import user %d: %w", u.ID, s.db.Conflict(err, "a user with email "+u.Email))
			}
		}
		for _, p := range e.Pronunciations {
			if _, err := tx.Exec(ctx, fmt.Sprintf(importPronunciationSQL, ids), p.ID, p.ProjectID, p.Phrase, p.Say, p.CreatedAt); err != nil {
				return fmt.Errorf("import pronunciation %d: %w", p.ID, s.db.Conflict(err, fmt.Sprintf("a rule for %q in project %d", p.Phrase, p.ProjectID)))
			}
		}
		for _, f := range e.Feeds {
			if _, err := tx.Exec(ctx, importFeedSQL, f.ProjectID, f.Enabled, f.Title, f.Description, f.Author, f.ImageURL,
				f.Language, f.Category, f.Explicit, f.Token, f.CreatedAt, f.UpdatedAt, f.OwnerName, f.OwnerEmail); err != nil {
				return fmt.Errorf("import feed of project %d: %w", f.ProjectID, s.db.Conflict(err, fmt.Sprintf("a feed with the token of project %d's", f.ProjectID)))
			}
		}
		for _, h := range e.Webhooks {
			if _, err := tx.Exec(ctx, fmt.Sprintf(importWebhookSQL, ids), h.ID, h.ProjectID, h.URL, h.Events, h.Secret,
				NullTime(h.DisabledAt), NullTime(h.FailingSince), h.CreatedAt); err != nil {
				return fmt.Errorf("import webhook %d: %w", h.ID, err)
			}
		}
		for _, src := range e.Sources {
			fullText := 0
			if src.FullText {
				fullText = 1
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(importSourceSQL, ids), src.ID, src.ProjectID, src.URL, jsonObject(src.Header), jsonObject(src.Mapping), fullText,
				src.BackfillItems, int64(src.BackfillSince/time.Second), int64(src.Interval/time.Second), src.CreatedAt, narrator.SourceStatusNew, s.now()); err != nil {
				return fmt.Errorf("import feed source %d: %w", src.ID, err)
			}
		}
		last := e.LastIDs
		counters := map[string]int64{
			"accounts":       last.Account,
			"api_keys":       last.APIKey,
			"projects":       last.Project,
			"audios":         last.Audio,
			"media":          last.Media,
			"users":          last.User,
			"pronunciations": last.Pronunciation,
			"webhooks":       last.Webhook,
			"sources":        last.Source,
		}
		for _, table := range slices.Sorted(maps.Keys(counters)) {
			if counters[table] <= 0 {
				continue
			}
			if err := s.db.RaiseID(ctx, tx, table, counters[table]); err != nil {
				return fmt.Errorf("import: %w", err)
			}
		}
		return nil
	})
}

// importAudioSQL inserts an audio as the newest of its project: its number
// (seq) one above the project's highest, as a create numbers it.
const (
	importAudioSQL = `
INSERT INTO audios (id, project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, seq)
%sVALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	(SELECT coalesce(max(seq), 0) + 1 FROM audios WHERE project_id = ?))`
	importMediaSQL = `
INSERT INTO media (id, audio_id, content_type, key, bytes) %sVALUES (?, ?, ?, ?, ?)`
	countImportedSQL = `UPDATE projects SET audio_count = audio_count + ? WHERE id = ?`
)

// ImportAudios inserts, in one transaction and with their IDs, the live
// audios the store lacks, with their media (IDs, keys and sizes) and every
// field as given, counts them in their projects, and enqueues the
// synthesis of those that narrator.Audio.AwaitsSynthesis says need it. An
// audio whose ID the store holds, live or deleted, is left as it is if
// narrator.CheckCopiedAudio finds it is the same audio. It moves the audio
// and media ID counters past the IDs it inserts, and returns how many
// audios it inserted. It returns EINVALID for a deleted audio, ECONFLICT if
// the store holds another audio under the ID of one of audios, or one of
// its external IDs on another live audio of the project, and an error if a
// project is missing; then, or if the enqueuer fails, nothing is stored.
func (s *Store) ImportAudios(ctx context.Context, audios []*narrator.Audio) (int, error) {
	return WriteV(ctx, s, "import audios", func(tx Tx) (int, error) {
		inserted := 0
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
		for _, id := range slices.Sorted(maps.Keys(counts)) {
			if _, err := tx.Exec(ctx, countImportedSQL, counts[id], id); err != nil {
				return 0, fmt.Errorf("import audios: count audios of project %d: %w", id, err)
			}
		}
		for table, last := range map[string]int64{"audios": lastAudio, "media": lastMedia} {
			if last <= 0 {
				continue
			}
			if err := s.db.RaiseID(ctx, tx, table, last); err != nil {
				return 0, fmt.Errorf("import audios: %w", err)
			}
		}
		return inserted, nil
	})
}

// importAudio inserts a as ImportAudios does, without counting it in its
// project, and reports whether it did.
func (s *Store) importAudio(ctx context.Context, tx Tx, a *narrator.Audio) (bool, error) {
	if a.Deleted {
		return false, narrator.Errorf(narrator.EINVALID, "audio %d is deleted; only live audios are imported", a.ID)
	}
	have, err := findAudioByID(ctx, tx, a.ID, "")
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
	ids := s.db.Overriding()
	if _, err := tx.Exec(ctx, fmt.Sprintf(importAudioSQL, ids), a.ID, a.ProjectID, NullString(a.ExternalID), a.Title, a.Body,
		a.Author, a.ArticleURL, meta, a.State, a.Error, a.Revision, a.DurationMS,
		a.CreatedAt, a.UpdatedAt, a.ProjectID); err != nil {
		return false, s.db.Conflict(err, fmt.Sprintf("an audio with external_id %q in project %d", a.ExternalID, a.ProjectID))
	}
	for _, m := range a.Media {
		if _, err := tx.Exec(ctx, fmt.Sprintf(importMediaSQL, ids), m.ID, a.ID, m.ContentType, NullString(m.Key), m.Bytes); err != nil {
			return false, fmt.Errorf("insert %s media %d: %w", m.ContentType, m.ID, s.db.Conflict(err, fmt.Sprintf("media %d", m.ID)))
		}
	}
	// The project's count is moved by ImportAudios, once per project and
	// after every account's row.
	eff := narrator.ChangeEffects(nil, a)
	eff.AudioCount = 0
	if eff.Synthesize {
		if eff.Round, err = s.db.PlanSynthesis(ctx, tx, a.ProjectID, false, false); err != nil {
			return false, err
		}
	}
	if err := s.db.ApplyEffects(ctx, tx, a, eff); err != nil {
		return false, err
	}
	return true, nil
}
