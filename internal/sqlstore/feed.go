package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

// FeedColumns are the columns ScanFeed reads.
const FeedColumns = `project_id, enabled, title, description, author, image_url, language, category,
	explicit, token, created_at, updated_at, owner_name, owner_email`

// ScanFeed reads a row of FeedColumns.
func ScanFeed(row Row) (*narrator.Feed, error) {
	var f narrator.Feed
	if err := row.Scan(&f.ProjectID, &f.Enabled, &f.Title, &f.Description, &f.Author, &f.ImageURL, &f.Language,
		&f.Category, &f.Explicit, &f.Token, &f.CreatedAt, &f.UpdatedAt, &f.OwnerName, &f.OwnerEmail); err != nil {
		return nil, err
	}
	return &f, nil
}

func feedNotFound(projectID int64) error {
	return narrator.Errorf(narrator.ENOTFOUND, "project %d has no feed", projectID)
}

const findFeedSQL = `SELECT ` + FeedColumns + ` FROM feeds WHERE project_id = ?`

// FindFeed returns a project's feed, turned on or off. It returns ENOTFOUND
// if the project never had one.
func (s *Store) FindFeed(ctx context.Context, projectID int64) (*narrator.Feed, error) {
	return ReadV(ctx, s, "find feed", func(tx Tx) (*narrator.Feed, error) {
		f, err := ScanFeed(tx.QueryRow(ctx, findFeedSQL, projectID))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, feedNotFound(projectID)
		case err != nil:
			return nil, fmt.Errorf("find feed of project %d: %w", projectID, err)
		}
		return f, nil
	})
}

// upsertFeedSQL creates a feed or updates its settings, never the token
// of an existing one.
const upsertFeedSQL = `
INSERT INTO feeds (project_id, enabled, title, description, author, image_url, language, category,
	explicit, token, created_at, updated_at, owner_name, owner_email)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (project_id) DO UPDATE SET enabled = excluded.enabled, title = excluded.title,
	description = excluded.description, author = excluded.author, image_url = excluded.image_url,
	language = excluded.language, category = excluded.category, explicit = excluded.explicit,
	updated_at = excluded.updated_at, owner_name = excluded.owner_name, owner_email = excluded.owner_email
RETURNING token, created_at, updated_at`

// SaveFeed creates or updates the feed of f.ProjectID with f's settings
// (narrator.Feed.Validate). f.Token must be a new token (NewFeedToken),
// which only a new feed takes: an existing one keeps its own, so that a
// form loaded before a rotation cannot bring the old URL back
// (RotateFeedToken changes it). It sets f's Token, CreatedAt and UpdatedAt
// to what is stored. It returns EINVALID for invalid settings or a
// malformed token, ENOTFOUND if the project does not exist, and ECONFLICT
// if a new feed's token is taken.
func (s *Store) SaveFeed(ctx context.Context, f *narrator.Feed) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if err := narrator.ValidateFeedToken(f.Token); err != nil {
		return err
	}
	stored, err := WriteV(ctx, s, "save feed", func(tx Tx) (narrator.Feed, error) {
		if _, err := ProjectByID(ctx, tx, f.ProjectID); err != nil {
			return narrator.Feed{}, fmt.Errorf("save feed of project %d: %w", f.ProjectID, err)
		}
		now := s.now()
		stored := *f
		if err := tx.QueryRow(ctx, upsertFeedSQL, f.ProjectID, f.Enabled, f.Title, f.Description, f.Author,
			f.ImageURL, f.Language, f.Category, f.Explicit, f.Token, now, now, f.OwnerName, f.OwnerEmail).Scan(&stored.Token, &stored.CreatedAt, &stored.UpdatedAt); err != nil {
			return narrator.Feed{}, fmt.Errorf("save feed of project %d: %w", f.ProjectID, s.db.Conflict(err, "a feed with this token"))
		}
		if err := s.PingFeed(ctx, tx, narrator.FeedPing(f.ProjectID, now)); err != nil {
			return narrator.Feed{}, fmt.Errorf("save feed of project %d: %w", f.ProjectID, err)
		}
		return stored, nil
	})
	if err != nil {
		return err
	}
	*f = stored
	return nil
}

