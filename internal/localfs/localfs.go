// Package localfs stores media objects as files under a root directory.
//
// Writes are atomic and durable: an object is written to a temporary file in
// its final directory, synced, renamed into place, and the directory is
// synced. Readers therefore see either the old object or the new one, never a
// partial file, and a crash never leaves a truncated object behind (at worst
// an unreachable temporary file whose name starts with ".tmp-").
//
// Keys are checked with narrator.ValidateBlobKey before any file system call,
// so no key can address a path outside the root.
package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/ctxio"
)

// Store is a media store on the local file system. It is safe for
// concurrent use.
type Store struct {
	root string // absolute, cleaned
}

// New returns a Store rooted at root, creating the directory if needed.
func New(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("localfs: resolve root %q: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("localfs: create root: %w", err)
	}
	return &Store{root: abs}, nil
}

// Root returns the absolute path of the store's root directory.
func (s *Store) Root() string { return s.root }

// Ping checks that the root is a directory this process may write in.
func (s *Store) Ping(ctx context.Context) error {
	fi, err := os.Stat(s.root)
	switch {
	case err != nil:
		return fmt.Errorf("localfs: ping: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("localfs: ping: %s is not a directory", s.root)
	}
	if err := syscall.Access(s.root, 2 /* W_OK */); err != nil {
		return fmt.Errorf("localfs: ping: %s is not writable: %w", s.root, err)
	}
	return nil
}

// path validates key and returns its file path under the root.
func (s *Store) path(key string) (string, error) {
	if err := narrator.ValidateBlobKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// Put stores the object read from r at key, replacing any existing object.
// It returns an EINVALID *narrator.Error for a bad key, and ctx's error if
// ctx ends while r is being read; in both cases nothing is stored.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) (err error) {
	defer wrap(&err, "localfs: put %q", key)
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(p)
	f, err := s.createTemp(dir)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := io.Copy(f, ctxio.Reader(ctx, r)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	// CreateTemp makes files 0600; media are ordinary readable files.
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	return syncDir(dir)
}

// createTemp creates the directories down to dir, syncing the parent of each
// one it creates, then a temporary file in dir. A concurrent Delete may
// remove an empty dir between the two steps, so it tries again then.
func (s *Store) createTemp(dir string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		err := s.mkdirAll(dir)
		if err == nil {
			var f *os.File
			if f, err = os.CreateTemp(dir, ".tmp-*"); err == nil {
				return f, nil
			}
			err = fmt.Errorf("create temp file: %w", err)
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 5 {
			return nil, err
		}
	}
}

// mkdirAll creates dir and its missing parents below the root, syncing the
// parent of every directory it creates so the new entry is durable.
func (s *Store) mkdirAll(dir string) error {
	if dir == s.root {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("mkdir %s: not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if err := s.mkdirAll(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("mkdir: %w", err)
	}
	return syncDir(parent)
}

// Open returns the object at key for reading, with its size and modification
// time. The caller must close the reader. It returns an error matching
// narrator.ErrBlobNotFound if no object exists at key, and an EINVALID
// *narrator.Error for a bad key.
func (s *Store) Open(ctx context.Context, key string) (_ io.ReadSeekCloser, _ narrator.BlobInfo, err error) {
	defer wrap(&err, "localfs: open %q", key)
	p, err := s.path(key)
	if err != nil {
		return nil, narrator.BlobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, narrator.BlobInfo{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		if isNotFound(err) {
			return nil, narrator.BlobInfo{}, narrator.ErrBlobNotFound
		}
		return nil, narrator.BlobInfo{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, narrator.BlobInfo{}, err
	}
	if !fi.Mode().IsRegular() {
		// A directory is a key prefix, not an object.
		f.Close()
		return nil, narrator.BlobInfo{}, narrator.ErrBlobNotFound
	}
	return f, narrator.BlobInfo{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete removes the object at key, then any parent directories, up to the
// root, that this leaves empty. A missing object is not an error. It returns
// an EINVALID *narrator.Error for a bad key.
func (s *Store) Delete(ctx context.Context, key string) (err error) {
	defer wrap(&err, "localfs: delete %q", key)
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := os.Lstat(p)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return nil // a prefix, not an object: there is no object at key
	}
	if err := os.Remove(p); err != nil && !isNotFound(err) {
		return err
	}
	s.pruneDirs(filepath.Dir(p))
	return nil
}

// DeletePrefix removes every object whose key is prefix or starts with
// prefix + "/", that is the object or the whole directory named prefix; a
// trailing slash on prefix is ignored. Prefixes match whole segments: "ab"
// does not remove "abc/x". Nothing there is not an error. It returns an
// EINVALID *narrator.Error for an empty or bad prefix, so it can never remove
// the whole store.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (err error) {
	defer wrap(&err, "localfs: delete prefix %q", prefix)
	p, err := s.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	s.pruneDirs(filepath.Dir(p))
	return nil
}

// Folders returns the names of the store's top-level folders, the first
// segments of keys that have more than one, in no particular order.
func (s *Store) Folders(ctx context.Context) (_ []string, err error) {
	defer wrap(&err, "localfs: list folders")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		// Names starting with a dot are no key's (temporary files).
		if e.IsDir() && narrator.ValidateBlobKey(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// List returns every object whose key starts with prefix + "/" (a
// trailing slash on prefix is ignored), with its info, in no particular
// order; nothing there is an empty list, not an error. It returns an EINVALID
// *narrator.Error for an empty or bad prefix.
func (s *Store) List(ctx context.Context, prefix string) (_ []narrator.BlobObject, err error) {
	defer wrap(&err, "localfs: list %q", prefix)
	prefix = strings.TrimSuffix(prefix, "/")
	dir, err := s.path(prefix)
	if err != nil {
		return nil, err
	}
	var out []narrator.BlobObject
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && p == dir && isNotFound(err):
			return fs.SkipAll // nothing there
		case err != nil && isNotFound(err):
			return nil // removed while listed
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case p == dir:
			if !d.IsDir() {
				return fs.SkipAll // an object, not a folder
			}
			return nil
		case strings.HasPrefix(d.Name(), "."):
			// A temporary file: not an object yet, or never.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		fi, err := d.Info()
		if isNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		out = append(out, narrator.BlobObject{Key: filepath.ToSlash(rel), BlobInfo: narrator.BlobInfo{Size: fi.Size(), ModTime: fi.ModTime()}})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pruneDirs removes dir and its parents below the root while they are empty.
// Failure only means a directory is not empty (or was just refilled), so it
// is not reported.
func (s *Store) pruneDirs(dir string) {
	for dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)) {
		if err := os.Remove(dir); err != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// syncDir fsyncs a directory so that entries created or renamed in it survive
// a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir for sync: %w", err)
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("sync dir: %w", err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("close dir: %w", err)
	}
	return nil
}

// isNotFound reports whether err means the path does not exist, including
// when a parent component is a regular file.
func isNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// wrap prefixes a non-nil *err with a formatted context, keeping the chain
// for errors.Is and errors.As, and marks narrator.EUNAVAILABLE the error of
// a disk that fails or is full (unavailableErrnos), as the SQLite store
// marks its database's: the request may succeed later, once an operator
// has freed space or replaced the disk.
func wrap(err *error, format string, args ...any) {
	if *err == nil {
		return
	}
	*err = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *err)
	if narrator.ErrorCode(*err) != narrator.EINTERNAL {
		return
	}
	for _, errno := range unavailableErrnos {
		if errors.Is(*err, errno) {
			*err = narrator.Unavailable(*err)
			return
		}
	}
}

// unavailableErrnos are the errors of a disk that fails (EIO, and EROFS:
// ext4 remounts itself read-only after errors) or is full (ENOSPC,
// EDQUOT).
var unavailableErrnos = []syscall.Errno{syscall.EIO, syscall.EROFS, syscall.ENOSPC, syscall.EDQUOT}
