package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

const insertProjectSQL = `
INSERT INTO projects (account_id, title, type, language, url, title_voice, body_voice, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

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
	defer tx.Rollback()
	if _, err := findAccount(ctx, tx, p.AccountID); err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	now := s.now()
	res, err := tx.ExecContext(ctx, insertProjectSQL, p.AccountID, p.Title, p.Type, p.Language,
		nullString(p.URL), p.TitleVoice, p.BodyVoice, micros(now))
	if err != nil {
		return fmt.Errorf("create project: %w", formatError(err, "project"))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("create project: commit: %w", err)
	}
	p.ID, p.CreatedAt, p.AudioCount = id, now, 0
	return nil
}

// projectColumns are the columns scanProject reads. audio_count is kept by
// the writes that create and delete audios, so no read counts them.
const projectColumns = `p.id, p.account_id, p.title, p.type, p.language, p.url, p.title_voice, p.body_voice, p.created_at,
	p.audio_count`

func scanProject(sc interface{ Scan(...any) error }) (*narrator.Project, error) {
	var p narrator.Project
	var u sql.NullString
	var created int64
	if err := sc.Scan(&p.ID, &p.AccountID, &p.Title, &p.Type, &p.Language, &u, &p.TitleVoice, &p.BodyVoice,
		&created, &p.AudioCount); err != nil {
		return nil, err
	}
	p.URL = u.String
	p.CreatedAt = fromMicros(created)
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
	defer tx.Rollback()
	p, err := findProject(ctx, tx, projectID)
	if err == nil && p.AccountID != accountID {
		err = narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	}
	if err != nil {
		return nil, fmt.Errorf("find project %d: %w", projectID, err)
	}
	return p, nil
}

const findProjectSQL = `SELECT ` + projectColumns + ` FROM projects p WHERE p.id = ?`

// findProject returns a project of any account.
func findProject(ctx context.Context, tx *sql.Tx, projectID int64) (*narrator.Project, error) {
	p, err := scanProject(tx.QueryRowContext(ctx, findProjectSQL, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	}
	return p, err
}

const listProjectsSQL = `
SELECT ` + projectColumns + `
FROM projects p
WHERE ? = 0 OR p.account_id = ?
ORDER BY p.id`

// ListProjects returns an account's projects, or every project if accountID
// is 0, ordered by ID, with their live audio counts. The slice is empty, not
// nil, when there are none.
func (s *Store) ListProjects(ctx context.Context, accountID int64) ([]*narrator.Project, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer tx.Rollback()
	ps, err := listProjects(ctx, tx, accountID)
	if err != nil {
		return nil, fmt.Errorf("list projects of account %d: %w", accountID, err)
	}
	return ps, nil
}

func listProjects(ctx context.Context, tx *sql.Tx, accountID int64) ([]*narrator.Project, error) {
	rows, err := tx.QueryContext(ctx, listProjectsSQL, accountID, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ps := []*narrator.Project{}
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
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
	st, err := s.reads.get(ctx, s.reader)
	if err != nil {
		return nil, fmt.Errorf("authorize project %d: %w", projectID, err)
	}
	p, err := scanProject(st.authorizeProject.QueryRowContext(ctx, projectID, hash))
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
