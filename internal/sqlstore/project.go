package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

const insertProjectSQL = `
INSERT INTO projects (account_id, title, type, language, url, title_voice, body_voice, speech_rate, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// CreateProject validates and inserts a project, setting its ID and
// CreatedAt, and its SpeechRate if it has none. It returns ENOTFOUND if
// the account does not exist.
func (s *Store) CreateProject(ctx context.Context, p *narrator.Project) error {
	if err := p.Validate(); err != nil {
		return err
	}
	var id int64
	var now time.Time
	err := s.write(ctx, "create project", func(tx Tx) error {
		if _, err := findAccount(ctx, tx, p.AccountID); err != nil {
			return fmt.Errorf("create project: %w", err)
		}
		now = s.now()
		var err error
		id, err = tx.Insert(ctx, insertProjectSQL, p.AccountID, p.Title, p.Type, p.Language,
			NullString(p.URL), p.TitleVoice, p.BodyVoice, p.Rate(), now)
		if err != nil {
			return fmt.Errorf("create project: %w", s.db.Conflict(err, "project"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.ID, p.CreatedAt, p.AudioCount, p.SpeechRate = id, now, 0, p.Rate()

	return nil
}

// ProjectColumns are the columns ScanProject reads. audio_count is kept by
// the writes that create and delete audios, so no read counts them.
const ProjectColumns = `id, account_id, title, type, language, url, title_voice, body_voice, speech_rate, created_at, audio_count`

// ScanProject reads a row of ProjectColumns.
func ScanProject(row Row) (*narrator.Project, error) {
	var p narrator.Project
	var u *string
	if err := row.Scan(&p.ID, &p.AccountID, &p.Title, &p.Type, &p.Language, &u, &p.TitleVoice, &p.BodyVoice,
		&p.SpeechRate, &p.CreatedAt, &p.AudioCount); err != nil {
		return nil, err
	}
	if u != nil {
		p.URL = *u
	}
	return &p, nil
}

// FindProject returns a project of an account, with its live audio count. It
// returns ENOTFOUND if the project does not exist or belongs to another
// account.
func (s *Store) FindProject(ctx context.Context, accountID, projectID int64) (*narrator.Project, error) {
	return ReadV(ctx, s, fmt.Sprintf("find project %d", projectID), func(tx Tx) (*narrator.Project, error) {
		p, err := ProjectByID(ctx, tx, projectID)
		if err == nil && p.AccountID != accountID {
			err = narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
		}
		if err != nil {
			return nil, fmt.Errorf("find project %d: %w", projectID, err)
		}
		return p, nil
	})
}

const findProjectSQL = `SELECT ` + ProjectColumns + ` FROM projects WHERE id = ?`

// ProjectByID returns a project of any account, in tx, or ENOTFOUND.
func ProjectByID(ctx context.Context, tx Tx, projectID int64) (*narrator.Project, error) {
	p, err := ScanProject(tx.QueryRow(ctx, findProjectSQL, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	}
	return p, err
}

const listProjectsSQL = `SELECT ` + ProjectColumns + ` FROM projects WHERE account_id = ? ORDER BY id`

const listAllProjectsSQL = `SELECT ` + ProjectColumns + ` FROM projects ORDER BY id`

// ListProjects returns an account's projects, or every project if accountID
// is 0, ordered by ID, with their live audio counts. The slice is empty, not
// nil, when there are none.
func (s *Store) ListProjects(ctx context.Context, accountID int64) ([]*narrator.Project, error) {
	return ReadV(ctx, s, "list projects", func(tx Tx) ([]*narrator.Project, error) {
		query, args := listProjectsSQL, []any{accountID}
		if accountID == 0 {
			query, args = listAllProjectsSQL, nil
		}
		ps, err := queryAll(ctx, tx, ScanProject, query, args...)
		if err != nil {
			return nil, fmt.Errorf("list projects of account %d: %w", accountID, err)
		}
		return ps, nil
	})
}

const setSpeechRateSQL = `UPDATE projects SET speech_rate = ? WHERE id = ?`

// SetSpeechRate sets the project's speaking rate (0 for the default) and
// returns the project, as narrator.PlanSpeechRate decides: it writes the
// row and nothing else, so no audio is rendered again. It returns EINVALID
// for a rate out of range and ENOTFOUND if the project does not exist.
func (s *Store) SetSpeechRate(ctx context.Context, projectID int64, rate float64) (*narrator.Project, error) {
	return WriteV(ctx, s, fmt.Sprintf("set speech rate of project %d", projectID), func(tx Tx) (*narrator.Project, error) {
		cur, err := ScanProject(tx.QueryRow(ctx, findProjectSQL+s.db.ForUpdate(), projectID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
		} else if err != nil {
			return nil, fmt.Errorf("set speech rate of project %d: %w", projectID, err)
		}
		plan, err := narrator.PlanSpeechRate(cur, rate)
		if err != nil {
			return nil, err
		}
		if !plan.Changed {
			return &plan.Next, nil
		}
		if _, err := tx.Exec(ctx, setSpeechRateSQL, plan.Next.SpeechRate, projectID); err != nil {
			return nil, fmt.Errorf("set speech rate of project %d: %w", projectID, err)
		}
		return &plan.Next, nil
	})
}
