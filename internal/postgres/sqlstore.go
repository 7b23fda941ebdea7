package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// dialect is the store as sqlstore uses it.
type dialect struct{ s *Store }

func (d dialect) BeginWrite(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := d.s.beginWrite(ctx)
	return pgTx{tx}, err
}

func (d dialect) BeginRead(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := d.s.beginRead(ctx)
	return pgTx{tx}, err
}

func (dialect) ForUpdate() string { return string(forUpdate) }

// lockKeySQL takes an advisory transaction lock on a hash of a string.
const lockKeySQL = `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`

func (dialect) LockKey(ctx context.Context, tx sqlstore.Tx, key string) error {
	_, err := tx.Exec(ctx, lockKeySQL, key)
	return err
}

func (dialect) Conflict(err error, what string) error { return formatError(err, what) }

func (dialect) LastIDs(ctx context.Context, tx sqlstore.Tx) (narrator.LastIDs, error) {
	return lastIDs(ctx, tx.(pgTx).tx)
}

func (dialect) ILike() string { return "ILIKE" }

func (dialect) IndexedBy(string) string { return "" }

func (dialect) InList() string { return "= ANY(?)" }

func (dialect) Overriding() string { return "OVERRIDING SYSTEM VALUE " }

func (dialect) RaiseID(ctx context.Context, tx sqlstore.Tx, table string, last int64) error {
	return raiseSequence(ctx, tx.(pgTx).tx, table, last)
}

func (d dialect) Limits() narrator.Limits { return d.s.limits }

func (d dialect) ResolveAudio(ctx context.Context, tx sqlstore.Tx, projectID int64, ref string) (*narrator.Audio, error) {
	return d.s.resolveAudio(ctx, tx.(pgTx).tx, projectID, ref, forUpdate)
}

func (d dialect) PlanSynthesis(ctx context.Context, tx sqlstore.Tx, projectID int64, adds, check bool) (int64, error) {
	return d.s.planSynthesis(ctx, tx.(pgTx).tx, projectID, adds, check)
}

func (d dialect) ApplyEffects(ctx context.Context, tx sqlstore.Tx, a *narrator.Audio, eff narrator.Effects) error {
	return d.s.applyEffects(ctx, tx.(pgTx).tx, a, eff)
}

func (d dialect) SupersedeSynthesis(ctx context.Context, tx sqlstore.Tx, audioID int64) error {
	return d.s.supersedeSynthesis(ctx, tx.(pgTx).tx, audioID)
}

func (d dialect) Enqueue(ctx context.Context, tx sqlstore.Tx, job narrator.Job) error {
	return d.s.enqueue(ctx, tx.(pgTx).tx, job)
}

func (d dialect) RemoveDeliveryJobs(ctx context.Context, tx sqlstore.Tx, ids []int64) error {
	if d.s.jobs == nil {
		return fmt.Errorf("remove jobs of %d deliveries: the postgres store was opened without a job inserter", len(ids))
	}
	if err := d.s.jobs.RemoveDeliveryJobs(ctx, tx.(pgTx).tx, ids); err != nil {
		return fmt.Errorf("remove jobs of %d deliveries: %w", len(ids), err)
	}
	return nil
}

// pgTx is a transaction as sqlstore runs it: its ? placeholders numbered
// (numbered), sql.ErrNoRows for pgx's, instants read back in UTC.
type pgTx struct{ tx pgx.Tx }

func (t pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, numbered(query), args...)
	return tag.RowsAffected(), err
}

func (t pgTx) Insert(ctx context.Context, query string, args ...any) (int64, error) {
	var id int64
	err := t.tx.QueryRow(ctx, numbered(query)+"\nRETURNING id", args...).Scan(&id)
	return id, err
}

func (t pgTx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return utcRow{t.tx.QueryRow(ctx, numbered(query), args...)}
}

func (t pgTx) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := t.tx.Query(ctx, numbered(query), args...)
	if err != nil {
		return nil, err
	}
	return utcRows{rows}, nil
}

func (t pgTx) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

func (t pgTx) Rollback(ctx context.Context) { rollback(ctx, t.tx) }

// numbered returns query with its ? placeholders numbered $1, $2…, as
// PostgreSQL wants them. sqlstore's queries hold no ? of their own.
func numbered(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			b.WriteString(query)
			return b.String()
		}
		n++
		b.WriteString(query[:i])
		b.WriteString("$" + strconv.Itoa(n))
		query = query[i+1:]
	}
}

// utcRow is a row whose Scan reports no row as sql.ErrNoRows and reads
// instants in UTC.
type utcRow struct{ row pgx.Row }

func (r utcRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	if err == nil {
		inUTC(dest)
	}
	return err
}

// utcRows are rows whose Scan reads instants in UTC.
type utcRows struct{ pgx.Rows }

func (r utcRows) Scan(dest ...any) error {
	if err := r.Rows.Scan(dest...); err != nil {
		return err
	}
	inUTC(dest)
	return nil
}

// inUTC moves the instants scanned into dest to UTC.
func inUTC(dest []any) {
	for _, d := range dest {
		switch d := d.(type) {
		case *time.Time:
			*d = d.UTC()
		case **time.Time:
			if *d != nil {
				t := (*d).UTC()
				*d = &t
			}
		}
	}
}
