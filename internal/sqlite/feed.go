package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

const feedColumns = `project_id, enabled, title, description, author, image_url, language, category,
	explicit, token, created_at, updated_at`

func scanFeed(sc interface{ Scan(...any) error }) (*narrator.Feed, error) {
	var f narrator.Feed
	var created, updated int64
	if err := sc.Scan(&f.ProjectID, &f.Enabled, &f.Title, &f.Description, &f.Author, &f.ImageURL, &f.Language,
		&f.Category, &f.Explicit, &f.Token, &created, &updated); err != nil {
		return nil, err
	}
	f.CreatedAt, f.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &f, nil
}

const findFeedSQL = `SELECT ` + feedColumns + ` FROM feeds WHERE project_id = ?`

// findFeed returns a project's feed, or ENOTFOUND.
func findFeed(ctx context.Context, tx *sql.Tx, projectID int64) (*narrator.Feed, error) {
	f, err := scanFeed(tx.QueryRowContext(ctx, findFeedSQL, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d has no feed", projectID)
	}
	return f, err
}

// FindFeed returns a project's feed, turned on or off. It returns ENOTFOUND
// if the project never had one.
func (s *Store) FindFeed(ctx context.Context, projectID int64) (*narrator.Feed, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find feed: %w", err)
	}
	defer tx.Rollback()
	f, err := findFeed(ctx, tx, projectID)
	if err != nil {
		return nil, fmt.Errorf("find feed of project %d: %w", projectID, err)
	}
	return f, nil
}

// upsertFeedSQL creates a feed or updates its settings, never the token
// of an existing one.
const upsertFeedSQL = `
INSERT INTO feeds (project_id, enabled, title, description, author, image_url, language, category,
	explicit, token, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (project_id) DO UPDATE SET enabled = excluded.enabled, title = excluded.title,
	description = excluded.description, author = excluded.author, image_url = excluded.image_url,
	language = excluded.language, category = excluded.category, explicit = excluded.explicit,
	updated_at = excluded.updated_at
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
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("save feed: %w", err)
	}
	defer tx.Rollback()
	if _, err := findProject(ctx, tx, f.ProjectID); err != nil {
		return fmt.Errorf("save feed of project %d: %w", f.ProjectID, err)
	}
	now := micros(s.now())
	var created, updated int64
	if err := tx.QueryRowContext(ctx, upsertFeedSQL, f.ProjectID, f.Enabled, f.Title, f.Description, f.Author,
		f.ImageURL, f.Language, f.Category, f.Explicit, f.Token, now, now).Scan(&f.Token, &created, &updated); err != nil {
		return fmt.Errorf("save feed of project %d: %w", f.ProjectID, formatError(err, "a feed with this token"))
	}
	f.CreatedAt, f.UpdatedAt = fromMicros(created), fromMicros(updated)
	if err := commit(tx); err != nil {
		return fmt.Errorf("save feed of project %d: commit: %w", f.ProjectID, err)
	}
	return nil
}

const rotateFeedTokenSQL = `UPDATE feeds SET token = ?, updated_at = ? WHERE project_id = ? RETURNING ` + feedColumns

// RotateFeedToken replaces the token of a project's feed with token, so
// that the old URL answers 404 at once, and returns the feed. It returns
// EINVALID for a malformed token, ENOTFOUND if the project has no feed, and
// ECONFLICT if the token is taken.
func (s *Store) RotateFeedToken(ctx context.Context, projectID int64, token string) (*narrator.Feed, error) {
	if err := narrator.ValidateFeedToken(token); err != nil {
		return nil, err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("rotate feed token: %w", err)
	}
	defer tx.Rollback()
	f, err := scanFeed(tx.QueryRowContext(ctx, rotateFeedTokenSQL, token, micros(s.now()), projectID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d has no feed", projectID)
	case err != nil:
		return nil, fmt.Errorf("rotate feed token of project %d: %w", projectID, formatError(err, "a feed with this token"))
	}
	if err := commit(tx); err != nil {
		return nil, fmt.Errorf("rotate feed token of project %d: commit: %w", projectID, err)
	}
	return f, nil
}

const feedByTokenSQL = `SELECT ` + feedColumns + ` FROM feeds WHERE token = ? AND enabled = 1`

// feedAudiosSQL selects the columns scanAudio reads, the body cut to its
// first narrator.FeedBodyChars characters. It reads the first entries of
// the index audios_feed: the project's processed live audios, however many
// it has in other states.
// Without statistics the planner would walk audios_list instead.
const feedAudiosSQL = `
SELECT id, project_id, external_id, title, substr(body, 1, ?), author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, deleted_at
FROM audios INDEXED BY audios_feed
WHERE project_id = ? AND deleted_at IS NULL AND state = 'processed'
ORDER BY created_at DESC, id DESC
LIMIT ?`

// audiosChangedSQL gives the latest change and the latest deletion of a
// project's audios, each the first entry of an index (audios_changed,
// audios_list).
const audiosChangedSQL = `
SELECT (SELECT updated_at FROM audios WHERE project_id = ?1 ORDER BY updated_at DESC LIMIT 1),
	(SELECT deleted_at FROM audios WHERE project_id = ?1 AND deleted_at IS NOT NULL
		ORDER BY deleted_at DESC LIMIT 1)`

// FeedByToken returns what the turned-on feed whose token is token shows
// (narrator.FeedContent), read in one transaction: the feed, its project,
// up to limit of the project's processed live audios, newest first, with
// their media and the start of their body, and when the project's audios last changed. It reads a
// bounded number of rows however many audios the project has. It returns
// ENOTFOUND if no turned-on feed has that token, and EINVALID if limit is
// not positive.
func (s *Store) FeedByToken(ctx context.Context, token string, limit int) (*narrator.FeedContent, error) {
	if limit <= 0 {
		return nil, narrator.Errorf(narrator.EINVALID, "limit must be positive")
	}
	notFound := narrator.Errorf(narrator.ENOTFOUND, "feed not found")
	if narrator.ValidateFeedToken(token) != nil {
		return nil, notFound
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("read feed: %w", err)
	}
	defer tx.Rollback()
	f, err := scanFeed(tx.QueryRowContext(ctx, feedByTokenSQL, token))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, notFound
	case err != nil:
		return nil, fmt.Errorf("read feed: %w", err)
	}
	c := &narrator.FeedContent{Feed: f}
	if c.Project, err = findProject(ctx, tx, f.ProjectID); err != nil {
		return nil, fmt.Errorf("read feed of project %d: %w", f.ProjectID, err)
	}
	if c.Audios, err = queryAudios(ctx, tx, feedAudiosSQL, narrator.FeedBodyChars, f.ProjectID, limit); err != nil {
		return nil, fmt.Errorf("read feed of project %d: audios: %w", f.ProjectID, err)
	}
	var updated, deleted sql.NullInt64
	if err := tx.QueryRowContext(ctx, audiosChangedSQL, f.ProjectID).Scan(&updated, &deleted); err != nil {
		return nil, fmt.Errorf("read feed of project %d: last change: %w", f.ProjectID, err)
	}
	if last := max(updated.Int64, deleted.Int64); updated.Valid || deleted.Valid {
		c.AudiosChangedAt = fromMicros(last)
	}
	return c, nil
}
