package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

// FeedColumns are the columns ScanFeed reads.
const FeedColumns = `project_id, enabled, title, description, author, image_url, language, category,
	explicit, token, created_at, updated_at`

// ScanFeed reads a row of FeedColumns.
func ScanFeed(row Row) (*narrator.Feed, error) {
	var f narrator.Feed
	if err := row.Scan(&f.ProjectID, &f.Enabled, &f.Title, &f.Description, &f.Author, &f.ImageURL, &f.Language,
		&f.Category, &f.Explicit, &f.Token, &f.CreatedAt, &f.UpdatedAt); err != nil {
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
	tx, err := s.db.BeginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find feed: %w", err)
	}
	defer tx.Rollback(ctx)
	f, err := ScanFeed(tx.QueryRow(ctx, findFeedSQL, projectID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
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
	tx, err := s.db.BeginWrite(ctx)
	if err != nil {
		return fmt.Errorf("save feed: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := ProjectByID(ctx, tx, f.ProjectID); err != nil {
		return fmt.Errorf("save feed of project %d: %w", f.ProjectID, err)
	}
	now := s.now()
	stored := *f
	if err := tx.QueryRow(ctx, upsertFeedSQL, f.ProjectID, f.Enabled, f.Title, f.Description, f.Author,
		f.ImageURL, f.Language, f.Category, f.Explicit, f.Token, now, now).Scan(&stored.Token, &stored.CreatedAt, &stored.UpdatedAt); err != nil {
		return fmt.Errorf("save feed of project %d: %w", f.ProjectID, s.db.Conflict(err, "a feed with this token"))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("save feed of project %d: commit: %w", f.ProjectID, err)
	}
	*f = stored
	return nil
}

const rotateFeedTokenSQL = `UPDATE feeds SET token = ?, updated_at = ? WHERE project_id = ? RETURNING ` + FeedColumns

// RotateFeedToken replaces the token of a project's feed with token, so
// that the old URL answers 404 at once, and returns the feed. It returns
// EINVALID for a malformed token, ENOTFOUND if the project has no feed, and
// ECONFLICT if the token is taken.
func (s *Store) RotateFeedToken(ctx context.Context, projectID int64, token string) (*narrator.Feed, error) {
	if err := narrator.ValidateFeedToken(token); err != nil {
		return nil, err
	}
	tx, err := s.db.BeginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("rotate feed token: %w", err)
	}
	defer tx.Rollback(ctx)
	f, err := ScanFeed(tx.QueryRow(ctx, rotateFeedTokenSQL, token, s.now(), projectID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, feedNotFound(projectID)
	case err != nil:
		return nil, fmt.Errorf("rotate feed token of project %d: %w", projectID, s.db.Conflict(err, "a feed with this token"))
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("rotate feed token of project %d: commit: %w", projectID, err)
	}
	return f, nil
}
