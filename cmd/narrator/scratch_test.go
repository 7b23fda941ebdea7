package main

import (
	"os"
	"path/filepath"
	"testing"
)

// openClose opens an api node on data, as serve does at start-up, and
// closes it.
func openClose(t *testing.T, data string) {
	t.Helper()
	if err := openAPINode(t, data).close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestScratchCleanupOnlyWhenMarked: start-up empties the scratch directory
// only when Narrator made it and marked it; a directory of that name made
// by anyone else (--data / would make it /tmp) is left as it is.
func TestScratchCleanupOnlyWhenMarked(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	scratch := filepath.Join(data, "tmp")
	precious := filepath.Join(scratch, "precious")
	if err := os.MkdirAll(scratch, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(precious, []byte("not narrator's"), 0o600); err != nil {
		t.Fatal(err)
	}
	openClose(t, data)
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("start-up removed a file from a scratch directory it did not make: %v", err)
	}

	// A directory Narrator made is its own to empty.
	data = t.TempDir()
	openClose(t, data)
	leftover := filepath.Join(data, "tmp", "leftover")
	if err := os.WriteFile(leftover, []byte("from a crash"), 0o600); err != nil {
		t.Fatal(err)
	}
	openClose(t, data)
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatalf("start-up left a leftover scratch file of its own: %v", err)
	}
}

// TestScratchLinkNotEmptied: a scratch directory that is a link is used,
// and what it points to is never emptied.
func TestScratchLinkNotEmptied(t *testing.T) {
	t.Parallel()
	data, elsewhere := t.TempDir(), t.TempDir()
	precious := filepath.Join(elsewhere, "precious")
	if err := os.WriteFile(precious, []byte("not narrator's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, scratchMark), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(data, "tmp")); err != nil {
		t.Fatal(err)
	}
	openClose(t, data)
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("start-up emptied what the scratch link points to: %v", err)
	}
}
