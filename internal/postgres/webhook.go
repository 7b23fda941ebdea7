package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

const webhookColumns = `id, project_id, url, events, secret, disabled_at, failing_since, created_at`

func scanWebhook(row pgx.Row) (*narrator.Webhook, error) {
	var h narrator.Webhook
	var disabled, failing *time.Time
	if err := row.Scan(&h.ID, &h.ProjectID, &h.URL, &h.Events, &h.Secret, &disabled, &failing, &h.CreatedAt); err != nil {
		return nil, err
	}
	if disabled != nil {
		h.DisabledAt = disabled.UTC()
	}
	if failing != nil {
		h.FailingSince = failing.UTC()
	}
	h.CreatedAt = h.CreatedAt.UTC()
	return &h, nil
}

// nullTime maps the zero time to NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func webhookNotFound(id int64) error {
	return narrator.Errorf(narrator.ENOTFOUND, "webhook %d not found", id)
}

// lockProjectSQL serialises the creation of a project's endpoints, so
// that their number stays within the limit.
const lockProjectSQL = `SELECT id FROM projects WHERE id = $1 FOR UPDATE`

const countWebhooksSQL = `SELECT COUNT(*) FROM webhooks WHERE project_id = $1`

const insertWebhookSQL = `
INSERT INTO webhooks (project_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5)
RETURNING id`

// CreateWebhook stores a new endpoint, made by narrator.NewWebhook, and
// fills in its ID and CreatedAt. It returns ENOTFOUND if the project does
// not exist, EINVALID if h is not valid, and ECONFLICT if the project has
// narrator.MaxWebhooksPerProject endpoints already.
func (s *Store) CreateWebhook(ctx context.Context, h *narrator.Webhook) error {
	if err := h.Validate(); err != nil {
		return err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	defer rollback(ctx, tx)
	var id int64
	if err := tx.QueryRow(ctx, lockProjectSQL, h.ProjectID).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
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
	if err := tx.QueryRow(ctx, insertWebhookSQL, h.ProjectID, h.URL, h.Events, h.Secret, h.CreatedAt).Scan(&h.ID); err != nil {
		return fmt.Errorf("create webhook in project %d: %w", h.ProjectID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create webhook in project %d: commit: %w", h.ProjectID, err)
	}
	return nil
}

const listWebhooksSQL = `SELECT ` + webhookColumns + ` FROM webhooks WHERE project_id = $1 ORDER BY id`

// ListWebhooks returns a project's endpoints, oldest first; the slice is
// empty, not nil, when there are none.
func (s *Store) ListWebhooks(ctx context.Context, projectID int64) ([]*narrator.Webhook, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	defer rollback(ctx, tx)
	hooks, err := listWebhooks(ctx, tx, projectID)
	if err != nil {
		return nil, fmt.Errorf("list webhooks of project %d: %w", projectID, err)
	}
	return hooks, nil
}

func listWebhooks(ctx context.Context, tx pgx.Tx, projectID int64) ([]*narrator.Webhook, error) {
	rows, err := tx.Query(ctx, listWebhooksSQL, projectID)
	if err != nil {
		return nil, err
	}
	hooks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*narrator.Webhook, error) { return scanWebhook(row) })
	if err != nil {
		return nil, err
	}
	if hooks == nil {
		hooks = []*narrator.Webhook{}
	}
	return hooks, nil
}

