package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/sqlite"
)

// A backup directory holds the database snapshot, the media and, written
// last, the manifest: a directory without one is an unfinished backup.
const (
	backupDatabase = "narrator.db"
	backupMedia    = "media"
	backupManifest = "manifest.json"
	// backupFormat is the layout's version, which restore checks.
	backupFormat = 1
	// backupSnapshots bounds the snapshots a backup takes when media that
	// a snapshot refers to are removed before they are copied (an audio
	// deleted or rendered again meanwhile).
	backupSnapshots = 5
)

// manifest describes a backup.
type manifest struct {
	Format    int       `json:"format"`
	Narrator  string    `json:"narrator"` // version, commit and Go version of the binary that made it
	Created   time.Time `json:"created"`
	Source    string    `json:"source"` // the database it was taken from
	Database  string    `json:"database"`
	SHA256    string    `json:"database_sha256"`
	Snapshots int       `json:"snapshots"` // snapshots taken to find one whose media were all there
	Accounts  int       `json:"accounts"`
	Projects  int       `json:"projects"`
	Users     int       `json:"users"`
	Audios    int       `json:"audios"` // live audios
	// MediaFiles and MediaBytes count the files of the backup's media
	// directory; files of renderings replaced while the backup ran may be
	// among them, which is harmless.
	MediaFiles int   `json:"media_files"`
	MediaBytes int64 `json:"media_bytes"`
	// Missing are media the snapshot refers to that the media store lacked
	// in two snapshots in a row: lost before the backup began.
	Missing []string `json:"missing_media,omitempty"`
}

// notEmbedded is what backup and restore say of backends they do not
// copy, and what to do instead.
func notEmbedded(b config.Backends) error {
	var notes []string
	if kind, _, _ := config.ParseDatabase(b.Database); kind == config.Postgres {
		notes = append(notes, "the database is PostgreSQL: back it up with pg_dump (or continuous archiving), which is consistent while Narrator serves")
	}
	if kind, _, _ := config.ParseMedia(b.Media); kind == config.S3 {
		notes = append(notes, "the media are in S3: protect the bucket with versioning or replication, or copy it with your provider's tools")
	}
	if len(notes) == 0 {
		return nil
	}
	return fmt.Errorf("only the embedded stores (sqlite: and file:) are copied by this command; %s", strings.Join(notes, "; "))
}

// backupCommand is `narrator backup`.
type backupCommand struct{ e *env }

// Run runs `narrator backup`.
func (cmd backupCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "backup", "backup --to DIR [--data DIR] [--database sqlite:PATH] [--media file:DIR]")
	to := fs.String("to", "", "`dir`ectory to write the backup into: new or empty (required)")
	finish := config.BackendFlags(fs, e.getenv)
	if err := parse(fs, args); err != nil {
		return err
	}
	b, err := finish()
	if err != nil {
		return usagef("backup: %v", err)
	}
	if *to == "" {
		return required(fs, "to")
	}
	if err := notEmbedded(b); err != nil {
		return fmt.Errorf("backup: nothing was written: %w", err)
	}
	_, dbPath, _ := config.ParseDatabase(b.Database)
	if _, err := os.Stat(dbPath); err != nil {
		return usagef("backup: --database: %v", err)
	}
	if err := emptyDir(*to); err != nil {
		return usagef("backup: --to: %v", err)
	}
	bk := &backup{dbPath: dbPath, media: b.Media, dir: *to, progress: e.stderr}
	m, err := bk.run(ctx, e)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(e.stdout, "backup written to %s: %d accounts, %d projects, %d users, %d audios, %d media files (%d bytes)\n",
		*to, m.Accounts, m.Projects, m.Users, m.Audios, m.MediaFiles, m.MediaBytes)
	if len(m.Missing) > 0 {
		fmt.Fprintf(e.stdout, "warning: %d audios refer to media the media store does not have (listed in the manifest)\n", len(m.Missing))
	}
	return nil
}

// backup copies an embedded install: the database as a snapshot, then the
// media files the snapshot refers to.
type backup struct {
	dbPath   string
	media    string
	dir      string
	progress io.Writer
}

