// Package blobtest is the conformance suite for media stores. Every store
// (localfs, s3) runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		blobtest.Run(t, func(t *testing.T) blobtest.Store { return mustNew(t) })
//	}
//
// A new store behaviour starts as a test here.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// Store is the media store contract the suite checks.
type Store interface {
	// Put stores r's bytes at key, replacing any object there. A bad key is
	// an EINVALID *narrator.Error. If ctx ends or r fails, nothing is stored.
	Put(ctx context.Context, key string, r io.Reader) error
	// Open returns the object at key and its info; a missing object is an
	// error matching narrator.ErrBlobNotFound.
	Open(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error)
	// Delete removes the object at key; a missing object is not an error.
	Delete(ctx context.Context, key string) error
	// DeletePrefix removes the object at prefix and every object under
	// prefix + "/"; nothing there is not an error; "" is EINVALID.
	DeletePrefix(ctx context.Context, prefix string) error
	// Ping checks cheaply, without writing, that the store is there to be
	// used: readiness checks call it.
	Ping(ctx context.Context) error
	// Folders returns the names of the top-level folders: the first
	// segments of keys that have more than one.
	Folders(ctx context.Context) ([]string, error)
	// List returns every object under prefix + "/" with its info; nothing
	// there is an empty list; "" is EINVALID.
	List(ctx context.Context, prefix string) ([]narrator.BlobObject, error)
}

// LargeSize is the size of the object the streaming test writes.
const LargeSize = 50 << 20

// Option adjusts the suite to a store.
type Option func(*config)

type config struct {
	allocLimit uint64
}

// AllocLimit lets Put, and Open with a read to the end, each allocate up to
// n bytes in all, garbage included, while they move the LargeSize test
// object; the default is LargeSize/4. It is for a store whose requests make
// garbage in proportion to the object, such as per-chunk signatures, and the
// caller should say why. The memory held at once is checked separately,
// against LargeSize/4, whatever the option.
func AllocLimit(n int64) Option {
	return func(c *config) { c.allocLimit = uint64(n) }
}

