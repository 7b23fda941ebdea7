package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The webhook methods are sqlstore's; ExportMeta and ImportMeta read and
// write endpoints here.

// scanWebhook reads a row of sqlstore.WebhookColumns.
func scanWebhook(row pgx.Row) (*narrator.Webhook, error) {
	return sqlstore.ScanWebhook(utcRow{row})
}

// nullTime maps the zero time to NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