// run takes a snapshot and copies the media its live audios refer to. A
// medium missing from the store was removed after the snapshot (its audio
// deleted or rendered again), unless it was missing from the snapshot
// before too: then run takes a new snapshot and copies again, skipping the
// files it has. Media are immutable (each rendering has a folder of its
// own), so every file copied is the one the snapshot means.
func (b *backup) run(ctx context.Context, e *env) (*manifest, error) {
	src, err := openMedia(ctx, b.media, e.getenv)
	if err != nil {
		return nil, err
	}
	dst, err := localfs.New(filepath.Join(b.dir, backupMedia))
	if err != nil {
		return nil, err
	}
	cp := &copier{fromMedia: src, toMedia: dst}
	snap := filepath.Join(b.dir, backupDatabase)
	var missing, before map[int64]string
	m := &manifest{Format: backupFormat, Narrator: readBuildInfo().String(), Source: b.dbPath, Database: backupDatabase}
	for m.Snapshots = 1; ; m.Snapshots++ {
		if err := os.Remove(snap); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		m.Created = time.Now().UTC().Truncate(time.Second)
		if err := b.snapshot(ctx, snap); err != nil {
			return nil, err
		}
		if missing, err = b.copyMedia(ctx, cp, snap, m); err != nil {
			return nil, err
		}
		if len(missing) == 0 || lostBefore(missing, before) {
			break
		}
		if m.Snapshots == backupSnapshots {
			return nil, fmt.Errorf("media kept changing under %d snapshots in a row; try again when fewer audios are edited or deleted", backupSnapshots)
		}
		fmt.Fprintf(b.progress, "%d audios' media were removed after snapshot %d; taking another\n", len(missing), m.Snapshots)
		before = missing
	}
	for id, msg := range missing {
		m.Missing = append(m.Missing, fmt.Sprintf("audio %d: %s", id, msg))
	}
	if m.SHA256, err = fileSHA256(snap); err != nil {
		return nil, err
	}
	if m.MediaFiles, m.MediaBytes, err = dirSize(filepath.Join(b.dir, backupMedia)); err != nil {
		return nil, err
	}
	return m, writeManifest(b.dir, m)
}

// snapshot takes a snapshot of the database into path, readable by its
// owner alone, as it holds webhook secrets and feed tokens. VACUUM INTO
// creates its file as the umask allows, so the snapshot is taken in a
// private directory beside path, made 0600, then moved into place.
func (b *backup) snapshot(ctx context.Context, path string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".snapshot-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p := filepath.Join(tmp, filepath.Base(path))
	if err := sqlite.Snapshot(ctx, b.dbPath, p); err != nil {
		return err
	}
	if err := os.Chmod(p, 0o600); err != nil {
		return err
	}
	return os.Rename(p, path)
}

// lostBefore reports whether every audio missing media now missed the
// same ones in the snapshot before.
func lostBefore(now, before map[int64]string) bool {
	for id, msg := range now {
		if before[id] != msg {
			return false
		}
	}
	return true
}

// copyMedia copies the media of the snapshot's live audios and fills in
// m's counts. It returns, by audio ID, the audios whose media the store
// lacks.
func (b *backup) copyMedia(ctx context.Context, cp *copier, snap string, m *manifest) (map[int64]string, error) {
	st, err := sqlite.Open(ctx, snap, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	meta, err := st.ExportMeta(ctx)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	m.Accounts, m.Projects, m.Users, m.Audios = len(meta.Accounts), len(meta.Projects), len(meta.Users), 0
	missing := map[int64]string{}
	for after := int64(0); ; {
		page, err := st.ExportAudios(ctx, after, copyBatch)
		if err != nil {
			return nil, fmt.Errorf("read snapshot audios: %w", err)
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			err := cp.copyFiles(ctx, a)
			switch {
			case errors.Is(err, narrator.ErrBlobNotFound):
				missing[a.ID] = err.Error()
			case err != nil:
				return nil, fmt.Errorf("copy media of audio %d: %w", a.ID, err)
			}
		}
		m.Audios += len(page)
		after = page[len(page)-1].ID
	}
	return missing, st.Close()
}

// writeManifest writes m into dir durably, as the backup's last file.
func writeManifest(dir string, m *manifest) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileSync(filepath.Join(dir, backupManifest), append(raw, '\n'))
}

// readManifest reads and checks the manifest of the backup in dir.
func readManifest(dir string) (*manifest, error) {
	raw, err := os.ReadFile(filepath.Join(dir, backupManifest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s: it is not a backup, or an unfinished one", dir, backupManifest)
	}
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", backupManifest, err)
	}
	if m.Format != backupFormat || m.Database != backupDatabase {
		return nil, fmt.Errorf("%s: format %d of database %q is not one this narrator reads (format %d)", backupManifest, m.Format, m.Database, backupFormat)
	}
	return &m, nil
}

// emptyDir creates dir if it does not exist, and fails if it holds
// anything.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o750)
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// dirSize counts the regular files under dir and their bytes.
func dirSize(dir string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	return files, bytes, err
}

// fileSHA256 returns the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeFileSync writes data to path through a temporary file that is
// synced and renamed into place, then syncs the directory.
func writeFileSync(path string, data []byte) error {
	return copyFileSync(path, bytes.NewReader(data))
}

// copyFileSync writes r to path through a temporary file in the same
// directory that is synced and renamed into place, then syncs the
// directory, so that path is whole or absent after a crash.
func copyFileSync(path string, r io.Reader) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := io.Copy(f, r); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
