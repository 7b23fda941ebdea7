package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
)

// Snapshot writes a consistent copy of the database file at src into the
// new file dst, while servers and commands may be writing to src.
//
// It runs VACUUM INTO on a connection of its own, which reads src in one
// read transaction: WAL lets writers go on meanwhile, and the copy holds
// exactly the transactions committed when that read began, so no commit is
// ever half in it. It takes no write lock on src and never creates it.
// The copy is fsynced (SQLite does not sync VACUUM INTO's output), with
// its directory, and checked with PRAGMA quick_check before Snapshot
// returns. dst must not exist; on error it is removed.
func Snapshot(ctx context.Context, src, dst string) error {
	if err := snapshot(ctx, src, dst); err != nil {
		return fmt.Errorf("snapshot %s into %s: %w", src, dst, err)
	}
	return nil
}

func snapshot(ctx context.Context, src, dst string) (err error) {
	if _, err := os.Stat(src); err != nil {
		return err
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s exists", dst)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(dst)
		}
	}()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(BusyTimeout.Milliseconds(), 10)+")")
	db, err := sql.Open("sqlite", src+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return fmt.Errorf("vacuum into: %w", err)
	}
	if err := db.Close(); err != nil {
		return err
	}
	if err := syncFile(dst); err != nil {
		return err
	}
	if err := syncFile(filepath.Dir(dst)); err != nil {
		return err
	}
	return quickCheck(ctx, dst)
}

// quickCheck runs PRAGMA quick_check on the database file at path.
func quickCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(ON)")
	if err != nil {
		return err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&result); err != nil {
		return fmt.Errorf("quick_check: %w", err)
	}
	if result != "ok" {
		return fmt.Errorf("quick_check: %s", result)
	}
	return nil
}

// syncFile fsyncs the file or directory at path.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}
