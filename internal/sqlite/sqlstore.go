package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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

func (dialect) Conflict(err error, what string) error { return formatError(err, what) }

func (dialect) LastIDs(ctx context.Context, tx sqlstore.Tx) (narrator.LastIDs, error) {
	return lastIDs(ctx, tx.(sqlTx).tx)
}

// ILike is LIKE, which ignores the case of ASCII letters only.
func (dialect) ILike() string { return "LIKE" }

func (dialect) IndexedBy(index string) string { return " INDEXED BY " + index }

// InList reads the IDs from a JSON array (encodeArgs).
func (dialect) InList() string { return "IN (SELECT value FROM json_each(?))" }

func (dialect) Overriding() string { return "" }

func (dialect) RaiseID(ctx context.Context, tx sqlstore.Tx, table string, last int64) error {
	return raiseCounter(ctx, tx.(sqlTx).tx, table, last)
}

func (d dialect) Limits() narrator.Limits { return d.s.limits }

func (d dialect) ResolveAudio(ctx context.Context, tx sqlstore.Tx, projectID int64, ref string) (*narrator.Audio, error) {
	return resolveAudioTx(ctx, tx.(sqlTx).tx, projectID, ref)
}

func (d dialect) PlanSynthesis(ctx context.Context, tx sqlstore.Tx, projectID int64, adds, check bool) (int64, error) {
	return d.s.planSynthesis(ctx, tx.(sqlTx).tx, &headMemo{}, projectID, adds, check)
}

func (d dialect) ApplyEffects(ctx context.Context, tx sqlstore.Tx, a *narrator.Audio, eff narrator.Effects) error {
	return d.s.applyEffects(ctx, tx.(sqlTx).tx, a, eff)
}

// ForUpdate is empty: the one writer connection holds the database for
// the whole of a write transaction (BEGIN IMMEDIATE).
func (dialect) ForUpdate() string { return "" }

// LockKey does nothing, for the same reason.
func (dialect) LockKey(context.Context, sqlstore.Tx, string) error { return nil }

func (d dialect) SupersedeSynthesis(ctx context.Context, tx sqlstore.Tx, audioID int64) error {
	return d.s.supersedeSynthesis(ctx, tx.(sqlTx).tx, audioID)
}

func (d dialect) Enqueue(ctx context.Context, tx sqlstore.Tx, job narrator.Job) error {
	return d.s.enqueue(ctx, tx.(sqlTx).tx, job)
}

func (d dialect) RemoveDeliveryJobs(ctx context.Context, tx sqlstore.Tx, ids []int64) error {
	if d.s.jobs == nil {
		return fmt.Errorf("remove jobs of %d deliveries: the sqlite store was opened without a job inserter", len(ids))
	}
	if err := d.s.jobs.RemoveDeliveryJobs(ctx, tx.(sqlTx).tx, ids); err != nil {
		return fmt.Errorf("remove jobs of %d deliveries: %w", len(ids), err)
	}
	return nil
}

// sqlTx is a transaction as sqlstore runs it: its arguments and scan
// destinations in SQLite's encodings (encodeArgs, scanDecoded), its
// errors through unavailable.
type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.exec(ctx, query, args)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) Insert(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.exec(ctx, query, args)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// exec runs a statement with its arguments encoded.
func (t sqlTx) exec(ctx context.Context, query string, args []any) (sql.Result, error) {
	args, err := encodeArgs(args)
	if err != nil {
		return nil, err
	}
	res, err := t.tx.ExecContext(ctx, query, args...)
	return res, unavailable(err)
}

func (t sqlTx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	args, err := encodeArgs(args)
	if err != nil {
		return failedRow{err}
	}
	return decoded{t.tx.QueryRowContext(ctx, query, args...)}
}

// failedRow is a row whose query could not run.
type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }

func (t sqlTx) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	args, err := encodeArgs(args)
	if err != nil {
		return nil, err
	}
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	return decodedRows{rows}, nil
}

func (t sqlTx) Commit(context.Context) error { return commit(t.tx) }

func (t sqlTx) Rollback(context.Context) { _ = t.tx.Rollback() }

// encodeArgs returns args as SQLite stores them: an instant as Unix
// microseconds, a nil pointer as NULL, a list of text comma-separated, a
// list of IDs as a JSON array (dialect.InList), a map as a JSON object.
func encodeArgs(args []any) ([]any, error) {
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
		case *string:
			if v != nil {
				out[i] = *v
			}
		case []string:
			out[i] = strings.Join(v, ",")
		case []int64:
			ids, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("encode ids: %w", err)
			}
			out[i] = string(ids)
		case map[string]string:
			meta, err := encodeMetadata(v)
			if err != nil {
				return nil, err
			}
			out[i] = meta
		default:
			out[i] = a
		}
	}
	return out, nil
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
// into *time.Time, **time.Time (NULL is nil), **int64, **int, **string,
// *[]string and *map[string]string (a JSON object; never nil).
func scanDecoded(row interface{ Scan(...any) error }, dest []any) error {
	scan := make([]any, len(dest))
	var decode []func() error
	for i, d := range dest {
		switch d := d.(type) {
		case *time.Time:
			var us int64
			scan[i] = &us
			decode = append(decode, func() error { *d = fromMicros(us); return nil })
		case **time.Time:
			var us sql.NullInt64
			scan[i] = &us
			decode = append(decode, func() error {
				*d = nil
				if us.Valid {
					t := fromMicros(us.Int64)
					*d = &t
				}
				return nil
			})
		case **int64:
			scan[i], decode = nullable(d, decode)
		case **int:
			scan[i], decode = nullable(d, decode)
		case **string:
			scan[i], decode = nullable(d, decode)
		case *map[string]string:
			var s string
			scan[i] = &s
			decode = append(decode, func() error {
				m := map[string]string{}
				if err := json.Unmarshal([]byte(s), &m); err != nil {
					return fmt.Errorf("decode JSON object: %w", err)
				}
				if m == nil { // the JSON was null
					m = map[string]string{}
				}
				*d = m
				return nil
			})
		case *[]string:
			var s string
			scan[i] = &s
			decode = append(decode, func() error { *d = strings.Split(s, ","); return nil })
		default:
			scan[i] = d
		}
	}
	if err := row.Scan(scan...); err != nil {
		return unavailable(err)
	}
	for _, f := range decode {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// nullable returns the destination that scans a nullable column into d,
// nil for NULL, and decode with the step that sets d after the scan.
func nullable[T any](d **T, decode []func() error) (any, []func() error) {
	var n sql.Null[T]
	return &n, append(decode, func() error {
		*d = nil
		if n.Valid {
			v := n.V
			*d = &v
		}
		return nil
	})
}
