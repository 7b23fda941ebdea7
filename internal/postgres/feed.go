package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

const feedColumns = `project_id, enabled, title, description, author, image_url, language, category,
	explicit, token, created_at, updated_at`

func scanFeed(row pgx.Row) (*narrator.Feed, error) {
	var f narrator.Feed
	if err := row.Scan(&f.ProjectID, &f.Enabled, &f.Title, &f.Description, &f.Author, &f.ImageURL, &f.Language,
		&f.Category, &f.Explicit, &f.Token, &f.CreatedAt, &f.UpdatedAt); err != nil {
		return nil, err
	}
	f.CreatedAt, f.UpdatedAt = f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	return &f, nil
}

func feedNotFound(projectID int64) error {
	return narrator.Errorf(narrator.ENOTFOUND, "project %d has no feed", projectID)
}

const findFeedSQL = `SELECT ` + feedColumns + ` FROM feeds WHERE project_id = $1`

// FindFeed returns a project's feed, turned on or off. It returns ENOTFOUND
// if the project never had one.
func (s *Store) FindFeed(ctx context.Context, projectID int64) (*narrator.Feed, error) {
	f, err := scanFeed(s.queryRow(ctx, findFeedSQL, projectID))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, feedNotFound(projectID)
	case err != nil:
		return nil, fmt.Errorf("find feed of project %d: %w", projectID, err)
	}
	return f, nil
}

// upsertFeedSQL creates a feed or updates its settings, never the token
// of an existing one.
const upsertFeedSQL = `
INSERT INTO feeds (project_id, enabled, title, description, author, image_url, language, category,
	explicit, token, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
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
	defer rollback(ctx, tx)
	if _, err := findProject(ctx, tx, f.ProjectID); err != nil {
		return fmt.Errorf("save feed of project %d: %w", f.ProjectID, err)
	}
	var token string
	var created, updated time.Time
	if err := tx.QueryRow(ctx, upsertFeedSQL, f.ProjectID, f.Enabled, f.Title, f.Description, f.Author,
		f.ImageURL, f.Language, f.Category, f.Explicit, f.Token, s.now()).Scan(&token, &created, &updated); err != nil {
		return fmt.Errorf("save feed of project %d: %w", f.ProjectID, formatError(err, "a feed with this token"))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("save feed of project %d: commit: %w", f.ProjectID, err)
	}
	f.Token, f.CreatedAt, f.UpdatedAt = token, created.UTC(), updated.UTC()
	return nil
}

const rotateFeedTokenSQL = `UPDATE feeds SET token = $1, updated_at = $2 WHERE project_id = $3 RETURNING ` + feedColumns

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
	defer rollback(ctx, tx)
	f, err := scanFeed(tx.QueryRow(ctx, rotateFeedTokenSQL, token, s.now(), projectID))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, feedNotFound(projectID)
	case err != nil:
		return nil, fmt.Errorf("rotate feed token of project %d: %w", projectID, formatError(err, "a feed with this token"))
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("rotate feed token of project %d: commit: %w", projectID, err)
	}
	return f, nil
}

const feedByTokenSQL = `SELECT ` + feedColumns + ` FROM feeds WHERE token = $1 AND enabled`

// feedAudiosSQL selects the columns scanAudio reads, the body cut to its
// first narrator.FeedBodyChars characters. It reads the first entries of
// the index audios_feed: the project's processed live audios, however many
// it has in other states.
const feedAudiosSQL = `
SELECT id, project_id, external_id, title, left(body, $3), author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, deleted_at
FROM audios
WHERE project_id = $1 AND deleted_at IS NULL AND state = 'processed'
ORDER BY created_at DESC, id DESC
LIMIT $2`

// audiosChangedSQL gives the latest change and the latest deletion of a
// project's audios, each the first entry of an index (audios_changed,
// audios_deleted).
const audiosChangedSQL = `
SELECT (SELECT updated_at FROM audios WHERE project_id = $1 ORDER BY updated_at DESC LIMIT 1),
	(SELECT deleted_at FROM audios WHERE project_id = $1 AND deleted_at IS NOT NULL
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
	defer rollback(ctx, tx)
	f, err := scanFeed(tx.QueryRow(ctx, feedByTokenSQL, token))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, notFound
	case err != nil:
		return nil, fmt.Errorf("read feed: %w", err)
	}
	c := &narrator.FeedContent{Feed: f}
	if c.Project, err = findProject(ctx, tx, f.ProjectID); err != nil {
		return nil, fmt.Errorf("read feed of project %d: %w", f.ProjectID, err)
	}
	if c.Audios, err = queryAudios(ctx, tx, feedAudiosSQL, f.ProjectID, limit, narrator.FeedBodyChars); err != nil {
		return nil, fmt.Errorf("read feed of project %d: audios: %w", f.ProjectID, err)
	}
	var updated, deleted *time.Time
	if err := tx.QueryRow(ctx, audiosChangedSQL, f.ProjectID).Scan(&updated, &deleted); err != nil {
		return nil, fmt.Errorf("read feed of project %d: last change: %w", f.ProjectID, err)
	}
	for _, t := range []*time.Time{updated, deleted} {
		if t != nil && t.After(c.AudiosChangedAt) {
			c.AudiosChangedAt = t.UTC()
		}
	}
	return c, nil
}
