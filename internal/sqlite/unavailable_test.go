package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/narrator/narrator"
)

// TestUnavailable checks that an error of SQLite's saying that the database
// cannot be used for now (here SQLITE_BUSY: another process holds the write
// lock) is narrator.EUNAVAILABLE, and that other errors keep their code.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "narrator.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(1)&_pragma=journal_mode(WAL)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	holder, other := open(), open()
	if _, err := holder.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = other.Begin()
	if err == nil {
		t.Fatal("a second writer began while the first held the lock")
	}
	if code := narrator.ErrorCode(unavailable(err)); code != narrator.EUNAVAILABLE {
		t.Errorf("busy: %v has code %q, want %s", err, code, narrator.EUNAVAILABLE)
	}
	if _, err := tx.Exec(`INSERT INTO t (id) VALUES (1), (1)`); err == nil {
		t.Fatal("a duplicate key was inserted")
	} else if code := narrator.ErrorCode(unavailable(err)); code != narrator.EINTERNAL {
		t.Errorf("constraint: %v has code %q, want %s", err, code, narrator.EINTERNAL)
	}
}
