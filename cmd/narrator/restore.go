package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/localfs"
)

// restoreCommand is `narrator restore`.
type restoreCommand struct{ e *env }

// Run runs `narrator restore`.
func (cmd restoreCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "restore", "restore --from DIR [--data DIR] [--database sqlite:PATH] [--media file:DIR]")
	from := fs.String("from", "", "`dir`ectory of a backup made by narrator backup (required)")
	finish := config.BackendFlags(fs, e.getenv)
	if err := parse(fs, args); err != nil {
		return err
	}
	b, err := finish()
	if err != nil {
		return usagef("restore: %v", err)
	}
	if *from == "" {
		return required(fs, "from")
	}
	if err := notEmbedded(b); err != nil {
		return usagef("restore: %v (restore into sqlite: and file:, then move the data with narrator copy-data)", err)
	}
	m, err := readManifest(*from)
	if err != nil {
		return usagef("restore: --from: %v", err)
	}
	_, dbPath, _ := config.ParseDatabase(b.Database)
	_, mediaDir, _ := config.ParseMedia(b.Media)
	if err := os.MkdirAll(b.DataDir, 0o750); err != nil {
		return fmt.Errorf("restore: create data directory: %w", err)
	}
	// The locks a server takes: none may start on the target meanwhile.
	cfg := config.Config{Backends: b}
	unlock, err := lockFile(cfg.LockPath())
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer unlock()
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o750); err != nil {
		return fmt.Errorf("restore: create database directory: %w", err)
	}
	unlockDB, err := lockFile(dbPath + ".lock")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer unlockDB()
	for _, p := range []string{dbPath, dbPath + "-wal"} {
		if _, err := os.Lstat(p); err == nil {
			return usagef("restore: %s exists; restore into a new --data, --database and --media", p)
		}
	}
	if err := emptyDir(mediaDir); err != nil {
		return usagef("restore: --media: %v; restore into a new --data, --database and --media", err)
	}
	files, n, err := restoreMedia(ctx, filepath.Join(*from, backupMedia), mediaDir)
	if err != nil {
		return fmt.Errorf("restore: media: %w", err)
	}
	if files != m.MediaFiles || n != m.MediaBytes {
		return fmt.Errorf("restore: the backup's media directory holds %d files (%d bytes), its manifest %d (%d bytes)", files, n, m.MediaFiles, m.MediaBytes)
	}
	// The database last: a restore cut short leaves none to serve.
	sum, err := fileSHA256(filepath.Join(*from, backupDatabase))
	if err != nil {
		return fmt.Errorf("restore: database: %w", err)
	}
	if sum != m.SHA256 {
		return fmt.Errorf("restore: %s does not match the SHA-256 of its manifest: the backup is damaged", filepath.Join(*from, backupDatabase))
	}
	src, err := os.Open(filepath.Join(*from, backupDatabase))
	if err != nil {
		return fmt.Errorf("restore: database: %w", err)
	}
	defer src.Close()
	if err := copyFileSync(dbPath, src); err != nil {
		return fmt.Errorf("restore: database: %w", err)
	}
	fmt.Fprintf(e.stdout, "restored the backup of %s (%s) into %s and %s: %d audios, %d media files; start narrator serve on them\n",
		m.Created.Format("2006-01-02 15:04:05Z"), m.Source, dbPath, mediaDir, m.Audios, files)
	return nil
}

// restoreMedia copies every file of the backup's media directory into the
// media store at dir, each written durably, and counts them.
func restoreMedia(ctx context.Context, from, dir string) (files int, bytes int64, err error) {
	dst, err := localfs.New(dir)
	if err != nil {
		return 0, 0, err
	}
	err = filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := dst.Put(ctx, filepath.ToSlash(rel), f); err != nil {
			return err
		}
		info, err := f.Stat()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) && files == 0 {
		return 0, 0, nil // a backup of an install without media
	}
	return files, bytes, err
}
