package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of projects are sqlstore's, but for AuthorizeProject.

// scanProject reads a row of sqlstore.ProjectColumns.
func scanProject(row pgx.Row) (*narrator.Project, error) {
	return sqlstore.ScanProject(utcRow{row})
}

// findProject returns a project of any account, or ENOTFOUND.
func findProject(ctx context.Context, tx pgx.Tx, projectID int64) (*narrator.Project, error) {
	return sqlstore.ProjectByID(ctx, pgTx{tx}, projectID)
}

// authorizeProjectSQL finds a project through the live API key of its
// account, in one statement.
const authorizeProjectSQL = `SELECT ` + sqlstore.ProjectColumns + `
FROM projects
WHERE id = $1 AND account_id = (SELECT account_id FROM api_keys WHERE hash = $2 AND revoked_at IS NULL)`

// AuthorizeProject returns the project projectID if the API key with this
// hash is live and belongs to the project's account, in one statement. It
// returns EUNAUTHORIZED if the key is unknown or revoked, and ENOTFOUND if
// the project does not exist or is another account's. It reads the key on
// every call, so a revocation takes effect at once on every node.
func (s *Store) AuthorizeProject(ctx context.Context, hash []byte, projectID int64) (*narrator.Project, error) {
	p, err := scanProject(s.queryRow(ctx, authorizeProjectSQL, projectID, hash))
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("authorize project %d: %w", projectID, err)
	}
	// Rare: tell a bad key from a project that is not the key's.
	if _, err := s.AuthenticateAPIKey(ctx, hash); err != nil {
		return nil, err
	}
	return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
}