const rotateFeedTokenSQL = `UPDATE feeds SET token = ?, updated_at = ? WHERE project_id = ? RETURNING ` + FeedColumns

// RotateFeedToken replaces the token of a project's feed with token, so
// that the old URL answers 404 at once, and returns the feed; the hub
// hears of the feed at its new URL. It returns
// EINVALID for a malformed token, ENOTFOUND if the project has no feed, and
// ECONFLICT if the token is taken.
func (s *Store) RotateFeedToken(ctx context.Context, projectID int64, token string) (*narrator.Feed, error) {
	if err := narrator.ValidateFeedToken(token); err != nil {
		return nil, err
	}
	return WriteV(ctx, s, "rotate feed token", func(tx Tx) (*narrator.Feed, error) {
		now := s.now()
		f, err := ScanFeed(tx.QueryRow(ctx, rotateFeedTokenSQL, token, now, projectID))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, feedNotFound(projectID)
		case err != nil:
			return nil, fmt.Errorf("rotate feed token of project %d: %w", projectID, s.db.Conflict(err, "a feed with this token"))
		}
		if err := s.PingFeed(ctx, tx, narrator.FeedPing(projectID, now)); err != nil {
			return nil, fmt.Errorf("rotate feed token of project %d: %w", projectID, err)
		}
		return f, nil
	})
}

const feedEnabledSQL = `SELECT enabled FROM feeds WHERE project_id = ?`

// PingFeed enqueues ping in tx, the transaction of a change of the podcast
// feed of ping.ProjectID, if the store pings hubs (New) and the project has
// a turned-on feed. Jobs are unique by project and due time, so the pings
// of one window (narrator.FeedPing) are one job. It is the step
// narrator.StepPing of a write's effects, and the whole of the effects of
// a change of a feed's settings or an audio's publication.
func (s *Store) PingFeed(ctx context.Context, tx Tx, ping narrator.FeedPingJob) error {
	if !s.feedPings {
		return nil
	}
	var enabled bool
	switch err := tx.QueryRow(ctx, feedEnabledSQL, ping.ProjectID).Scan(&enabled); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("ping feed of project %d: %w", ping.ProjectID, err)
	case !enabled:
		return nil
	}
	return s.db.Enqueue(ctx, tx, ping)
}

// FeedByTokenSQL finds a turned-on feed by its token, through the unique
// index of tokens.
const FeedByTokenSQL = `SELECT ` + FeedColumns + ` FROM feeds WHERE token = ? AND enabled`

// feedAudiosSQL selects the columns ScanAudio reads, the body cut to its
// first narrator.FeedBodyChars characters. It reads the first entries of
// the index audios_feed (%s, DB.IndexedBy): the project's processed live
// audios, however many it has in other states.
const feedAudiosSQL = `
SELECT id, project_id, external_id, title, substr(body, 1, ?), author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, deleted_at
FROM audios%s
WHERE project_id = ? AND deleted_at IS NULL AND state = 'processed' AND NOT ` + notPublicSQL + `
ORDER BY created_at DESC, id DESC
LIMIT ?`

// FeedAudiosSQL is the query of FeedByToken's audios on db, for the tests
// of its plan: its arguments are narrator.FeedBodyChars, the project's ID,
// the instant that decides what is public, and the limit.
func FeedAudiosSQL(db DB) string { return fmt.Sprintf(feedAudiosSQL, db.IndexedBy("audios_feed")) }

// feedPublicationsSQL reads the publications of audios, their IDs given as
// the dialect's list (%s, DB.InList), by the table's key.
const feedPublicationsSQL = `SELECT audio_id, state, publish_at, updated_at FROM audio_publications WHERE audio_id %s`

// FeedPublicationsSQL is the query of FeedByToken's publications on db,
// for the tests of its plan: its one argument is the list of the audios'
// IDs.
func FeedPublicationsSQL(db DB) string { return fmt.Sprintf(feedPublicationsSQL, db.InList()) }

