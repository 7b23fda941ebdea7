package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of projects are sqlstore's, but for AuthorizeProject.

// scanProject reads a row of sqlstore.ProjectColumns.
func scanProject(row pgx.Row) (*narrator.Project, error) {
	return sqlstore.ScanProject(utcRow{row})
}

// authorizeProjectSQL finds a project through the live API key of its
// account, in one statement.
const authorizeProjectSQL = `SELECT ` + sqlstore.ProjectColumns + `
FROM projects
WHERE id = $1 AND account_id = (SELECT account_id FROM api_keys WHERE hash = $2 AND revoked_at IS NULL)`

// authorizeProjectsSQL is authorizeProjectSQL for a group of calls, in one
// statement: it returns the ordinal (n) of each call whose key is live and
// whose project is its account's, with that project.
const authorizeProjectsSQL = `SELECT r.n, ` + sqlstore.ProjectColumns + `
FROM unnest($1::bigint[], $2::bytea[]) WITH ORDINALITY AS r(asked_id, asked_hash, n)
JOIN projects ON projects.id = r.asked_id
WHERE projects.account_id = (SELECT k.account_id FROM api_keys k WHERE k.hash = r.asked_hash AND k.revoked_at IS NULL)`

// maxAuthorizeGroup caps the calls of one group of authorizations.
const maxAuthorizeGroup = 64

// authorizeCall is one AuthorizeProject call in a group of them: project
// is the project found, or nil, and err the group's error.
type authorizeCall struct {
	ctx       context.Context
	hash      []byte
	projectID int64
	project   *narrator.Project
	err       error
}

// AuthorizeProject returns the project projectID if the API key with this
// hash is live and belongs to the project's account. It returns
// EUNAUTHORIZED if the key is unknown or revoked, and ENOTFOUND if the
// project does not exist or is another account's. It reads the key on
// every call, so a revocation takes effect at once on every node.
//
// Every request with a project in its path makes this read first, but a
// create with a key known to its node (CreateAudioWithKey), so concurrent
// calls share one statement (authorizeGroup): a call that finds none
// under way runs at once, alone, and the calls that arrive meanwhile run
// together as soon as it has answered. Each call still reads what was
// committed after it was made. A call returns its context's error as soon
// as its context ends, unless it leads a group of others: it then runs the
// group's statement until the last of them has left.
func (s *Store) AuthorizeProject(ctx context.Context, hash []byte, projectID int64) (*narrator.Project, error) {
	c := &authorizeCall{ctx: ctx, hash: hash, projectID: projectID}
	if err := s.authorizes.DoContext(ctx, c, s.authorizeGroup); err != nil {
		return nil, fmt.Errorf("authorize project %d: %w", projectID, err)
	}
	if c.err != nil {
		return nil, fmt.Errorf("authorize project %d: %w", projectID, c.err)
	}
	if c.project != nil {
		return c.project, nil
	}
	// Rare: tell a bad key from a project that is not the key's.
	if _, err := s.AuthenticateAPIKey(ctx, hash); err != nil {
		return nil, err
	}
	return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
}

// authorizeGroup answers a group of AuthorizeProject calls: one alone with
// authorizeProjectSQL, on its own context; more with authorizeProjectsSQL,
// which runs until the last of its callers leaves, so that a stuck
// statement holds up the line no longer than its callers wait. A call
// whose context has ended when the group starts gets its error.
func (s *Store) authorizeGroup(calls []*authorizeCall, _ func() []*authorizeCall) {
	if len(calls) == 1 {
		c := calls[0]
		p, err := scanProject(s.queryRow(c.ctx, authorizeProjectSQL, c.projectID, c.hash))
		switch {
		case err == nil:
			c.project = p
		case !errors.Is(err, sql.ErrNoRows):
			c.err = err
		}
		return
	}
	var (
		live   = make(map[int64]*authorizeCall, len(calls))
		ids    = make([]int64, 0, len(calls))
		hashes = make([][]byte, 0, len(calls))
	)
	for _, c := range calls {
		if c.err = c.ctx.Err(); c.err != nil {
			continue
		}
		ids, hashes = append(ids, c.projectID), append(hashes, c.hash)
		live[int64(len(ids))] = c
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(calls[0].ctx))
	defer cancel()
	left := atomic.Int64{}
	left.Store(int64(len(live)))
	for _, c := range live {
		stop := context.AfterFunc(c.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	if err := s.authorizeMany(ctx, ids, hashes, live); err != nil {
		for _, c := range live {
			c.project, c.err = nil, err
		}
	}
}

// authorizeMany runs authorizeProjectsSQL for the calls asking for
// projects ids with keys hashes, and sets the project of each call of
// live, by ordinal, that it finds.
func (s *Store) authorizeMany(ctx context.Context, ids []int64, hashes [][]byte, live map[int64]*authorizeCall) error {
	rows, err := s.pool.Query(ctx, authorizeProjectsSQL, ids, hashes)
	if err != nil {
		return unavailable(err)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		p, err := sqlstore.ScanProject(utcRow{numberedRow{rows, &n}})
		if err != nil {
			return unavailable(err)
		}
		if c := live[n]; c != nil {
			c.project = p
		}
	}
	return unavailable(rows.Err())
}

// numberedRow is a row of authorizeProjectsSQL: its first column, the
// call's ordinal, goes to n, the others to what Scan is given.
type numberedRow struct {
	rows pgx.Rows
	n    *int64
}

func (r numberedRow) Scan(dest ...any) error {
	return r.rows.Scan(append([]any{r.n}, dest...)...)
}
