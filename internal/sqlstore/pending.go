package sqlstore

import (
	"context"
	"fmt"

	"github.com/narrator/narrator"
)

const lockWebhookSQL = `SELECT id FROM webhooks WHERE id = ?`

const expireDeliveriesSQL = `
UPDATE webhook_deliveries SET state = 'failed', last_error = ?
WHERE webhook_id = ? AND state = 'pending' AND COALESCE(last_attempt_at, created_at) < ?
RETURNING id`

const countPendingSQL = `SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = ? AND state = 'pending'`

const collapseDeliveriesSQL = `
UPDATE webhook_deliveries SET state = 'failed', last_error = ?
WHERE id IN (
	SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND state = 'pending' ORDER BY id LIMIT ?)
RETURNING id`

// makeRoom makes room in tx for one more pending delivery to an endpoint,
// as narrator.MaxPendingDeliveries says: it locks the endpoint, so that
// concurrent writes count the same deliveries, fails its deliveries
// pending with no attempt for narrator.DeliveryHorizon (a live delivery is
// tried at least every few hours; a resent one soon after its resend), and
// then either collapses the oldest pending ones (an audio's event) or,
// when refuse is set (a test, a resend), returns narrator.PendingFull if
// the endpoint is at the cap. The jobs of the deliveries it fails that
// still wait go with them (DB.RemoveDeliveryJobs).
func (s *Store) makeRoom(ctx context.Context, tx Tx, webhookID int64, refuse bool) error {
	var id int64
	if err := tx.QueryRow(ctx, lockWebhookSQL+s.db.ForUpdate(), webhookID).Scan(&id); err != nil {
		return fmt.Errorf("lock webhook %d: %w", webhookID, err)
	}
	if err := s.giveUp(ctx, tx, expireDeliveriesSQL, narrator.DeliveryExpired, webhookID, s.now().Add(-narrator.DeliveryHorizon)); err != nil {
		return fmt.Errorf("expire deliveries of webhook %d: %w", webhookID, err)
	}
	var pending int
	if err := tx.QueryRow(ctx, countPendingSQL, webhookID).Scan(&pending); err != nil {
		return fmt.Errorf("count pending deliveries of webhook %d: %w", webhookID, err)
	}
	n := narrator.PendingRoom(pending)
	switch {
	case n == 0:
		return nil
	case refuse:
		return narrator.PendingFull(webhookID)
	}
	if err := s.giveUp(ctx, tx, collapseDeliveriesSQL, narrator.DeliverySuperseded, webhookID, n); err != nil {
		return fmt.Errorf("collapse deliveries of webhook %d: %w", webhookID, err)
	}
	return nil
}

// giveUp runs query, an UPDATE that fails deliveries with reason and
// returns their IDs, followed by args; then it removes their jobs that
// still wait, which would find nothing to do.
func (s *Store) giveUp(ctx context.Context, tx Tx, query, reason string, args ...any) error {
	rows, err := tx.Query(ctx, query, append([]any{reason}, args...)...)
	if err != nil {
		return err
	}
	ids, err := collect(rows, func(r Row) (int64, error) {
		var id int64
		err := r.Scan(&id)
		return id, err
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	return s.db.RemoveDeliveryJobs(ctx, tx, ids)
}
