package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of feeds are sqlstore's, but for FeedByToken; ExportMeta
// reads feeds here.

// feedColumns are the columns scanFeed reads.
const feedColumns = sqlstore.FeedColumns

// scanFeed reads a row of feedColumns.
func scanFeed(sc interface{ Scan(...any) error }) (*narrator.Feed, error) {
	return sqlstore.ScanFeed(decoded{sc})
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