// feedPublications returns the publications of those of the audios that
// have one, by audio ID, with one query.
func feedPublications(ctx context.Context, db DB, tx Tx, audios []*narrator.Audio) (map[int64]narrator.Publication, error) {
	pubs := map[int64]narrator.Publication{}
	if len(audios) == 0 {
		return pubs, nil
	}
	ids := make([]int64, len(audios))
	for i, a := range audios {
		ids[i] = a.ID
	}
	rows, err := tx.Query(ctx, FeedPublicationsSQL(db), ids)
	if err != nil {
		return nil, fmt.Errorf("publications: %w", err)
	}
	list, err := collect(rows, func(row Row) (narrator.Publication, error) {
		var p narrator.Publication
		var at *time.Time
		if err := row.Scan(&p.AudioID, &p.State, &at, &p.UpdatedAt); err != nil {
			return p, err
		}
		if at != nil {
			p.PublishAt = *at
		}
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("publications: %w", err)
	}
	for _, p := range list {
		pubs[p.AudioID] = p
	}
	return pubs, nil
}

// AudiosChangedSQL gives the latest change and the latest deletion of a
// project's audios (the project's ID, given twice), each the first entry of
// an index (audios_changed; audios_deleted on PostgreSQL, audios_list on
// SQLite).
const AudiosChangedSQL = `
SELECT (SELECT updated_at FROM audios WHERE project_id = ? ORDER BY updated_at DESC LIMIT 1),
	(SELECT deleted_at FROM audios WHERE project_id = ? AND deleted_at IS NOT NULL
		ORDER BY deleted_at DESC LIMIT 1)`

// FeedByToken returns what the turned-on feed whose token is token shows
// (narrator.FeedContent), read in one transaction: the feed, its project,
// up to limit of the project's processed live audios, newest first, with
// their media and the start of their body (none in a signed project:
// narrator.FeedBodyCharsOf), and when the project's audios last changed.
// It reads a bounded number of rows however many audios the project has.
// It returns ENOTFOUND if no turned-on feed has that token, and EINVALID
// if limit is not positive.
func (s *Store) FeedByToken(ctx context.Context, token string, limit int) (*narrator.FeedContent, error) {
	if limit <= 0 {
		return nil, narrator.Errorf(narrator.EINVALID, "limit must be positive")
	}
	notFound := narrator.Errorf(narrator.ENOTFOUND, "feed not found")
	if narrator.ValidateFeedToken(token) != nil {
		return nil, notFound
	}
	now := s.now()
	return ReadV(ctx, s, "read feed", func(tx Tx) (*narrator.FeedContent, error) {
		f, err := ScanFeed(tx.QueryRow(ctx, FeedByTokenSQL, token))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, notFound
		case err != nil:
			return nil, fmt.Errorf("read feed: %w", err)
		}
		c := &narrator.FeedContent{Feed: f}
		if c.Project, err = ProjectByID(ctx, tx, f.ProjectID); err != nil {
			return nil, fmt.Errorf("read feed of project %d: %w", f.ProjectID, err)
		}
		access, err := findAccess(ctx, tx, f.ProjectID)
		if err != nil {
			return nil, fmt.Errorf("read feed of project %d: access: %w", f.ProjectID, err)
		}
		c.Signed = access.Mode == narrator.AccessSigned
		if c.Audios, err = QueryAudios(ctx, s.db, tx, FeedAudiosSQL(s.db), narrator.FeedBodyCharsOf(access), f.ProjectID, now, limit); err != nil {
			return nil, fmt.Errorf("read feed of project %d: audios: %w", f.ProjectID, err)
		}
		if c.Publications, err = feedPublications(ctx, s.db, tx, c.Audios); err != nil {
			return nil, fmt.Errorf("read feed of project %d: %w", f.ProjectID, err)
		}
		var updated, deleted *time.Time
		if err := tx.QueryRow(ctx, AudiosChangedSQL, f.ProjectID, f.ProjectID).Scan(&updated, &deleted); err != nil {
			return nil, fmt.Errorf("read feed of project %d: last change: %w", f.ProjectID, err)
		}
		published, err := publicationChangedAt(ctx, tx, f.ProjectID, now)
		if err != nil {
			return nil, fmt.Errorf("read feed: %w", err)
		}
		for _, t := range []*time.Time{updated, deleted, &published} {
			if t != nil && t.After(c.AudiosChangedAt) {
				c.AudiosChangedAt = *t
			}
		}
		return c, nil
	})
}
