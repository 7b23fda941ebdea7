package jobs

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/narrator/narrator"
)

// InsertSynthesesRiver inserts synthesis jobs in tx through River's own
// API, InsertManyFastTx, with the options InsertManyTx would give them:
// the baseline of the seam's benchmark and of its differential tests.
func (q *Queue[TTx]) InsertSynthesesRiver(ctx context.Context, tx TTx, jobs []narrator.SynthesizeJob) error {
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		args, opts, err := jobArgs(j)
		if err != nil {
			return err
		}
		params[i] = river.InsertManyParams{Args: args, InsertOpts: opts}
	}
	_, err := q.client.InsertManyFastTx(ctx, tx, params)
	return err
}

// InsertSynthesesSQLite is the seam's insert on SQLite.
func (q *Queue[TTx]) InsertSynthesesSQLite(ctx context.Context, tx TTx, jobs []narrator.SynthesizeJob) error {
	return q.insertSynthesesSQLite(ctx, tx, jobs)
}

// SeamInserts are the seam's statements, by database.
var SeamInserts = map[string]string{"sqlite": insertSynthesisSQLite, "postgres": insertSynthesesPostgres}
