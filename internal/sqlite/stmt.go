package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// readStmts are the API's hot reads, prepared once on the reader pool.
// The driver keeps no statement cache: unprepared, SQLite parses and plans
// each query again on every call, which cost more than running these small
// reads did (docs/architecture.md, "The API's reads and writes").
// database/sql prepares each one once on every reader connection that runs
// it.
type readStmts struct {
	authorizeProject  *sql.Stmt
	audioByID         *sql.Stmt
	audioByExternalID *sql.Stmt
	newestSeq         *sql.Stmt
	listAudios        *sql.Stmt
	listMedia         *sql.Stmt
}

// stmtCache prepares a set of statements on first use and keeps them until
// close. It cannot prepare at Open: the schema may not exist yet.
type stmtCache[T any] struct {
	mu      sync.Mutex
	v       *T
	all     []*sql.Stmt
	prepare func(p *preparer) *T
}

// preparer prepares statements on one pool, remembering the first error.
type preparer struct {
	ctx  context.Context
	db   *sql.DB
	err  error
	done []*sql.Stmt
}

func (p *preparer) stmt(query string) *sql.Stmt {
	if p.err != nil {
		return nil
	}
	st, err := p.db.PrepareContext(p.ctx, query)
	if err != nil {
		p.err = fmt.Errorf("prepare %q: %w", query, err)
		return nil
	}
	p.done = append(p.done, st)
	return st
}

// get returns the prepared statements, preparing them on db the first time.
// A caller must not hold a transaction of db: preparing takes a connection
// of its own. A failure is returned and tried again on the next call.
func (c *stmtCache[T]) get(ctx context.Context, db *sql.DB) (*T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v != nil {
		return c.v, nil
	}
	p := &preparer{ctx: ctx, db: db}
	v := c.prepare(p)
	if p.err != nil {
		for _, st := range p.done {
			st.Close()
		}
		return nil, unavailable(p.err)
	}
	c.v, c.all = v, p.done
	return v, nil
}

// prepared returns the statements if a get has prepared them, else nil. It
// never prepares, so a caller that holds a transaction may use it.
func (c *stmtCache[T]) prepared() *T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.v
}

// close closes the prepared statements, if any.
func (c *stmtCache[T]) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.all {
		errs = append(errs, st.Close())
	}
	c.v, c.all = nil, nil
	return errors.Join(errs...)
}

func prepareReads(p *preparer) *readStmts {
	return &readStmts{
		authorizeProject:  p.stmt(authorizeProjectSQL),
		audioByID:         p.stmt(findLiveAudioWithMediaByIDSQL),
		audioByExternalID: p.stmt(findLiveAudioWithMediaByExternalIDSQL),
		newestSeq:         p.stmt(newestSeqSQL),
		listAudios:        p.stmt(listAudiosPageSQL),
		listMedia:         p.stmt(listPageMediaSQL),
	}
}
