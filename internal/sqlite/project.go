package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of projects are sqlstore's, but for AuthorizeProject, which
// the read cache answers.

// projectColumns are sqlstore.ProjectColumns of the projects table
// aliased as p, which scanProject reads. audio_count is kept by
// the writes that create and delete audios, so no read counts them.
const projectColumns = `p.id, p.account_id, p.title, p.type, p.language, p.url, p.title_voice, p.body_voice, p.speech_rate,
	p.created_at, p.audio_count`

// scanProject reads a row of projectColumns.
func scanProject(sc interface{ Scan(...any) error }) (*narrator.Project, error) {
	return sqlstore.ScanProject(decoded{sc})
}

// authorizeProjectSQL finds a project through the live API key of its
// account, in one statement.
const authorizeProjectSQL = `SELECT ` + projectColumns + `
FROM projects p
WHERE p.id = ? AND p.account_id = (SELECT account_id FROM api_keys WHERE hash = ? AND revoked_at IS NULL)`

// AuthorizeProject returns the project projectID if the API key with this
// hash is live and belongs to the project's account, in one statement on
// the read path, or from the read cache while the database has not changed
// since that statement. It returns EUNAUTHORIZED if the key is unknown or
// revoked, and ENOTFOUND if the project does not exist or is another
// account's. A revocation, by this process or another, takes effect at
// once.
func (s *Store) AuthorizeProject(ctx context.Context, hash []byte, projectID int64) (*narrator.Project, error) {
	k := projectKey{hash: string(hash), projectID: projectID}
	cached, t, ok := s.cache.project(k)
	if ok {
		return &cached, nil
	}
	all, err := s.prepared()
	if err != nil {
		return nil, fmt.Errorf("authorize project %d: %w", projectID, err)
	}
	p, err := scanProject(all.reads.authorizeProject.QueryRowContext(ctx, projectID, hash))
	if err == nil {
		s.cache.keepProject(k, t, p)
		return p, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("authorize project %d: %w", projectID, unavailable(err))
	}
	// Rare: tell a bad key from a project that is not the key's.
	if _, err := s.AuthenticateAPIKey(ctx, hash); err != nil {
		return nil, err
	}
	return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
}
