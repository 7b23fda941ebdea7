package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/narrator/narrator"
)

// readCache keeps the answers of the API's hottest reads, a project
// through an API key, a live audio with its media and a page of the list,
// for as long as the database has not changed.
//
// Whether it changed is read from the WAL index: the header at the start
// of the database's -shm file, which every connection of every process
// updates when it commits and which SQLite's own readers read without a
// lock. The cache maps that header and compares it before every use: any
// commit, by this process or another one (a `narrator accounts keys
// revoke` beside the server, say), empties it, so an answer from it is
// what the database held when the request asked, and a revoked key is
// refused at once.
//
// The format it relies on is SQLite's "WAL-index format"
// (https://sqlite.org/walformat.html; WalIndexHdr in wal.c), which
// TestWALIndexHeaderLayout pins: the -shm file starts with two copies of a
// 48-byte header, at offsets 0 and 48, in the machine's byte order, as
// 32-bit words iVersion (3007000), unused, iChange (grows at every
// commit), isInit, bigEndCksum and szPage (8, 8 and 16 bits), mxFrame,
// nPage, two frame checksums, two salts and two header checksums. A commit
// writes the second copy, then the first; a reader reads the first, then
// the second, and trusts them only if they match (header). The cache
// compares the first copy whole: it never interprets a field, so only the
// copies' places and size, and that a commit changes them, matter. The
// file holds SQLite's locks as well (from byte 120), which the cache never
// touches.
//
// The check costs a few dozen loads from memory. BenchmarkReadCheck
// measures it against the simpler checks (issue 19): `PRAGMA
// data_version` on the cache's pinned connection, which asks the same of
// SQLite, runs a statement and takes the WAL's read lock on one
// connection that every reader waits for, which makes an API key's check,
// the read every request makes, several times slower; a count of the
// store's own commits, kept in memory, is as fast but misses the commits
// of other processes. docs/architecture.md ("The read cache") holds the
// decision, docs/figures.md the figures.
//
// The -shm file lives as long as one connection holds the database open:
// the cache pins a connection of its own for its lifetime, so that the
// file it maps is never removed or truncated under it.
type readCache struct {
	pin  *sql.DB   // the pinned connection's pool
	conn *sql.Conn // held until close
	shm  []byte    // the WAL index's first bytes, mapped read-only

	// check reads the database's stamp: header, the WAL-index header. It
	// is a field so that BenchmarkReadCheck can put the simpler checks it
	// compares in its place.
	check func() (stamp, bool)

	// off turns the cache off (Options.NoReadCache): every read goes to the database and
	// nothing is kept. It is set before the store serves, and never changes after.
	off bool

	mu       sync.Mutex
	current  stamp // the stamp the entries were read under
	projects map[projectKey]narrator.Project
	audios   map[audioKey]*narrator.Audio
	pages    map[pageKey][]*narrator.Audio
	size     int // bytes of text held by audios and pages, roughly
}

// stamp is what the cache compares to tell one state of the database
// from another: one copy of the WAL-index header, 48 bytes in the
// machine's byte order, compared whole.
type stamp [12]uint32

// ticket is what a lookup that missed hands to the keep that follows its
// read: the stamp the read was made under, if it could be read whole.
type ticket struct {
	stamp stamp
	valid bool
}

type projectKey struct {
	hash      string
	projectID int64
}

type audioKey struct {
	projectID int64
	ref       string
}

type pageKey struct {
	projectID     int64
	since         int64 // microseconds; math.MinInt64 for all
	page, perPage int
}

// Bounds of the cache: past them, answers are read and not kept until the
// next commit empties it. Audios carry their text, so they are bounded by
// size too, well under serve's soft memory limit (config.DefaultMemoryLimitMB),
// near which the collector would run without pause.
const (
	readCacheEntries = 4096
	readCacheBytes   = 4 << 20
)

// openReadCache pins a connection of its own on the database at dsn,
// which must be in WAL mode, and maps its WAL index.
func openReadCache(ctx context.Context, path, dsn string) (_ *readCache, err error) {
	pin, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pin.Close()
		}
	}()
	pin.SetMaxOpenConns(1)
	conn, err := pin.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	// A read makes the connection open the WAL index, creating it if need
	// be.
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, err
	}
	if mode != "wal" {
		return nil, fmt.Errorf("journal mode %q, not wal", mode)
	}
	f, err := openShm(path + "-shm")
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < walIndexHeaderBytes {
		return nil, fmt.Errorf("%s: %d bytes, too short for a WAL index", f.Name(), fi.Size())
	}
	shm, err := syscall.Mmap(int(f.Fd()), 0, walIndexHeaderBytes, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	c := &readCache{pin: pin, conn: conn, shm: shm}
	c.check = c.header
	return c, nil
}

// shmFiles holds open, for the life of the process, every -shm file a read
// cache has mapped. Closing any descriptor of a file drops every POSIX
// lock the process holds on it (fcntl(2)), SQLite's own shm locks
// included: another process would then take the database for unused and
// reset its WAL index under this one's connections. So these descriptors
// are never closed, and kept referenced so that no finalizer closes them;
// a database file's -shm is opened once per process, again only if it was
// replaced.
var shmFiles struct {
	mu     sync.Mutex
	byPath map[string]*os.File
	all    []*os.File
}

