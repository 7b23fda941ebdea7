package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

const insertProjectSQL = `
INSERT INTO projects (account_id, title, type, language, url, title_voice, body_voice, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING id`

// CreateProject validates and inserts a project, setting its ID and
// CreatedAt. It returns ENOTFOUND if the account does not exist.
func (s *Store) CreateProject(ctx context.Context, p *narrator.Project) error {
	if err := p.Validate(); err != nil {
		return err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	defer rollback(ctx, tx)
	if _, err := findAccount(ctx, tx, p.AccountID); err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	now := s.now()
	var id int64
	if err := tx.QueryRow(ctx, insertProjectSQL, p.AccountID, p.Title, p.Type, p.Language,
		nullString(p.URL), p.TitleVoice, p.BodyVoice, now).Scan(&id); err != nil {
		return fmt.Errorf("create project: %w", formatError(err, "project"))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create project: commit: %w", err)
	}
	p.ID, p.CreatedAt, p.AudioCount = id, now, 0
	return nil
}

// projectColumns are the columns scanProject reads. audio_count is kept by
// the writes that create and delete audios, so no read counts them.
const projectColumns = `id, account_id, title, type, language, url, title_voice, body_voice, created_at, audio_count`

func scanProject(row pgx.Row) (*narrator.Project, error) {
	var p narrator.Project
	var u *string
	if err := row.Scan(&p.ID, &p.AccountID, &p.Title, &p.Type, &p.Language, &u, &p.TitleVoice, &p.BodyVoice,
		&p.CreatedAt, &p.AudioCount); err != nil {
		return nil, err
	}
	if u != nil {
		p.URL = *u
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return &p, nil
}

// FindProject returns a project of an account, with its live audio count. It
// returns ENOTFOUND if the project does not exist or belongs to another
// account.
func (s *Store) FindProject(ctx context.Context, accountID, projectID int64) (*narrator.Project, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find project %d: %w", projectID, err)
	}
	defer rollback(ctx, tx)
	p, err := findProject(ctx, tx, projectID)
	if err == nil && p.AccountID != accountID {
		err = narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	}
	if err != nil {
		return nil, fmt.Errorf("find project %d: %w", projectID, err)
	}
	return p, nil
}

const findProjectSQL = `SELECT ` + projectColumns + ` FROM projects WHERE id = $1`

// findProject returns a project of any account.
func findProject(ctx context.Context, tx pgx.Tx, projectID int64) (*narrator.Project, error) {
	p, err := scanProject(tx.QueryRow(ctx, findProjectSQL, projectID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	}
	return p, err
}

const listProjectsSQL = `SELECT ` + projectColumns + ` FROM projects WHERE account_id = $1 ORDER BY id`

const listAllProjectsSQL = `SELECT ` + projectColumns + ` FROM projects ORDER BY id`

// ListProjects returns an account's projects, or every project if accountID
// is 0, ordered by ID, with their live audio counts. The slice is empty, not
// nil, when there are none.
func (s *Store) ListProjects(ctx context.Context, accountID int64) ([]*narrator.Project, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rollback(ctx, tx)
	query, args := listProjectsSQL, []any{accountID}
	if accountID == 0 {
		query, args = listAllProjectsSQL, nil
	}
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list projects of account %d: %w", accountID, err)
	}
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*narrator.Project, error) { return scanProject(row) })
	if err != nil {
		return nil, fmt.Errorf("list projects of account %d: %w", accountID, err)
	}
	if ps == nil {
		ps = []*narrator.Project{}
	}
	return ps, nil
}

// authorizeProjectSQL finds a project through the live API key of its
// account, in one statement.
const authorizeProjectSQL = `SELECT ` + projectColumns + `
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
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("authorize project %d: %w", projectID, err)
	}
	// Rare: tell a bad key from a project that is not the key's.
	if _, err := s.AuthenticateAPIKey(ctx, hash); err != nil {
		return nil, err
	}
	return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
}
