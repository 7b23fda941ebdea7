package sqlite

import (
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of users and sessions are sqlstore's; ExportMeta reads users
// here.

// scanUser reads a row of sqlstore.UserColumns.
func scanUser(sc interface{ Scan(...any) error }) (*narrator.User, error) {
	return sqlstore.ScanUser(decoded{sc})
}
