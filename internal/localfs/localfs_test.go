package localfs_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/blobtest"
	"github.com/narrator/narrator/internal/localfs"
)

func mustNew(tb testing.TB, root string) *localfs.Store {
	tb.Helper()
	s, err := localfs.New(root)
	if err != nil {
		tb.Fatalf("New(%q): %v", root, err)
	}
	return s
}

// TestConformance is not parallel: the suite's memory check needs the
// process to itself.
func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blobtest.Store {
		return mustNew(t, filepath.Join(t.TempDir(), "media"))
	})
}

// listFiles returns every path under dir, relative and slash-separated.
func listFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("walk %s: %v", dir, err)
	}
	return out
}

func TestBadKeysNeverEscapeRoot(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	// A file beside the root that a traversal would hit.
	victim := filepath.Join(parent, "escape.mp3")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustNew(t, filepath.Join(parent, "media"))
	ctx := t.Context()
	for _, key := range blobtest.BadKeys() {
		_ = s.Put(ctx, key, strings.NewReader("evil"))
		_ = s.Delete(ctx, key)
		_ = s.DeletePrefix(ctx, key)
	}
	if got, err := os.ReadFile(victim); err != nil || string(got) != "keep" {
		t.Errorf("file outside root: %q, %v; want it untouched", got, err)
	}
	if got := listFiles(t, parent); strings.Join(got, ",") != "escape.mp3,media" {
		t.Errorf("files under parent = %q, want only escape.mp3 and the empty root", got)
	}
}

func TestLayoutAndCleanup(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "media")
	s := mustNew(t, root)
	ctx := t.Context()
	for _, k := range []string{"tok/audio.mp3", "tok/hls/index.m3u8", "tok/hls/seg00000.ts"} {
		if err := s.Put(ctx, k, bytes.NewReader([]byte(k))); err != nil {
			t.Fatalf("Put(%s): %v", k, err)
		}
	}

	// Objects are plain readable files at their key, and no temp file is left.
	want := "tok,tok/audio.mp3,tok/hls,tok/hls/index.m3u8,tok/hls/seg00000.ts"
	if got := strings.Join(listFiles(t, root), ","); got != want {
		t.Errorf("files = %s, want %s", got, want)
	}
	fi, err := os.Stat(filepath.Join(root, "tok", "audio.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o644 {
		t.Errorf("mode = %v, want 0644", perm)
	}

	// Deleting the last objects of a directory prunes it, up to the root.
	for _, k := range []string{"tok/hls/index.m3u8", "tok/hls/seg00000.ts"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatalf("Delete(%s): %v", k, err)
		}
	}
	if got := strings.Join(listFiles(t, root), ","); got != "tok,tok/audio.mp3" {
		t.Errorf("after deleting hls/*: files = %s, want tok,tok/audio.mp3", got)
	}
	if err := s.DeletePrefix(ctx, "tok"); err != nil {
		t.Fatal(err)
	}
	if got := listFiles(t, root); len(got) != 0 {
		t.Errorf("after DeletePrefix: files = %q, want none", got)
	}
	if _, err := os.Stat(root); err != nil {
		t.Errorf("root was removed: %v", err)
	}
}

func TestFailedPutLeavesNoTempFile(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "media")
	s := mustNew(t, root)
	if err := s.Put(t.Context(), "dir/a.mp3", strings.NewReader("a")); err != nil {
		t.Fatal(err)
	}
	r := &failingReader{}
	if err := s.Put(t.Context(), "dir/b.mp3", r); err == nil {
		t.Fatal("Put with a failing reader succeeded")
	}
	if got := strings.Join(listFiles(t, root), ","); got != "dir,dir/a.mp3" {
		t.Errorf("files = %s, want dir,dir/a.mp3", got)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		return 0, fs.ErrClosed
	}
	r.n++
	return copy(p, "partial"), nil
}

func TestNewCreatesRoot(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "a", "b", "media")
	s := mustNew(t, root)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		t.Fatalf("root not created: %v", err)
	}
	if s.Root() != root {
		t.Errorf("Root() = %q, want %q", s.Root(), root)
	}

	// A root that is a file cannot be used.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := localfs.New(file); err == nil {
		t.Error("New on a regular file succeeded")
	}
}

// TestPingRemovedRoot checks that a store whose directory is gone fails
// its ping, which the server's readiness check reports.
func TestPingRemovedRoot(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "media")
	s := mustNew(t, root)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Fatal("Ping with the root removed: no error")
	}
}
