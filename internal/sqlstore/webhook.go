package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

// WebhookColumns are the columns ScanWebhook reads.
const WebhookColumns = `id, project_id, url, events, secret, disabled_at, failing_since, created_at`

// ScanWebhook reads a row of WebhookColumns.
func ScanWebhook(row Row) (*narrator.Webhook, error) {
	var h narrator.Webhook
	var disabled, failing *time.Time
	if err := row.Scan(&h.ID, &h.ProjectID, &h.URL, &h.Events, &h.Secret, &disabled, &failing, &h.CreatedAt); err != nil {
		return nil, err
	}
	if disabled != nil {
		h.DisabledAt = *disabled
	}
	if failing != nil {
		h.FailingSince = *failing
	}
	return &h, nil
}

func webhookNotFound(id int64) error {
	return narrator.Errorf(narrator.ENOTFOUND, "webhook %d not found", id)
}

// lockProjectSQL finds a project and locks it, which serialises the
// creation of its endpoints, so that their number stays within the limit.
const lockProjectSQL = `SELECT id FROM projects WHERE id = ?`

const countWebhooksSQL = `SELECT COUNT(*) FROM webhooks WHERE project_id = ?`

const insertWebhookSQL = `
INSERT INTO webhooks (project_id, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?)`

// CreateWebhook stores a new endpoint, made by narrator.NewWebhook, and
// fills in its ID and CreatedAt. It returns ENOTFOUND if the project does
// not exist, EINVALID if h is not valid, and ECONFLICT if the project has
// narrator.MaxWebhooksPerProject endpoints already.
func (s *Store) CreateWebhook(ctx context.Context, h *narrator.Webhook) error {
	if err := h.Validate(); err != nil {
		return err
	}
	return s.write(ctx, "create webhook", func(tx Tx) error {
		var err error
		var id int64
		if err := tx.QueryRow(ctx, lockProjectSQL+s.db.ForUpdate(), h.ProjectID).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return narrator.Errorf(narrator.ENOTFOUND, "project %d not found", h.ProjectID)
		} else if err != nil {
			return fmt.Errorf("create webhook in project %d: %w", h.ProjectID, err)
		}
		var n int
		if err := tx.QueryRow(ctx, countWebhooksSQL, h.ProjectID).Scan(&n); err != nil {
			return fmt.Errorf("create webhook in project %d: %w", h.ProjectID, err)
		}
		if n >= narrator.MaxWebhooksPerProject {
			return narrator.Errorf(narrator.ECONFLICT, "a project has at most %d webhooks", narrator.MaxWebhooksPerProject)
		}
		h.CreatedAt = s.now()
		if h.ID, err = tx.Insert(ctx, insertWebhookSQL, h.ProjectID, h.URL, h.Events, h.Secret, h.CreatedAt); err != nil {
			return fmt.Errorf("create webhook in project %d: %w", h.ProjectID, err)
		}
		return nil
	})
}

const listWebhooksSQL = `SELECT ` + WebhookColumns + ` FROM webhooks WHERE project_id = ? ORDER BY id`

// ListWebhooks returns a project's endpoints, oldest first; the slice is
// empty, not nil, when there are none.
func (s *Store) ListWebhooks(ctx context.Context, projectID int64) ([]*narrator.Webhook, error) {
	return ReadV(ctx, s, "list webhooks", func(tx Tx) ([]*narrator.Webhook, error) {
		hooks, err := listWebhooks(ctx, tx, projectID)
		if err != nil {
			return nil, fmt.Errorf("list webhooks of project %d: %w", projectID, err)
		}
		return hooks, nil
	})
}

func listWebhooks(ctx context.Context, tx Tx, projectID int64) ([]*narrator.Webhook, error) {
	return queryAll(ctx, tx, ScanWebhook, listWebhooksSQL, projectID)
}

