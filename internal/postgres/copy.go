package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// lastIDsSQL reads the last value of each table's identity sequence: the
// highest ID the table has given, deleted rows included (a sequence never
// goes back, even when its transaction rolls back). A sequence never used
// has none.
const lastIDsSQL = `
SELECT
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('accounts', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('api_keys', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('projects', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('audios', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('media', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('users', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('pronunciations', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('webhooks', 'id')::regclass), 0),
	COALESCE(pg_sequence_last_value(pg_get_serial_sequence('sources', 'id')::regclass), 0)`

// lastIDs reads lastIDsSQL in tx.
func lastIDs(ctx context.Context, tx pgx.Tx) (narrator.LastIDs, error) {
	var ids narrator.LastIDs
	err := tx.QueryRow(ctx, lastIDsSQL).Scan(&ids.Account, &ids.APIKey, &ids.Project, &ids.Audio, &ids.Media,
		&ids.User, &ids.Pronunciation, &ids.Webhook, &ids.Source)
	return ids, err
}

// raiseSequenceSQL moves the identity sequence of table $1 to $2 unless it
// is there or past it already.
const raiseSequenceSQL = `
SELECT setval(pg_get_serial_sequence($1, 'id'), $2::bigint)
WHERE $2::bigint > COALESCE(pg_sequence_last_value(pg_get_serial_sequence($1, 'id')::regclass), 0)`

// raiseSequence moves the identity sequence of a table up to last, if it is
// lower, so that the table's next ID is past last.
func raiseSequence(ctx context.Context, tx pgx.Tx, table string, last int64) error {
	if last <= 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, raiseSequenceSQL, table, last); err != nil {
		return fmt.Errorf("raise id sequence of %s: %w", table, err)
	}
	return nil
}