// openShm returns the process's descriptor of the -shm file at path,
// opening it if it has none for that file.
func openShm(path string) (*os.File, error) {
	shmFiles.mu.Lock()
	defer shmFiles.mu.Unlock()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if f := shmFiles.byPath[path]; f != nil {
		if open, err := f.Stat(); err == nil && os.SameFile(open, fi) {
			return f, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if shmFiles.byPath == nil {
		shmFiles.byPath = make(map[string]*os.File)
	}
	shmFiles.byPath[path] = f
	shmFiles.all = append(shmFiles.all, f)
	return f, nil
}

// walIndexHeaderBytes is the size of the WAL index's two header copies.
const walIndexHeaderBytes = 96

// header reads the WAL-index header as SQLite's readers do: the first
// copy, then the second, which a writer updates first; ok is false if they
// differ, a commit being under way.
func (c *readCache) header() (h stamp, ok bool) {
	var second stamp
	for i := range h {
		h[i] = atomic.LoadUint32((*uint32)(unsafe.Pointer(&c.shm[4*i])))
	}
	for i := range second {
		second[i] = atomic.LoadUint32((*uint32)(unsafe.Pointer(&c.shm[48+4*i])))
	}
	return h, h == second
}

// sync brings the cache up to the database's stamp, emptying it if the
// stamp moved, and returns the ticket of a read made now. c.mu must be
// held. While a commit is under way the ticket is not valid: the caller
// reads, and keeps nothing. A read that misses the cache is made after
// sync and kept with its ticket, so that a kept answer is never older than
// the stamp it is kept under.
func (c *readCache) sync() ticket {
	if c.off {
		return ticket{}
	}
	h, ok := c.check()
	if !ok {
		return ticket{}
	}
	if h != c.current {
		c.current = h
		clear(c.projects)
		clear(c.audios)
		clear(c.pages)
		c.size = 0
	}
	return ticket{stamp: h, valid: true}
}

// fresh reports whether a read made with t may still be kept. c.mu must be
// held.
func (c *readCache) fresh(t ticket) bool {
	return t.valid && t.stamp == c.current
}

// project returns the project cached for k, if the database has not
// changed since it was read, and the version a read made now belongs to.
func (c *readCache) project(k projectKey) (p narrator.Project, t ticket, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t = c.sync(); !t.valid {
		return p, t, false
	}
	p, ok = c.projects[k]
	return p, t, ok
}

// keepProject remembers p, read with t, for k if the database has not
// changed since.
func (c *readCache) keepProject(k projectKey, t ticket, p *narrator.Project) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fresh(t) || len(c.projects) >= readCacheEntries {
		return
	}
	if c.projects == nil {
		c.projects = make(map[projectKey]narrator.Project)
	}
	c.projects[k] = *p
}

// audio returns a copy of the audio cached for k, if the database has not
// changed since it was read, and the version a read made now belongs to.
func (c *readCache) audio(k audioKey) (a *narrator.Audio, t ticket) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t = c.sync(); !t.valid {
		return nil, t
	}
	if got := c.audios[k]; got != nil {
		a = cloneAudio(got)
	}
	return a, t
}

// keepAudio remembers a copy of a, read with t, for k if the database has
// not changed since and the cache has room.
func (c *readCache) keepAudio(k audioKey, t ticket, a *narrator.Audio) {
	n := audioSize(a)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fresh(t) || len(c.audios) >= readCacheEntries || c.size+n > readCacheBytes {
		return
	}
	if c.audios == nil {
		c.audios = make(map[audioKey]*narrator.Audio)
	}
	if old := c.audios[k]; old != nil {
		c.size -= audioSize(old)
	}
	c.audios[k] = cloneAudio(a)
	c.size += n
}

// page returns a copy of the page cached for k, if the database has not
// changed since it was read, and the ticket of a read made now.
func (c *readCache) page(k pageKey) (audios []*narrator.Audio, t ticket, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t = c.sync(); !t.valid {
		return nil, t, false
	}
	got, ok := c.pages[k]
	if !ok {
		return nil, t, false
	}
	audios = make([]*narrator.Audio, len(got))
	for i, a := range got {
		audios[i] = cloneAudio(a)
	}
	return audios, t, true
}

// keepPage remembers a copy of audios, read with t, for k if the database
// has not changed since and the cache has room.
func (c *readCache) keepPage(k pageKey, t ticket, audios []*narrator.Audio) {
	n := 64
	for _, a := range audios {
		n += audioSize(a)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fresh(t) || len(c.pages) >= readCacheEntries || c.size+n > readCacheBytes {
		return
	}
	if c.pages == nil {
		c.pages = make(map[pageKey][]*narrator.Audio)
	}
	if _, ok := c.pages[k]; ok {
		return
	}
	kept := make([]*narrator.Audio, len(audios))
	for i, a := range audios {
		kept[i] = cloneAudio(a)
	}
	c.pages[k] = kept
	c.size += n
}

func (c *readCache) close() error {
	return errors.Join(syscall.Munmap(c.shm), c.conn.Close(), c.pin.Close())
}

// cloneAudio copies a so that neither the cache nor its caller sees the
// other's changes.
func cloneAudio(a *narrator.Audio) *narrator.Audio {
	b := *a
	b.Metadata = maps.Clone(a.Metadata)
	b.Media = slices.Clone(a.Media)
	return &b
}

// audioSize is about the bytes a holds.
func audioSize(a *narrator.Audio) int {
	n := len(a.Title) + len(a.Body) + len(a.Author) + len(a.ArticleURL) + len(a.ExternalID) + len(a.Error) + 256
	for k, v := range a.Metadata {
		n += len(k) + len(v)
	}
	for _, m := range a.Media {
		n += len(m.Key) + 64
	}
	return n
}
