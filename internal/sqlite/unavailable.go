package sqlite

import (
	"database/sql"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/narrator/narrator"
)

// unavailable returns err marked narrator.EUNAVAILABLE when it says that
// the database cannot be used for now: the disk failed (SQLITE_IOERR) or is
// full (SQLITE_FULL), the file cannot be opened (SQLITE_CANTOPEN), or
// another process held the write lock past BusyTimeout (SQLITE_BUSY,
// SQLITE_LOCKED). Other errors are returned as they are.
func unavailable(err error) error {
	var e *sqlite.Error
	if err == nil || !errors.As(err, &e) || narrator.ErrorCode(err) != narrator.EINTERNAL {
		return err
	}
	switch e.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return narrator.Unavailable(err)
	}
	return err
}

// commit commits tx; an error that says the database cannot be used for
// now is narrator.EUNAVAILABLE.
func commit(tx *sql.Tx) error { return unavailable(tx.Commit()) }
