package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/narrator/narrator"
)

// unavailableCodes are the SQLSTATEs besides class 08 that unavailable
// marks narrator.Unavailable: the server shutting down or starting.
var unavailableCodes = []string{"57P01", "57P02", "57P03"}

// contendedCodes are those it marks narrator.Contended: a deadlock broken
// and a serialization conflict.
var contendedCodes = []string{"40P01", "40001"}

// unavailable returns err marked narrator.EUNAVAILABLE when it says that
// the database cannot be reached: no connection could be made, one broke,
// or the server is shutting down or starting (SQLSTATE class 08, and
// 57P01 to 57P03). So is an error that says the server rolled the
// transaction back to break a deadlock between writes, or for a
// serialization conflict (40P01, 40001), with narrator.Contended's
// message: nothing of it was written, and the same request, made again,
// goes through. Other errors, a cancelled request's and one that ran out
// of its own time, are returned as they are.
func unavailable(err error) error {
	var (
		pgErr   *pgconn.PgError
		connErr *pgconn.ConnectError
		netErr  net.Error
	)
	switch {
	case err == nil, errors.Is(err, context.Canceled), narrator.ErrorCode(err) != narrator.EINTERNAL:
		return err
	case errors.As(err, &pgErr):
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), slices.Contains(unavailableCodes, pgErr.Code):
			return narrator.Unavailable(err)
		case slices.Contains(contendedCodes, pgErr.Code):
			return narrator.Contended(err)
		}
		return err
	case errors.As(err, &connErr):
		return narrator.Unavailable(err)
	case errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &netErr), errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return narrator.Unavailable(err)
	}
	return err
}

// txConn is a transaction whose statements' errors go through
// unavailable, so that an outage in the middle of a write is
// narrator.EUNAVAILABLE too. beginWrite and beginRead return it.
type txConn struct{ pgx.Tx }

func (t txConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.Tx.Exec(ctx, sql, args...)
	return tag, unavailable(err)
}

func (t txConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.Tx.Query(ctx, sql, args...)
	return rows, unavailable(err)
}

func (t txConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return row{t.Tx.QueryRow(ctx, sql, args...)}
}

func (t txConn) Commit(ctx context.Context) error { return unavailable(t.Tx.Commit(ctx)) }

// row is a pgx.Row whose Scan's error goes through unavailable.
type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error { return unavailable(r.Row.Scan(dest...)) }

// queryRow runs a query of one row on the pool, outside a transaction.
func (s *Store) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return row{s.pool.QueryRow(ctx, sql, args...)}
}
