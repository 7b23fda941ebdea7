package neural

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/narrator/narrator"
)

// FileSource reads the installed voices' files: the media store.
type FileSource interface {
	// Open returns an error matching narrator.ErrBlobNotFound for a missing key.
	Open(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error)
}

// fileCache keeps voice files on local disk, each named by its SHA-256 and checked against it
// when fetched, so that a node fetches a file once, and a file that arrived damaged is never
// used.
type fileCache struct {
	dir   string
	files FileSource

	mu       sync.Mutex
	fetching map[string]*sync.Mutex // one fetch per file at a time
}

// newFileCache returns the cache in dir, removing the partial fetches a crash left there.
func newFileCache(dir string, files FileSource) *fileCache {
	if partial, err := filepath.Glob(filepath.Join(dir, ".fetch-*")); err == nil {
		for _, p := range partial {
			os.Remove(p)
		}
	}
	return &fileCache{dir: dir, files: files, fetching: map[string]*sync.Mutex{}}
}

// remove deletes f's cached copy, if there is one: its voice was removed or changed.
func (c *fileCache) remove(f narrator.VoiceFile) {
	lock := c.lock(f.SHA256)
	lock.Lock()
	defer lock.Unlock()
	os.Remove(filepath.Join(c.dir, f.SHA256))
}

// lock returns the lock of one file's fetch.
func (c *fileCache) lock(sha string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.fetching[sha]
	if !ok {
		l = &sync.Mutex{}
		c.fetching[sha] = l
	}
	return l
}

// path returns the local path of f, fetching it from the media store if it is not there.
func (c *fileCache) path(ctx context.Context, f narrator.VoiceFile) (string, error) {
	lock := c.lock(f.SHA256)
	lock.Lock()
	defer lock.Unlock()

	dst := filepath.Join(c.dir, f.SHA256)
	// A file is only ever renamed into place once its checksum matched, so one of the right
	// size is the file.
	if info, err := os.Stat(dst); err == nil && info.Mode().IsRegular() && info.Size() == f.Size {
		return dst, nil
	}
	if c.files == nil {
		return "", fmt.Errorf("voice file %s (%s) is not cached and no media store is set", f.Name, f.SHA256[:12])
	}
	if err := os.MkdirAll(c.dir, 0o750); err != nil {
		return "", fmt.Errorf("voice file cache: %w", err)
	}
	r, _, err := c.files.Open(ctx, f.Key())
	if err != nil {
		return "", fmt.Errorf("fetch voice file %s: %w", f.Name, err)
	}
	defer r.Close()
	tmp, err := os.CreateTemp(c.dir, ".fetch-*")
	if err != nil {
		return "", fmt.Errorf("voice file cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, f.Size+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("fetch voice file %s: %w", f.Name, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != f.Size || sum != f.SHA256 {
		return "", fmt.Errorf("fetch voice file %s: got %d bytes with SHA-256 %s; want %d bytes with %s", f.Name, n, sum, f.Size, f.SHA256)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("voice file cache: %w", err)
	}
	return dst, nil
}