const findWebhookSQL = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id = $1 AND project_id = $2`

// FindWebhook returns an endpoint of a project, or ENOTFOUND.
func (s *Store) FindWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find webhook %d: %w", id, err)
	}
	defer rollback(ctx, tx)
	h, err := findWebhook(ctx, tx, projectID, id, noLock)
	if err != nil {
		return nil, fmt.Errorf("find webhook %d of project %d: %w", id, projectID, err)
	}
	return h, nil
}

func findWebhook(ctx context.Context, tx pgx.Tx, projectID, id int64, lock rowLock) (*narrator.Webhook, error) {
	h, err := scanWebhook(tx.QueryRow(ctx, findWebhookSQL+string(lock), id, projectID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, webhookNotFound(id)
	}
	return h, err
}

const deleteWebhookSQL = `DELETE FROM webhooks WHERE id = $1 AND project_id = $2`

// DeleteWebhook removes an endpoint of a project and its deliveries; jobs
// still queued for them find nothing to do. It returns ENOTFOUND if there
// is no such endpoint.
func (s *Store) DeleteWebhook(ctx context.Context, projectID, id int64) error {
	tag, err := s.exec(ctx, deleteWebhookSQL, id, projectID)
	if err != nil {
		return fmt.Errorf("delete webhook %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return webhookNotFound(id)
	}
	return nil
}

const setWebhookSecretSQL = `UPDATE webhooks SET secret = $1 WHERE id = $2 AND project_id = $3`

const enableWebhookSQL = `UPDATE webhooks SET disabled_at = NULL, failing_since = NULL WHERE id = $1 AND project_id = $2`

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
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s webhook %d: %w", what, id, err)
	}
	defer rollback(ctx, tx)
	if _, err := tx.Exec(ctx, query, append(args, id, projectID)...); err != nil {
		return nil, fmt.Errorf("%s webhook %d: %w", what, id, err)
	}
	h, err := findWebhook(ctx, tx, projectID, id, noLock)
	if err != nil {
		return nil, fmt.Errorf("%s webhook %d: %w", what, id, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("%s webhook %d: commit: %w", what, id, err)
	}
	return h, nil
}

// raise delivers e, an audio's event (nil for none), to the project's
// endpoints that want it, inside the change's transaction.
func (s *Store) raise(ctx context.Context, tx pgx.Tx, e *narrator.Event) error {
	if e == nil {
		return nil
	}
	hooks, err := listWebhooks(ctx, tx, e.ProjectID)
	if err != nil {
		return fmt.Errorf("raise %s: %w", e.Type, err)
	}
	if _, err := s.deliver(ctx, tx, e, hooks); err != nil {
		return fmt.Errorf("raise %s: %w", e.Type, err)
	}
	return nil
}

const insertDeliverySQL = `
INSERT INTO webhook_deliveries (webhook_id, message_id, event, audio_id, body, state, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id`

// pruneDeliveriesSQL removes an endpoint's finished deliveries beyond the
// newest narrator.MaxDeliveriesListed.
const pruneDeliveriesSQL = `
DELETE FROM webhook_deliveries
WHERE webhook_id = $1 AND state <> 'pending' AND id <= (
	SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`

// deliver writes the deliveries of e to those of hooks that want it
// (narrator.PlanDeliveries), each with its job, and returns them.
func (s *Store) deliver(ctx context.Context, tx pgx.Tx, e *narrator.Event, hooks []*narrator.Webhook) ([]*narrator.WebhookDelivery, error) {
	ds, err := narrator.PlanDeliveries(e, hooks, s.body)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		var audioID *int64
		if d.AudioID != 0 {
			audioID = &d.AudioID
		}
		if err := tx.QueryRow(ctx, insertDeliverySQL, d.WebhookID, d.MessageID, d.Event, audioID, d.Body, d.State,
			d.CreatedAt).Scan(&d.ID); err != nil {
			return nil, fmt.Errorf("insert delivery to webhook %d: %w", d.WebhookID, err)
		}
		if _, err := tx.Exec(ctx, pruneDeliveriesSQL, d.WebhookID, narrator.MaxDeliveriesListed); err != nil {
			return nil, fmt.Errorf("prune deliveries of webhook %d: %w", d.WebhookID, err)
		}
		if err := s.enqueue(ctx, tx, narrator.WebhookJob{DeliveryID: d.ID}); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// TestWebhook queues a narrator.EventWebhookTest delivery to an endpoint of
// a project, disabled or not, and returns it. It returns ENOTFOUND if there
// is no such endpoint.
func (s *Store) TestWebhook(ctx context.Context, projectID, id int64) (*narrator.WebhookDelivery, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("test webhook %d: %w", id, err)
	}
	defer rollback(ctx, tx)
	h, err := findWebhook(ctx, tx, projectID, id, noLock)
	if err != nil {
		return nil, fmt.Errorf("test webhook %d: %w", id, err)
	}
	e := &narrator.Event{Type: narrator.EventWebhookTest, ProjectID: projectID, CreatedAt: s.now()}
	ds, err := s.deliver(ctx, tx, e, []*narrator.Webhook{h})
	if err != nil {
		return nil, fmt.Errorf("test webhook %d: %w", id, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("test webhook %d: commit: %w", id, err)
	}
	return ds[0], nil
}

const deliveryColumns = `d.id, d.webhook_id, d.message_id, d.event, d.audio_id, d.body, d.state, d.attempts,
	d.response_code, d.last_error, d.created_at, d.last_attempt_at`

func scanDelivery(row pgx.Row) (*narrator.WebhookDelivery, error) {
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
	d.CreatedAt = d.CreatedAt.UTC()
	if last != nil {
		d.LastAttemptAt = last.UTC()
	}
	return &d, nil
}

const listDeliveriesSQL = `
SELECT ` + deliveryColumns + `
FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
WHERE d.webhook_id = $1 AND w.project_id = $2
ORDER BY d.id DESC
LIMIT $3`

// ListDeliveries returns up to limit of the latest deliveries to an
// endpoint of a project, newest first; the slice is empty, not nil, when
// there are none. It returns ENOTFOUND if there is no such endpoint.
func (s *Store) ListDeliveries(ctx context.Context, projectID, webhookID int64, limit int) ([]*narrator.WebhookDelivery, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	defer rollback(ctx, tx)
	if _, err := findWebhook(ctx, tx, projectID, webhookID, noLock); err != nil {
		return nil, fmt.Errorf("list deliveries of webhook %d: %w", webhookID, err)
	}
	rows, err := tx.Query(ctx, listDeliveriesSQL, webhookID, projectID, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of webhook %d: %w", webhookID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*narrator.WebhookDelivery, error) { return scanDelivery(row) })
	if err != nil {
		return nil, fmt.Errorf("list deliveries of webhook %d: %w", webhookID, err)
	}
	if out == nil {
		out = []*narrator.WebhookDelivery{}
	}
	return out, nil
}

const findDeliverySQL = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d WHERE d.id = $1`

func findDelivery(ctx context.Context, tx pgx.Tx, id int64, lock rowLock) (*narrator.WebhookDelivery, error) {
	d, err := scanDelivery(tx.QueryRow(ctx, findDeliverySQL+string(lock), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "delivery %d not found", id)
	}
	return d, err
}

const resendDeliverySQL = `UPDATE webhook_deliveries SET state = 'pending' WHERE id = $1`

// ResendDelivery makes a delivery to an endpoint of a project pending again
// and queues another attempt, with the same message ID and body, and
// returns it. It returns ENOTFOUND if there is no such delivery.
func (s *Store) ResendDelivery(ctx context.Context, projectID, webhookID, deliveryID int64) (*narrator.WebhookDelivery, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
	}
	defer rollback(ctx, tx)
	if _, err := findWebhook(ctx, tx, projectID, webhookID, noLock); err != nil {
		return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
	}
	d, err := findDelivery(ctx, tx, deliveryID, forUpdate)
	if err == nil && d.WebhookID != webhookID {
		err = narrator.Errorf(narrator.ENOTFOUND, "delivery %d not found", deliveryID)
	}
	if err != nil {
		return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
	}
	if _, err := tx.Exec(ctx, resendDeliverySQL, deliveryID); err != nil {
		return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
	}
	if err := s.enqueue(ctx, tx, narrator.WebhookJob{DeliveryID: deliveryID}); err != nil {
		return nil, fmt.Errorf("resend delivery %d: %w", deliveryID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("resend delivery %d: commit: %w", deliveryID, err)
	}
	d.State = narrator.DeliveryPending
	return d, nil
}

const findWebhookByIDSQL = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id = $1`

// DeliveryForAttempt returns a delivery and its endpoint, secret included,
// for the worker that attempts it. It returns ENOTFOUND if the delivery is
// gone (its endpoint was removed).
func (s *Store) DeliveryForAttempt(ctx context.Context, deliveryID int64) (*narrator.WebhookDelivery, *narrator.Webhook, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("delivery %d: %w", deliveryID, err)
	}
	defer rollback(ctx, tx)
	d, err := findDelivery(ctx, tx, deliveryID, noLock)
	if err != nil {
		return nil, nil, fmt.Errorf("delivery %d: %w", deliveryID, err)
	}
	h, err := scanWebhook(tx.QueryRow(ctx, findWebhookByIDSQL, d.WebhookID))
	if err != nil {
		return nil, nil, fmt.Errorf("delivery %d: webhook %d: %w", deliveryID, d.WebhookID, err)
	}
	return d, h, nil
}

const recordAttemptSQL = `
UPDATE webhook_deliveries
SET state = $1, attempts = attempts + 1, response_code = $2, last_error = $3, last_attempt_at = $4
WHERE id = $5`

const setWebhookHealthSQL = `
UPDATE webhooks SET failing_since = $1, disabled_at = COALESCE(disabled_at, $2) WHERE id = $3`

// RecordAttempt records an attempt at a delivery on it and on its endpoint,
// as narrator.PlanAttempt decides, and returns the plan. It returns
// ENOTFOUND if the delivery is gone. The endpoint is locked, so that
// attempts on many nodes keep one failure clock.
func (s *Store) RecordAttempt(ctx context.Context, deliveryID int64, a narrator.WebhookAttempt) (narrator.AttemptPlan, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return narrator.AttemptPlan{}, fmt.Errorf("record attempt at delivery %d: %w", deliveryID, err)
	}
	defer rollback(ctx, tx)
	d, err := findDelivery(ctx, tx, deliveryID, noLock)
	if err != nil {
		return narrator.AttemptPlan{}, fmt.Errorf("record attempt at delivery %d: %w", deliveryID, err)
	}
	h, err := scanWebhook(tx.QueryRow(ctx, findWebhookByIDSQL+string(forUpdate), d.WebhookID))
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
	if _, err := tx.Exec(ctx, setWebhookHealthSQL, nullTime(plan.FailingSince), disabled, h.ID); err != nil {
		return plan, fmt.Errorf("record attempt at delivery %d: %w", deliveryID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return plan, fmt.Errorf("record attempt at delivery %d: commit: %w", deliveryID, err)
	}
	return plan, nil
}
