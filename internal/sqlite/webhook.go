package sqlite

import (
	"database/sql"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The webhook methods are sqlstore's; ExportMeta and ImportMeta read and
// write endpoints here.

// scanWebhook reads a row of sqlstore.WebhookColumns.
func scanWebhook(sc interface{ Scan(...any) error }) (*narrator.Webhook, error) {
	return sqlstore.ScanWebhook(decoded{sc})
}

// nullMicros maps the zero time to NULL.
func nullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}
