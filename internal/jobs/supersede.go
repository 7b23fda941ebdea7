package jobs

import (
	"context"
	"encoding/json"
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

// removeDeliveriesSQL removes the webhook jobs of some deliveries that wait
// to start, the IDs in a JSON array on SQLite, a bigint[] on PostgreSQL.
const (
	removeDeliveriesSQLite = `
DELETE FROM river_job
WHERE queue = $1 AND state IN ('available', 'scheduled', 'retryable', 'pending')
	AND json_extract(args, '$.delivery_id') IN (SELECT value FROM json_each($2))`
	removeDeliveriesPostgres = `
DELETE FROM river_job
WHERE queue = $1 AND state IN ('available', 'scheduled', 'retryable', 'pending')
	AND (args->>'delivery_id')::bigint = ANY($2::bigint[])`
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

// RemoveDeliveryJobs removes, in tx, the webhook jobs of the deliveries
// ids that wait to start: deliveries given up before their attempt
// (narrator.DeliverySuperseded, narrator.DeliveryExpired). A running job
// is left to finish; it finds its delivery given up.
func (q *Queue[TTx]) RemoveDeliveryJobs(ctx context.Context, tx TTx, ids []int64) error {
	query, arg := removeDeliveriesPostgres, any(ids)
	if q.db != nil {
		list, err := json.Marshal(ids)
		if err != nil {
			return fmt.Errorf("remove jobs of %d deliveries: %w", len(ids), err)
		}
		query, arg = removeDeliveriesSQLite, string(list)
	}
	if err := q.driver.UnwrapExecutor(tx).Exec(ctx, query, queueWebhook, arg); err != nil {
		return fmt.Errorf("remove jobs of %d deliveries: %w", len(ids), err)
	}
	return nil
}
