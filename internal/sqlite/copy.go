package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/narrator/narrator"
)

// lastIDsSQL reads the counters of the AUTOINCREMENT tables: the highest
// ID each table has ever held, deleted rows included. A table that never
// held a row has none.
const lastIDsSQL = `SELECT name, seq FROM sqlite_sequence`

// idCounters maps the tables whose IDs an import preserves to their field
// of narrator.LastIDs.
func idCounters(ids *narrator.LastIDs) map[string]*int64 {
	return map[string]*int64{
		"accounts":       &ids.Account,
		"api_keys":       &ids.APIKey,
		"projects":       &ids.Project,
		"audios":         &ids.Audio,
		"media":          &ids.Media,
		"users":          &ids.User,
		"pronunciations": &ids.Pronunciation,
		"webhooks":       &ids.Webhook,
		"sources":        &ids.Source,
	}
}

func lastIDs(ctx context.Context, tx *sql.Tx) (narrator.LastIDs, error) {
	var ids narrator.LastIDs
	counters := idCounters(&ids)
	rows, err := tx.QueryContext(ctx, lastIDsSQL)
	if err != nil {
		return ids, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			return ids, err
		}
		if p := counters[name]; p != nil {
			*p = seq
		}
	}
	return ids, rows.Err()
}

const (
	raiseCounterSQL = `UPDATE sqlite_sequence SET seq = ? WHERE name = ? AND seq < ?`
	addCounterSQL   = `
INSERT INTO sqlite_sequence (name, seq) SELECT ?, ?
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)`
)

// raiseCounter moves the AUTOINCREMENT counter of a table up to last, if it
// is lower, so that the table's next ID is past last.
func raiseCounter(ctx context.Context, tx *sql.Tx, table string, last int64) error {
	if last <= 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, raiseCounterSQL, last, table, last); err != nil {
		return fmt.Errorf("raise id counter of %s: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, addCounterSQL, table, last, table); err != nil {
		return fmt.Errorf("raise id counter of %s: %w", table, err)
	}
	return nil
}
