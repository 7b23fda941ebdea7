package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// statements are the store's prepared statements, prepared by Migrate once
// the schema is current and closed by Close. The driver keeps no statement
// cache: unprepared, SQLite parses and plans each query again on every
// call, which cost more than running these small reads did
// (docs/architecture.md, "The API's reads and writes"). database/sql
// prepares each one once on every connection of its pool that runs it.
type statements struct {
	reads  readStmts
	writes writeStmts
	all    []*sql.Stmt
}

// readStmts are the API's hot reads, on the reader pool.
type readStmts struct {
	authorizeProject  *sql.Stmt
	audioByID         *sql.Stmt
	audioByExternalID *sql.Stmt
	newestSeq         *sql.Stmt
	listAudios        *sql.Stmt
	listMedia         *sql.Stmt
}

// errNotMigrated is what a store method that needs the prepared statements
// returns before Migrate has run.
var errNotMigrated = errors.New("the sqlite store is not migrated: call Migrate after opening it")

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

// prepareStatements prepares the reads on reader and the writes on writer.
func prepareStatements(ctx context.Context, reader, writer *sql.DB) (*statements, error) {
	r := &preparer{ctx: ctx, db: reader}
	w := &preparer{ctx: ctx, db: writer}
	st := &statements{reads: prepareReads(r), writes: prepareWrites(w)}
	st.all = append(r.done, w.done...)
	if err := errors.Join(r.err, w.err); err != nil {
		st.close()
		return nil, err
	}
	return st, nil
}

// close closes the statements.
func (st *statements) close() error {
	var errs []error
	for _, s := range st.all {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func prepareReads(p *preparer) readStmts {
	return readStmts{
		authorizeProject:  p.stmt(authorizeProjectSQL),
		audioByID:         p.stmt(findLiveAudioWithMediaByIDSQL),
		audioByExternalID: p.stmt(findLiveAudioWithMediaByExternalIDSQL),
		newestSeq:         p.stmt(newestSeqSQL),
		listAudios:        p.stmt(listAudiosPageSQL),
		listMedia:         p.stmt(listPageMediaSQL),
	}
}