// queryAll runs query in tx and reads every row of its result with scan,
// as collect does.
func queryAll[T any](ctx context.Context, tx Tx, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

// collect reads every row of rows with scan; the slice is empty, not nil,
// when there are none.
func collect[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

const findWebhookSQL = `SELECT ` + WebhookColumns + ` FROM webhooks WHERE id = ? AND project_id = ?`

// FindWebhook returns an endpoint of a project, or ENOTFOUND.
func (s *Store) FindWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error) {
	return ReadV(ctx, s, fmt.Sprintf("find webhook %d", id), func(tx Tx) (*narrator.Webhook, error) {
		h, err := findWebhook(ctx, tx, projectID, id)
		if err != nil {
			return nil, fmt.Errorf("find webhook %d of project %d: %w", id, projectID, err)
		}
		return h, nil
	})
}

func findWebhook(ctx context.Context, tx Tx, projectID, id int64) (*narrator.Webhook, error) {
	h, err := ScanWebhook(tx.QueryRow(ctx, findWebhookSQL, id, projectID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, webhookNotFound(id)
	}
	return h, err
}

const deleteWebhookSQL = `DELETE FROM webhooks WHERE id = ? AND project_id = ?`

// DeleteWebhook removes an endpoint of a project and its deliveries; jobs
// still queued for them find nothing to do. It returns ENOTFOUND if there
// is no such endpoint.
func (s *Store) DeleteWebhook(ctx context.Context, projectID, id int64) error {
	return s.write(ctx, fmt.Sprintf("delete webhook %d", id), func(tx Tx) error {
		n, err := tx.Exec(ctx, deleteWebhookSQL, id, projectID)
		if err != nil {
			return fmt.Errorf("delete webhook %d: %w", id, err)
		}
		if n == 0 {
			return webhookNotFound(id)
		}
		return nil
	})
}

const setWebhookSecretSQL = `UPDATE webhooks SET secret = ? WHERE id = ? AND project_id = ?`

const enableWebhookSQL = `UPDATE webhooks SET disabled_at = NULL, failing_since = NULL WHERE id = ? AND project_id = ?`

// RotateWebhookSecret gives an endpoint of a project a new secret, made by
// narrator.NewWebhookSecret, and returns the endpoint with it. Attempts
// from then on are signed with it. It returns ENOTFOUND if there is no such
// endpoint.
func (s *Store) RotateWebhookSecret(ctx context.Context, projectID, id int64, secret string) (*narrator.Webhook, error) {
	if _, err := narrator.WebhookSecretKey(secret); err != nil {
		return nil, err
	}
	return s.changeWebhook(ctx, projectID, id, "rotate secret of", setWebhookSecretSQL, secret)
}

// EnableWebhook enables an endpoint of a project again and restarts its
// failure clock, and returns it. It returns ENOTFOUND if there is no such
// endpoint.
func (s *Store) EnableWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error) {
	return s.changeWebhook(ctx, projectID, id, "enable", enableWebhookSQL)
}

// changeWebhook runs an update of one endpoint, whose last two arguments
// are its ID and project, and returns the endpoint as updated.
func (s *Store) changeWebhook(ctx context.Context, projectID, id int64, what, query string, args ...any) (*narrator.Webhook, error) {
	return WriteV(ctx, s, fmt.Sprintf("%s webhook %d", what, id), func(tx Tx) (*narrator.Webhook, error) {
		if _, err := tx.Exec(ctx, query, append(args, id, projectID)...); err != nil {
			return nil, fmt.Errorf("%s webhook %d: %w", what, id, err)
		}
		h, err := findWebhook(ctx, tx, projectID, id)
		if err != nil {
			return nil, fmt.Errorf("%s webhook %d: %w", what, id, err)
		}
		return h, nil
	})
}

// Raise delivers e, an audio's event (nil for none), to the endpoints of
// its project that want it, inside the change's transaction tx of the
// store s: the last step of narrator.Effects (narrator.StepDeliveries).
func Raise(ctx context.Context, s *Store, tx Tx, e *narrator.Event) error {
	if e == nil {
		return nil
	}
	hooks, err := listWebhooks(ctx, tx, e.ProjectID)
	if err != nil {
		return fmt.Errorf("raise %s: %w", e.Type, err)
	}
	if _, err := s.deliver(ctx, tx, e, hooks, false); err != nil {
		return fmt.Errorf("raise %s: %w", e.Type, err)
	}
	return nil
}

const insertDeliverySQL = `
INSERT INTO webhook_deliveries (webhook_id, message_id, event, audio_id, body, state, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`

// pruneDeliveriesSQL removes an endpoint's finished deliveries beyond the
// newest narrator.MaxDeliveriesListed.
const pruneDeliveriesSQL = `
DELETE FROM webhook_deliveries
WHERE webhook_id = ? AND state <> 'pending' AND id <= (
	SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`

// deliver writes the deliveries of e to those of hooks that want it
// (narrator.PlanDeliveries), each with its job, and returns them. Each
// endpoint first makes room (makeRoom): refuse says whether a full one
// refuses the delivery or collapses its oldest pending.
func (s *Store) deliver(ctx context.Context, tx Tx, e *narrator.Event, hooks []*narrator.Webhook, refuse bool) ([]*narrator.WebhookDelivery, error) {
	ds, err := narrator.PlanDeliveries(e, hooks, s.body)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if err := s.makeRoom(ctx, tx, d.WebhookID, refuse); err != nil {
			return nil, err
		}
		if d.ID, err = tx.Insert(ctx, insertDeliverySQL, d.WebhookID, d.MessageID, d.Event, NullInt(d.AudioID), d.Body,
			d.State, d.CreatedAt); err != nil {
			return nil, fmt.Errorf("insert delivery to webhook %d: %w", d.WebhookID, err)
		}
		if _, err := tx.Exec(ctx, pruneDeliveriesSQL, d.WebhookID, d.WebhookID, narrator.MaxDeliveriesListed); err != nil {
			return nil, fmt.Errorf("prune deliveries of webhook %d: %w", d.WebhookID, err)
		}
		if err := s.db.Enqueue(ctx, tx, narrator.WebhookJob{DeliveryID: d.ID}); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// TestWebhook queues a narrator.EventWebhookTest delivery to an endpoint of
// a project, disabled or not, and returns it. It returns ENOTFOUND if there
// is no such endpoint, and ERATELIMITED if it has
// narrator.MaxPendingDeliveries pending.
func (s *Store) TestWebhook(ctx context.Context, projectID, id int64) (*narrator.WebhookDelivery, error) {
	return WriteV(ctx, s, fmt.Sprintf("test webhook %d", id), func(tx Tx) (*narrator.WebhookDelivery, error) {
		h, err := findWebhook(ctx, tx, projectID, id)
		if err != nil {
			return nil, fmt.Errorf("test webhook %d: %w", id, err)
		}
		e := &narrator.Event{Type: narrator.EventWebhookTest, ProjectID: projectID, CreatedAt: s.now()}
		ds, err := s.deliver(ctx, tx, e, []*narrator.Webhook{h}, true)
		if err != nil {
			return nil, fmt.Errorf("test webhook %d: %w", id, err)
		}
		return ds[0], nil
	})
}

const deliveryColumns = `d.id, d.webhook_id, d.message_id, d.event, d.audio_id, d.body, d.state, d.attempts,
	d.response_code, d.last_error, d.created_at, d.last_attempt_at`

func scanDelivery(row Row) (*narrator.WebhookDelivery, error) {
	var d narrator.WebhookDelivery
	var audioID *int64
	var last *time.Time
	if err := row.Scan(&d.ID, &d.WebhookID, &d.MessageID, &d.Event, &audioID, &d.Body, &d.State, &d.Attempts,
		&d.ResponseCode, &d.LastError, &d.CreatedAt, &last); err != nil {
		return nil, err
	}
	if audioID != nil {
		d.AudioID = *audioID
	}
	if last != nil {
		d.LastAttemptAt = *last
	}
	return &d, nil
}

const listDeliveriesSQL = `
SELECT ` + deliveryColumns + `
FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
WHERE d.webhook_id = ? AND w.project_id = ?
ORDER BY d.id DESC
LIMIT ?`

// ListDeliveries returns up to limit of the latest deliveries to an
// endpoint of a project, newest first; the slice is empty, not nil, when
// there are none. It returns ENOTFOUND if there is no such endpoint.
func (s *Store) ListDeliveries(ctx context.Context, projectID, webhookID int64, limit int) ([]*narrator.WebhookDelivery, error) {
	return ReadV(ctx, s, "list deliveries", func(tx Tx) ([]*narrator.WebhookDelivery, error) {
		if _, err := findWebhook(ctx, tx, projectID, webhookID); err != nil {
			return nil, fmt.Errorf("list deliveries of webhook %d: %w", webhookID, err)
		}
		out, err := queryAll(ctx, tx, scanDelivery, listDeliveriesSQL, webhookID, projectID, limit)
		if err != nil {
			return nil, fmt.Errorf("list deliveries of webhook %d: %w", webhookID, err)
		}
		return out, nil
	})
}

const findDeliverySQL = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d WHERE d.id = ?`

func findDelivery(ctx context.Context, tx Tx, id int64, lock string) (*narrator.WebhookDelivery, error) {
	d, err := scanDelivery(tx.QueryRow(ctx, findDeliverySQL+lock, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "delivery %d not found", id)
	}
	return d, err
}

const resendDeliverySQL = `UPDATE webhook_deliveries SET state = 'pending' WHERE id = ?`

// ResendDelivery makes a delivery to an endpoint of a project pending again
// and queues another attempt, with the same message ID and body, and
// returns it. It returns ENOTFOUND if there is no such delivery, and
// ERATELIMITED if it is not pending and the endpoint has
// narrator.MaxPendingDeliveries pending.
func (s *Store) ResendDelivery(ctx context.Context, projectID, webhookID, deliveryID int64) (*narrator.WebhookDelivery, error) {
	return WriteV(ctx, s, fmt.Sprintf("resend delivery %d", deliveryID), func(tx Tx) (*narrator.WebhookDelivery, error) {
		if _, err := findWebhook(ctx, tx, projectID, webhookID); err != nil {
			return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
		}
		d, err := findDelivery(ctx, tx, deliveryID, s.db.ForUpdate())
		if err == nil && d.WebhookID != webhookID {
			err = narrator.Errorf(narrator.ENOTFOUND, "delivery %d not found", deliveryID)
		}
		if err != nil {
			return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
		}
		if d.State != narrator.DeliveryPending {
			if err := s.makeRoom(ctx, tx, webhookID, true); err != nil {
				return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
			}
		}
		if _, err := tx.Exec(ctx, resendDeliverySQL, deliveryID); err != nil {
			return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
		}
		if err := s.db.Enqueue(ctx, tx, narrator.WebhookJob{DeliveryID: deliveryID}); err != nil {
			return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
		}
		d.State = narrator.DeliveryPending
		return d, nil
	})
}

const findWebhookByIDSQL = `SELECT ` + WebhookColumns + ` FROM webhooks WHERE id = ?`

// DeliveryForAttempt returns a delivery and its endpoint, secret included,
// for the worker that attempts it. It returns ENOTFOUND if the delivery is
// gone (its endpoint was removed).
func (s *Store) DeliveryForAttempt(ctx context.Context, deliveryID int64) (*narrator.WebhookDelivery, *narrator.Webhook, error) {
	var d *narrator.WebhookDelivery
	var h *narrator.Webhook
	err := s.read(ctx, fmt.Sprintf("delivery %d", deliveryID), func(tx Tx) error {
		var err error
		if d, err = findDelivery(ctx, tx, deliveryID, ""); err != nil {
			return fmt.Errorf("delivery %d: %w", deliveryID, err)
		}
		if h, err = ScanWebhook(tx.QueryRow(ctx, findWebhookByIDSQL, d.WebhookID)); err != nil {
			return fmt.Errorf("delivery %d: webhook %d: %w", deliveryID, d.WebhookID, err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return d, h, nil

}

const recordAttemptSQL = `
UPDATE webhook_deliveries
SET state = ?, attempts = attempts + 1, response_code = ?, last_error = ?, last_attempt_at = ?
WHERE id = ?`

const setWebhookHealthSQL = `
UPDATE webhooks SET failing_since = ?, disabled_at = COALESCE(disabled_at, ?) WHERE id = ?`

// RecordAttempt records an attempt at a delivery on it and on its endpoint,
// as narrator.PlanAttempt decides, and returns the plan. It returns
// ENOTFOUND if the delivery is gone. The endpoint is locked, so that
// attempts on many nodes keep one failure clock.
func (s *Store) RecordAttempt(ctx context.Context, deliveryID int64, a narrator.WebhookAttempt) (narrator.AttemptPlan, error) {
	return WriteV(ctx, s, fmt.Sprintf("record attempt at delivery %d", deliveryID), func(tx Tx) (narrator.AttemptPlan, error) {
		d, err := findDelivery(ctx, tx, deliveryID, "")
		if err != nil {
			return narrator.AttemptPlan{}, fmt.Errorf("record attempt at delivery %d: %w", deliveryID, err)
		}
		h, err := ScanWebhook(tx.QueryRow(ctx, findWebhookByIDSQL+s.db.ForUpdate(), d.WebhookID))
		if err != nil {
			return narrator.AttemptPlan{}, fmt.Errorf("record attempt at delivery %d: %w", deliveryID, err)
		}
		plan := narrator.PlanAttempt(h, a)
		at := a.At.UTC().Truncate(time.Microsecond)
		if _, err := tx.Exec(ctx, recordAttemptSQL, plan.State, a.ResponseCode, a.Error, at, deliveryID); err != nil {
			return plan, fmt.Errorf("record attempt at delivery %d: %w", deliveryID, err)
		}
		var disabled *time.Time
		if plan.Disable {
			disabled = &at
		}
		if _, err := tx.Exec(ctx, setWebhookHealthSQL, NullTime(plan.FailingSince), disabled, h.ID); err != nil {
			return plan, fmt.Errorf("record attempt at delivery %d: %w", deliveryID, err)
		}
		return plan, nil
	})
}
