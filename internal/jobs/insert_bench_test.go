package jobs_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// groupSizes are the sizes of a group of creates the benchmarks insert the
// synthesis jobs of: one create, and groups as concurrent callers make them.
var groupSizes = []int{1, 16, 64}

// synthesisJobs returns n synthesis jobs in rounds from round on.
func synthesisJobs(n int, round int64) []narrator.SynthesizeJob {
	out := make([]narrator.SynthesizeJob, n)
	for i := range out {
		out[i] = narrator.SynthesizeJob{AudioID: int64(i + 1), Revision: 1, Round: round + int64(i)}
	}
	return out
}

// BenchmarkInsertSyntheses inserts the synthesis jobs of a group of
// creates in a transaction that is then rolled back, so that only the
// insert is measured: through River's InsertManyFastTx ("river") and
// through the hand-written seam ("seam"), on real SQLite and PostgreSQL.
// Each iteration runs every way once, in turn, so that a busy machine
// slows them alike; each way's median is reported, and its ratio to the
// seam's. On PostgreSQL "batch" is the seam as a group of creates sends
// it, in one round trip with the transaction's begin and end; River's
// insert, a COPY, cannot be queued in a batch.
func BenchmarkInsertSyntheses(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, q := sqlitetest.Open(b, sqlite.Options{}, jobs.Config{})
		inTx := func(insert func(context.Context, *sql.Tx, []narrator.SynthesizeJob) error) insertWay {
			return func(ctx context.Context, js []narrator.SynthesizeJob) error {
				tx, err := st.DB().BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				defer tx.Rollback()
				return insert(ctx, tx, js)
			}
		}
		for _, n := range groupSizes {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				benchInsertWays(b, n, []string{"seam", "river"}, inTx(q.InsertSynthesesSQLite), inTx(q.InsertSynthesesRiver))
			})
		}
	})
	b.Run("postgres", func(b *testing.B) {
		pool, err := postgres.OpenPool(b.Context(), pgtest.NewDatabase(b, riverTemplate))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		q, err := jobs.NewPostgres(pool, jobs.Config{})
		if err != nil {
			b.Fatal(err)
		}
		inTx := func(insert func(context.Context, pgx.Tx, []narrator.SynthesizeJob) error) insertWay {
			return func(ctx context.Context, js []narrator.SynthesizeJob) error {
				tx, err := pool.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback(ctx)
				return insert(ctx, tx, js)
			}
		}
		seam := func(ctx context.Context, tx pgx.Tx, js []narrator.SynthesizeJob) error {
			batch := &pgx.Batch{}
			if err := q.QueueInsertMany(batch, asJobs(js)); err != nil {
				return err
			}
			return tx.SendBatch(ctx, batch).Close()
		}
		batch := func(ctx context.Context, js []narrator.SynthesizeJob) error {
			batch := &pgx.Batch{}
			batch.Queue("BEGIN")
			if err := q.QueueInsertMany(batch, asJobs(js)); err != nil {
				return err
			}
			batch.Queue("ROLLBACK")
			return pool.SendBatch(ctx, batch).Close()
		}
		for _, n := range groupSizes {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				benchInsertWays(b, n, []string{"seam", "river", "batch"}, inTx(seam), inTx(q.InsertSynthesesRiver), batch)
			})
		}
	})
}

// insertWay inserts synthesis jobs in a transaction of its own.
type insertWay func(ctx context.Context, js []narrator.SynthesizeJob) error

// benchInsertWays runs each way of inserting n jobs once an iteration and
// reports each one's median time, as name-ns, and its ratio to the first
// way's, as name/first.
func benchInsertWays(b *testing.B, n int, names []string, ways ...insertWay) {
	ctx := b.Context()
	js := synthesisJobs(n, 1)
	times := make([][]time.Duration, len(ways))
	for b.Loop() {
		for i, way := range ways {
			start := time.Now()
			if err := way(ctx, js); err != nil {
				b.Fatal(err)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	medians := make([]float64, len(ways))
	for i, ts := range times {
		slices.Sort(ts)
		medians[i] = float64(ts[len(ts)/2].Nanoseconds())
		b.ReportMetric(medians[i], names[i]+"-ns")
		if i > 0 {
			b.ReportMetric(medians[i]/medians[0], names[i]+"/"+names[0])
		}
	}
}

// asJobs is js as the jobs of a group.
func asJobs(js []narrator.SynthesizeJob) []narrator.Job {
	out := make([]narrator.Job, len(js))
	for i, j := range js {
		out[i] = j
	}
	return out
}
