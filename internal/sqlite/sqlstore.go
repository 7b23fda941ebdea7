package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// dialect is the store as sqlstore uses it.
type dialect struct{ s *Store }

func (d dialect) BeginWrite(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := d.s.beginWrite(ctx)
	return sqlTx{tx}, err
}

func (d dialect) BeginRead(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := d.s.beginRead(ctx)
	return sqlTx{tx}, err
}

// ForUpdate is empty: the one writer connection holds the database for
// the whole of a write transaction (BEGIN IMMEDIATE).
func (dialect) ForUpdate() string { return "" }

func (d dialect) Enqueue(ctx context.Context, tx sqlstore.Tx, job narrator.Job) error {
	return d.s.enqueue(ctx, tx.(sqlTx).tx, job)
}

// sqlTx is a transaction as sqlstore runs it: its arguments and scan
// destinations in SQLite's encodings (encodeArgs, scanDecoded), its
// errors through unavailable.
type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, encodeArgs(args)...)
	if err != nil {
		return 0, unavailable(err)
	}
	return res.RowsAffected()
}

func (t sqlTx) Insert(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, encodeArgs(args)...)
	if err != nil {
		return 0, unavailable(err)
	}
	return res.LastInsertId()
}

func (t sqlTx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return decoded{t.tx.QueryRowContext(ctx, query, encodeArgs(args)...)}
}

func (t sqlTx) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := t.tx.QueryContext(ctx, query, encodeArgs(args)...)
	if err != nil {
		return nil, unavailable(err)
	}
	return decodedRows{rows}, nil
}

func (t sqlTx) Commit(context.Context) error { return commit(t.tx) }

func (t sqlTx) Rollback(context.Context) { _ = t.tx.Rollback() }

// encodeArgs returns args as SQLite stores them: an instant as Unix
// microseconds, a nil pointer as NULL, a list of text comma-separated.
func encodeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case time.Time:
			out[i] = micros(v)
		case *time.Time:
			if v != nil {
				out[i] = micros(*v)
			}
		case *int64:
			if v != nil {
				out[i] = *v
			}
		case []string:
			out[i] = strings.Join(v, ",")
		default:
			out[i] = a
		}
	}
	return out
}

// decoded is a row whose Scan decodes SQLite's encodings (scanDecoded).
type decoded struct {
	row interface{ Scan(...any) error }
}

func (r decoded) Scan(dest ...any) error { return scanDecoded(r.row, dest) }

// decodedRows are rows whose Scan decodes SQLite's encodings.
type decodedRows struct{ *sql.Rows }

func (r decodedRows) Scan(dest ...any) error { return scanDecoded(r.Rows, dest) }

func (r decodedRows) Err() error { return unavailable(r.Rows.Err()) }

func (r decodedRows) Close() { _ = r.Rows.Close() }

// scanDecoded scans a row into dest, decoding what encodeArgs encodes:
// into *time.Time, **time.Time (NULL is nil), **int64 and *[]string.
func scanDecoded(row interface{ Scan(...any) error }, dest []any) error {
	scan := make([]any, len(dest))
	var decode []func()
	for i, d := range dest {
		switch d := d.(type) {
		case *time.Time:
			var us int64
			scan[i] = &us
			decode = append(decode, func() { *d = fromMicros(us) })
		case **time.Time:
			var us sql.NullInt64
			scan[i] = &us
			decode = append(decode, func() {
				*d = nil
				if us.Valid {
					t := fromMicros(us.Int64)
					*d = &t
				}
			})
		case **int64:
			var n sql.NullInt64
			scan[i] = &n
			decode = append(decode, func() {
				*d = nil
				if n.Valid {
					*d = &n.Int64
				}
			})
		case *[]string:
			var s string
			scan[i] = &s
			decode = append(decode, func() { *d = strings.Split(s, ",") })
		default:
			scan[i] = d
		}
	}
	if err := row.Scan(scan...); err != nil {
		return unavailable(err)
	}
	for _, f := range decode {
		f()
	}
	return nil
}
