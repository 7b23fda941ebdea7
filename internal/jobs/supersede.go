package jobs

import (
	"context"
	"fmt"
)

// supersedeSQL removes an audio's synthesis jobs that wait to start (not
// running), on each dialect's reading of the job's JSON arguments.
const (
	supersedeSQLite = `
DELETE FROM river_job
WHERE queue = $1 AND state IN ('available', 'scheduled', 'retryable', 'pending')
	AND json_extract(args, '$.audio_id') = $2`
	supersedePostgres = `
DELETE FROM river_job
WHERE queue = $1 AND state IN ('available', 'scheduled', 'retryable', 'pending')
	AND (args->>'audio_id')::bigint = $2`
)

// SupersedeSynthesis removes, in tx, the synthesis jobs of an audio that
// wait to start, so that the job its change inserts next replaces them
// (narrator.Effects.Supersede). A running job is left to finish; it finds
// its revision stale.
func (q *Queue[TTx]) SupersedeSynthesis(ctx context.Context, tx TTx, audioID int64) error {
	query := supersedePostgres
	if q.db != nil {
		query = supersedeSQLite
	}
	if err := q.driver.UnwrapExecutor(tx).Exec(ctx, query, queueSynthesize, audioID); err != nil {
		return fmt.Errorf("supersede synthesis of audio %d: %w", audioID, err)
	}
	return nil
}