// Run runs the suite against stores made by newStore, which must return an
// empty store that is cleaned up with t. Its memory check assumes no other
// test in the process runs at the same time, so call Run from a test that
// does not call t.Parallel.
func Run(t *testing.T, newStore func(t *testing.T) Store, opts ...Option) {
	cfg := config{allocLimit: LargeSize / 4}
	for _, o := range opts {
		o(&cfg)
	}
	// Sequential first, so that its memory figures are its own; the
	// subtests below run in parallel after it.
	t.Run("LargeStreaming", func(t *testing.T) { testLargeStreaming(t, newStore(t), cfg) })

	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"Ping", testPing},
		{"PutOpen", testPutOpen},
		{"Seek", testSeek},
		{"Overwrite", testOverwrite},
		{"EmptyObject", testEmptyObject},
		{"OpenMissing", testOpenMissing},
		{"DeleteIdempotent", testDeleteIdempotent},
		{"DeletePrefix", testDeletePrefix},
		{"FoldersList", testFoldersList},
		{"BadKeys", testBadKeys},
		{"PutCanceled", testPutCanceled},
		{"PutReaderError", testPutReaderError},
		{"ConcurrentPuts", testConcurrentPuts},
		{"ConcurrentPutDelete", testConcurrentPutDelete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

func testPing(t *testing.T, s Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testPutOpen(t *testing.T, s Store) {
	data := []byte("ID3 not really an mp3")
	mustPut(t, s, "tok1/audio.mp3", data)
	mustPut(t, s, "tok1/hls/seg00000.ts", []byte("segment"))

	got, info := mustRead(t, s, "tok1/audio.mp3")
	if !bytes.Equal(got, data) {
		t.Errorf("content = %q, want %q", got, data)
	}
	if info.Size != int64(len(data)) {
		t.Errorf("Size = %d, want %d", info.Size, len(data))
	}
	if info.ModTime.IsZero() {
		t.Error("ModTime is zero")
	}
	if got, _ := mustRead(t, s, "tok1/hls/seg00000.ts"); string(got) != "segment" {
		t.Errorf("nested content = %q, want %q", got, "segment")
	}
}

func testSeek(t *testing.T, s Store) {
	data := []byte("0123456789abcdefghij")
	mustPut(t, s, "seek/x.ts", data)
	rc, _, err := s.Open(t.Context(), "seek/x.ts")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer rc.Close()

	if n, err := rc.Seek(0, io.SeekEnd); err != nil || n != int64(len(data)) {
		t.Fatalf("Seek(0, End) = %d, %v; want %d, nil", n, err, len(data))
	}
	if n, err := rc.Seek(10, io.SeekStart); err != nil || n != 10 {
		t.Fatalf("Seek(10, Start) = %d, %v; want 10, nil", n, err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(rc, buf); err != nil {
		t.Fatalf("read after seek: %v", err)
	}
	if string(buf) != "abcde" {
		t.Errorf("read after seek = %q, want %q", buf, "abcde")
	}
}

func testOverwrite(t *testing.T, s Store) {
	mustPut(t, s, "ow/a.m3u8", bytes.Repeat([]byte("long "), 100))
	mustPut(t, s, "ow/a.m3u8", []byte("short"))
	got, info := mustRead(t, s, "ow/a.m3u8")
	if string(got) != "short" || info.Size != 5 {
		t.Errorf("after overwrite: content %q size %d; want %q size 5", got, info.Size, "short")
	}
}

func testEmptyObject(t *testing.T, s Store) {
	mustPut(t, s, "empty/a.ts", nil)
	got, info := mustRead(t, s, "empty/a.ts")
	if len(got) != 0 || info.Size != 0 {
		t.Errorf("empty object: %d bytes, Size %d; want 0, 0", len(got), info.Size)
	}
}

func testOpenMissing(t *testing.T, s Store) {
	mustPut(t, s, "dir/sub/obj.mp3", []byte("x"))
	for _, key := range []string{
		"nope.mp3",
		"dir/nope.mp3",
		"dir",                  // a prefix of an object, not an object
		"dir/sub",              // likewise
		"dir/sub/obj.mp3/more", // under an object
	} {
		t.Run(key, func(t *testing.T) {
			rc, _, err := s.Open(t.Context(), key)
			if err == nil {
				rc.Close()
			}
			if !errors.Is(err, narrator.ErrBlobNotFound) {
				t.Errorf("Open(%q) error = %v, want narrator.ErrBlobNotFound", key, err)
			}
		})
	}
}

func testDeleteIdempotent(t *testing.T, s Store) {
	ctx := t.Context()
	mustPut(t, s, "del/a.mp3", []byte("a"))
	mustPut(t, s, "del/b.mp3", []byte("b"))

	for i := range 2 {
		if err := s.Delete(ctx, "del/a.mp3"); err != nil {
			t.Fatalf("Delete #%d: %v", i+1, err)
		}
	}
	if err := s.Delete(ctx, "never/was.mp3"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
	mustNotExist(t, s, "del/a.mp3")
	if got, _ := mustRead(t, s, "del/b.mp3"); string(got) != "b" {
		t.Errorf("sibling after Delete = %q, want %q", got, "b")
	}

	// The last object of a prefix goes, and the prefix can be reused.
	if err := s.Delete(ctx, "del/b.mp3"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	mustNotExist(t, s, "del/b.mp3")
	mustPut(t, s, "del/c.mp3", []byte("c"))
	if got, _ := mustRead(t, s, "del/c.mp3"); string(got) != "c" {
		t.Errorf("after reuse = %q, want %q", got, "c")
	}
}

func testDeletePrefix(t *testing.T, s Store) {
	ctx := t.Context()
	for _, k := range []string{"p/a.mp3", "p/hls/index.m3u8", "p/hls/seg0.ts", "pq/keep.mp3", "other/keep.mp3"} {
		mustPut(t, s, k, []byte(k))
	}

	if err := s.DeletePrefix(ctx, "p"); err != nil {
		t.Fatalf("DeletePrefix: %v", err)
	}
	for _, k := range []string{"p/a.mp3", "p/hls/index.m3u8", "p/hls/seg0.ts"} {
		mustNotExist(t, s, k)
	}
	for _, k := range []string{"pq/keep.mp3", "other/keep.mp3"} {
		if got, _ := mustRead(t, s, k); string(got) != k {
			t.Errorf("%s after DeletePrefix(\"p\") = %q, want it kept", k, got)
		}
	}

	// Idempotent, with or without a trailing slash.
	for _, prefix := range []string{"p", "p/", "never"} {
		if err := s.DeletePrefix(ctx, prefix); err != nil {
			t.Errorf("DeletePrefix(%q) again: %v", prefix, err)
		}
	}

	// A trailing slash removes the same set.
	mustPut(t, s, "s/a/b.ts", []byte("x"))
	if err := s.DeletePrefix(ctx, "s/"); err != nil {
		t.Fatalf("DeletePrefix(\"s/\"): %v", err)
	}
	mustNotExist(t, s, "s/a/b.ts")

	// The empty prefix must not wipe the store.
	if err := s.DeletePrefix(ctx, ""); err == nil {
		t.Error("DeletePrefix(\"\") succeeded, want an error")
	}
	if got, _ := mustRead(t, s, "other/keep.mp3"); string(got) != "other/keep.mp3" {
		t.Errorf("after DeletePrefix(\"\"): other/keep.mp3 = %q", got)
	}
}

func testFoldersList(t *testing.T, s Store) {
	ctx := t.Context()
	folders, err := s.Folders(ctx)
	if err != nil || len(folders) != 0 {
		t.Fatalf("Folders of an empty store = %q, %v; want none", folders, err)
	}
	before := time.Now().Add(-time.Minute)
	for _, k := range []string{"f/a.mp3", "f/hls/seg0.ts", "fg/keep.mp3", "g/h/i.ts", "top.mp3"} {
		mustPut(t, s, k, []byte(k))
	}
	folders, err = s.Folders(ctx)
	if err != nil {
		t.Fatalf("Folders: %v", err)
	}
	slices.Sort(folders)
	if want := []string{"f", "fg", "g"}; !slices.Equal(folders, want) {
		t.Errorf("Folders = %q, want %q", folders, want)
	}

	for _, prefix := range []string{"f", "f/"} {
		objs, err := s.List(ctx, prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		var keys []string
		for _, o := range objs {
			keys = append(keys, o.Key)
			if o.Size != int64(len(o.Key)) || o.ModTime.Before(before) {
				t.Errorf("List(%q): %s has size %d, time %v; want %d, after %v", prefix, o.Key, o.Size, o.ModTime, len(o.Key), before)
			}
		}
		slices.Sort(keys)
		if want := []string{"f/a.mp3", "f/hls/seg0.ts"}; !slices.Equal(keys, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, keys, want)
		}
	}
	for _, prefix := range []string{"never", "top.mp3", "f/a.mp3"} {
		if objs, err := s.List(ctx, prefix); err != nil || len(objs) != 0 {
			t.Errorf("List(%q) = %v, %v; want nothing", prefix, objs, err)
		}
	}
	if _, err := s.List(ctx, ""); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("List(\"\") = %v, want EINVALID", err)
	}

	if err := s.DeletePrefix(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	folders, err = s.Folders(ctx)
	if err != nil {
		t.Fatalf("Folders: %v", err)
	}
	slices.Sort(folders)
	if want := []string{"fg", "g"}; !slices.Equal(folders, want) {
		t.Errorf("Folders after DeletePrefix(\"f\") = %q, want %q", folders, want)
	}
}

// BadKeys returns keys that every store must refuse. Stores' own tests may
// use it to check that nothing was written outside their root.
func BadKeys() []string {
	return []string{
		"",
		"/abs.mp3",
		"../escape.mp3",
		"a/../../escape.mp3",
		"a/..",
		"..",
		".",
		"./a.mp3",
		"a//b.mp3",
		"a/",
		"a\\..\\b.mp3",
		"a\x00b.mp3",
		"a/.hidden",
		string(bytes.Repeat([]byte("k"), narrator.MaxBlobKey+1)),
	}
}

func testBadKeys(t *testing.T, s Store) {
	ctx := t.Context()
	for _, key := range BadKeys() {
		name := fmt.Sprintf("%.40q", key)
		t.Run(name, func(t *testing.T) {
			checks := map[string]error{
				"Put":    s.Put(ctx, key, bytes.NewReader([]byte("x"))),
				"Delete": s.Delete(ctx, key),
			}
			rc, _, err := s.Open(ctx, key)
			if err == nil {
				rc.Close()
			}
			checks["Open"] = err
			if !strings.HasSuffix(key, "/") { // "a/" is a valid prefix
				checks["DeletePrefix"] = s.DeletePrefix(ctx, key)
			}
			for op, err := range checks {
				if code := narrator.ErrorCode(err); code != narrator.EINVALID {
					t.Errorf("%s: error %v (code %q), want code %q", op, err, code, narrator.EINVALID)
				}
			}
		})
	}
}

func testPutCanceled(t *testing.T, s Store) {
	ctx, cancel := context.WithCancel(t.Context())
	// The reader cancels the context after its first chunk, so the store sees
	// the cancellation mid-stream.
	r := &funcReader{n: 4 << 20, onRead: func(int64) { cancel() }}
	if err := s.Put(ctx, "cancel/a.mp3", r); err == nil {
		t.Fatal("Put with a context canceled mid-stream succeeded")
	}
	mustNotExist(t, s, "cancel/a.mp3")

	if err := s.Put(ctx, "cancel/b.mp3", bytes.NewReader([]byte("x"))); err == nil {
		t.Error("Put with a canceled context succeeded")
	}
	mustNotExist(t, s, "cancel/b.mp3")
}

func testPutReaderError(t *testing.T, s Store) {
	mustPut(t, s, "rerr/a.mp3", []byte("old"))
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader([]byte("partial")), errReader{boom})
	if err := s.Put(t.Context(), "rerr/a.mp3", r); !errors.Is(err, boom) {
		t.Fatalf("Put with a failing reader: error %v, want one wrapping %v", err, boom)
	}
	if got, _ := mustRead(t, s, "rerr/a.mp3"); string(got) != "old" {
		t.Errorf("after a failed Put the object is %q, want the old %q", got, "old")
	}
	if err := s.Put(t.Context(), "rerr/new.mp3", errReader{boom}); err == nil {
		t.Error("Put with a failing reader succeeded")
	}
	mustNotExist(t, s, "rerr/new.mp3")
}

func testConcurrentPuts(t *testing.T, s Store) {
	const n = 16
	ctx := t.Context()
	content := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 64<<10+i) }

	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			// Each writer writes its own key and the shared one.
			if err := s.Put(ctx, fmt.Sprintf("conc/own%02d.ts", i), bytes.NewReader(content(i))); err != nil {
				errs <- err
			}
			if err := s.Put(ctx, "conc/shared.ts", bytes.NewReader(content(i))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Put: %v", err)
	}

	for i := range n {
		if got, _ := mustRead(t, s, fmt.Sprintf("conc/own%02d.ts", i)); !bytes.Equal(got, content(i)) {
			t.Errorf("own%02d: %d bytes, not what was written", i, len(got))
		}
	}
	// The shared key holds exactly one writer's content, never a mix.
	got, info := mustRead(t, s, "conc/shared.ts")
	i := len(got) - 64<<10
	if i < 0 || i >= n || !bytes.Equal(got, content(i)) || info.Size != int64(len(got)) {
		t.Errorf("shared: %d bytes (Size %d), not one writer's whole content", len(got), info.Size)
	}
}

// testConcurrentPutDelete races writers against deleters that empty
// neighbouring prefixes under a shared parent, which is where a store that
// prunes empty directories can remove a directory another writer is about to
// use.
func testConcurrentPutDelete(t *testing.T, s Store) {
	const n, rounds = 8, 50
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, n*rounds*2)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("race/d%d/k.ts", i)
			for range rounds {
				if err := s.Put(ctx, key, bytes.NewReader([]byte(key))); err != nil {
					errs <- fmt.Errorf("Put(%s): %w", key, err)
				}
				if err := s.Delete(ctx, key); err != nil {
					errs <- fmt.Errorf("Delete(%s): %w", key, err)
				}
			}
			if err := s.Put(ctx, key, bytes.NewReader([]byte(key))); err != nil {
				errs <- fmt.Errorf("final Put(%s): %w", key, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		key := fmt.Sprintf("race/d%d/k.ts", i)
		if got, _ := mustRead(t, s, key); string(got) != key {
			t.Errorf("%s = %q after the race, want %q", key, got, key)
		}
	}
}

func testLargeStreaming(t *testing.T, s Store, cfg config) {
	ctx := t.Context()
	const key = "large/audio.mp3"
	want := sha256.New()
	if _, err := io.Copy(want, &funcReader{n: LargeSize}); err != nil {
		t.Fatal(err)
	}

	putLive := newHeapProbe()
	before := totalAlloc()
	if err := s.Put(ctx, key, &funcReader{n: LargeSize, onRead: putLive.at}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	putAlloc := totalAlloc() - before

	readLive := newHeapProbe()
	before = totalAlloc()
	rc, info, err := s.Open(ctx, key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got := sha256.New()
	n, err := io.Copy(got, &probedReader{r: rc, probe: readLive})
	rc.Close()
	readAlloc := totalAlloc() - before
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if n != LargeSize || info.Size != LargeSize {
		t.Errorf("read %d bytes, Size %d; want %d", n, info.Size, LargeSize)
	}
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Error("content differs from what was written")
	}
	t.Logf("%d MiB object: Put allocated %d KiB and held at most %d KiB; Open+read allocated %d KiB and held at most %d KiB",
		LargeSize>>20, putAlloc>>10, putLive.peak>>10, readAlloc>>10, readLive.peak>>10)
	// Streaming means the memory held at once does not grow with the
	// object: well under half of it, whatever part buffers a store uses.
	const liveLimit = LargeSize / 4
	if putLive.peak > liveLimit || readLive.peak > liveLimit {
		t.Errorf("held %d bytes at once to Put and %d to read a %d-byte object; want at most %d each (not streaming?)",
			putLive.peak, readLive.peak, LargeSize, liveLimit)
	}
	// Nor, unless the store says why (AllocLimit), does all it allocates.
	if putAlloc > cfg.allocLimit || readAlloc > cfg.allocLimit {
		t.Errorf("allocated %d bytes to Put and %d to read a %d-byte object; want at most %d each (not streaming?)",
			putAlloc, readAlloc, LargeSize, cfg.allocLimit)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Errorf("Delete: %v", err)
	}
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// heapProbe records the most heap memory live at once above a baseline,
// measured after a garbage collection every probeEvery bytes of a stream.
type heapProbe struct {
	base, peak uint64
	next       int64 // offset of the next sample
}

const probeEvery = 4 << 20

func newHeapProbe() *heapProbe {
	return &heapProbe{base: liveHeap()}
}

// at takes a sample if the stream has reached off since the last one.
func (p *heapProbe) at(off int64) {
	if off < p.next {
		return
	}
	p.next = off + probeEvery
	if h := liveHeap(); h > p.base {
		p.peak = max(p.peak, h-p.base)
	}
}

// liveHeap returns the bytes of heap objects that survive a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// probedReader reads r, sampling probe as it goes.
type probedReader struct {
	r     io.Reader
	off   int64
	probe *heapProbe
}

func (r *probedReader) Read(p []byte) (int, error) {
	r.probe.at(r.off)
	n, err := r.r.Read(p)
	r.off += int64(n)
	return n, err
}

// funcReader yields n deterministic pseudo-random bytes without holding
// them, calling onRead (if set) with the offset before each read.
type funcReader struct {
	n, off int64
	state  uint64
	onRead func(off int64)
}

func (r *funcReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	if r.onRead != nil {
		r.onRead(r.off)
	}
	if rem := r.n - r.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	if r.state == 0 {
		r.state = 0x9e3779b97f4a7c15
	}
	for i := range p {
		// xorshift64: cheap, deterministic, incompressible enough.
		r.state ^= r.state << 13
		r.state ^= r.state >> 7
		r.state ^= r.state << 17
		p[i] = byte(r.state)
	}
	r.off += int64(len(p))
	return len(p), nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func mustPut(tb testing.TB, s Store, key string, data []byte) {
	tb.Helper()
	if err := s.Put(tb.Context(), key, bytes.NewReader(data)); err != nil {
		tb.Fatalf("Put(%q): %v", key, err)
	}
}

func mustRead(tb testing.TB, s Store, key string) ([]byte, narrator.BlobInfo) {
	tb.Helper()
	rc, info, err := s.Open(tb.Context(), key)
	if err != nil {
		tb.Fatalf("Open(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		tb.Fatalf("read %q: %v", key, err)
	}
	return data, info
}

func mustNotExist(tb testing.TB, s Store, key string) {
	tb.Helper()
	rc, _, err := s.Open(tb.Context(), key)
	if err == nil {
		rc.Close()
		tb.Fatalf("Open(%q) succeeded, want narrator.ErrBlobNotFound", key)
	}
	if !errors.Is(err, narrator.ErrBlobNotFound) {
		tb.Fatalf("Open(%q) error = %v, want narrator.ErrBlobNotFound", key, err)
	}
}
