package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of users and sessions are sqlstore's; ExportMeta reads users
// here.

// scanUser reads a row of sqlstore.UserColumns.
func scanUser(row pgx.Row) (*narrator.User, error) {
	return sqlstore.ScanUser(utcRow{row})
}
