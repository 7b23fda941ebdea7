package sqlite

import (
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The methods of accounts and API keys are sqlstore's; ExportMeta reads
// accounts here.

// scanAccount reads a row of an account's id, name and created_at.
func scanAccount(sc interface{ Scan(...any) error }) (*narrator.Account, error) {
	return sqlstore.ScanAccount(decoded{sc})
}
