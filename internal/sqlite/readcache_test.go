package sqlite

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// The read cache answers only while the database is unchanged: a change
// made by another process (here a second store on the same file, as the
// CLI beside a server is) shows at once, and so does one made by the
// store itself.
func TestReadCacheSeesEveryCommit(t *testing.T) {
	ctx := t.Context()
	path := t.TempDir() + "/narrator.db"
	server := mustOpenPath(t, path, withJobs(recorderJobs{&storetest.Recorder{}}))
	cli := mustOpenPath(t, path, withJobs(recorderJobs{&storetest.Recorder{}}))

	p := mustProject(t, cli)
	hash := []byte("0123456789abcdef0123456789abcdef")
	key, err := cli.CreateAPIKey(ctx, p.AccountID, hash, "nk_")
	if err != nil {
		t.Fatal(err)
	}
	a := &narrator.Audio{ProjectID: p.ID, Title: "T", Body: "Hello there.", ExternalID: "ext", Metadata: map[string]string{"k": "v"}}
	if _, err := server.CreateAudio(ctx, a); err != nil {
		t.Fatal(err)
	}

	for range 2 { // the second answer comes from the cache
		if got, err := server.AuthorizeProject(ctx, hash, p.ID); err != nil || got.ID != p.ID || got.AudioCount != 1 {
			t.Fatalf("AuthorizeProject = %+v, %v", got, err)
		}
		got, err := server.FindAudio(ctx, p.ID, "ext")
		if err != nil || got.ID != a.ID || got.Title != "T" {
			t.Fatalf("FindAudio = %+v, %v", got, err)
		}
		// A caller's changes stay its own.
		got.Title, got.Metadata["k"], got.Media[0].Key = "changed", "changed", "changed"
	}
	if got, _ := server.FindAudio(ctx, p.ID, "ext"); got.Title != "T" || got.Metadata["k"] != "v" || got.Media[0].Key != "" {
		t.Errorf("a caller's change reached the cache: %+v", got)
	}

	for range 2 { // the second page comes from the cache
		list, err := server.ListAudios(ctx, p.ID, time.Time{}, 1, 50)
		if err != nil || len(list) != 1 || list[0].Title != "T" {
			t.Fatalf("ListAudios = %+v, %v", list, err)
		}
		list[0].Title, list[0].Metadata["k"] = "changed", "changed"
	}

	// Another process revokes the key: refused at once.
	if err := cli.RevokeAPIKey(ctx, p.AccountID, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := server.AuthorizeProject(ctx, hash, p.ID); narrator.ErrorCode(err) != narrator.EUNAUTHORIZED {
		t.Errorf("AuthorizeProject after another process revoked the key: %v, want EUNAUTHORIZED", err)
	}

	// Another process changes the audio: seen at once.
	title := "New title"
	if _, err := cli.UpdateAudio(ctx, p.ID, "ext", narrator.AudioUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if got, err := server.FindAudio(ctx, p.ID, "ext"); err != nil || got.Title != title {
		t.Errorf("FindAudio after another process's update = %+v, %v; want title %q", got, err, title)
	}
	if list, err := server.ListAudios(ctx, p.ID, time.Time{}, 1, 50); err != nil || len(list) != 1 || list[0].Title != title || list[0].Metadata["k"] != "v" {
		t.Errorf("ListAudios after another process's update = %+v, %v; want title %q and the metadata as stored", list, err, title)
	}

	// The store's own delete: gone at once.
	if _, err := server.DeleteAudio(ctx, p.ID, "ext"); err != nil {
		t.Fatal(err)
	}
	if got, err := server.FindAudio(ctx, p.ID, "ext"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("FindAudio after delete = %+v, %v; want ENOTFOUND", got, err)
	}
	if list, err := server.ListAudios(ctx, p.ID, time.Time{}, 1, 50); err != nil || len(list) != 0 {
		t.Errorf("ListAudios after delete = %+v, %v; want none", list, err)
	}
}

// A commit by a bare connection, not a store (the sqlite3 shell, say),
// empties the read cache as well: the WAL-index header moves with any
// connection's commit.
func TestReadCacheSeesABareConnection(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "narrator.db")
	s := mustOpenPath(t, path, withJobs(recorderJobs{&storetest.Recorder{}}))
	p := mustProject(t, s)
	a := &narrator.Audio{ProjectID: p.ID, Title: "T", Body: "Hello there.", ExternalID: "ext"}
	if _, err := s.CreateAudio(ctx, a); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, err := s.FindAudio(ctx, p.ID, "ext"); err != nil || got.Title != "T" {
			t.Fatalf("FindAudio = %+v, %v", got, err)
		}
	}
	s.cache.mu.Lock()
	kept := len(s.cache.audios)
	s.cache.mu.Unlock()
	if kept != 1 {
		t.Fatalf("%d audios kept, want 1", kept)
	}

	bare, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if _, err := bare.ExecContext(ctx, "UPDATE audios SET title = 'Bare' WHERE id = ?", a.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindAudio(ctx, p.ID, "ext"); err != nil || got.Title != "Bare" {
		t.Errorf("FindAudio after a bare connection's update = %+v, %v; want title %q", got, err, "Bare")
	}
}

// The read cache's -shm descriptor must not cost the process SQLite's own
// locks: closing any descriptor of a file drops every POSIX lock the
// process holds on it, and another process that then finds the WAL
// index's "in use" lock free resets the index under the server's
// connections (a disk I/O error at the server's next commit). A second
// process checks that the lock is still held after the store opened.
func TestReadCacheKeepsSQLiteLocks(t *testing.T) {
	if path := os.Getenv("NARRATOR_SHM_LOCK_PROBE"); path != "" {
		probeDMSLock(path)
		return
	}
	path := filepath.Join(t.TempDir(), "narrator.db")
	mustOpenPath(t, path, withJobs(recorderJobs{&storetest.Recorder{}}))
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadCacheKeepsSQLiteLocks$")
	cmd.Env = append(os.Environ(), "NARRATOR_SHM_LOCK_PROBE="+path+"-shm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "dms held") {
		t.Errorf("another process could take the WAL index's DMS lock: this process dropped it\n%s", out)
	}
}

// probeDMSLock tries, from another process, to take the lock by which
// SQLite's unix VFS tells that some process has the WAL index open: byte
// 128 of the -shm file ((22 + 8) * 4 + 8, UNIX_SHM_DMS in os_unix.c).
func probeDMSLock(path string) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 128, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		fmt.Println("dms held:", err)
		return
	}
	fmt.Println("dms free")
}

// TestNoReadCache checks that with the read cache off nothing is kept: every read goes to
// the database.
func TestNoReadCache(t *testing.T) {
	ctx := t.Context()
	for _, off := range []bool{false, true} {
		opts := withJobs(recorderJobs{&storetest.Recorder{}})
		opts.NoReadCache = off
		s := mustOpen(t, opts)
		p := mustProject(t, s)
		a := &narrator.Audio{ProjectID: p.ID, Title: "T", Body: "Hello there.", ExternalID: "ext"}
		if _, err := s.CreateAudio(ctx, a); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := s.FindAudio(ctx, p.ID, "ext"); err != nil {
				t.Fatal(err)
			}
		}
		s.cache.mu.Lock()
		kept := len(s.cache.audios)
		s.cache.mu.Unlock()
		if (kept == 0) != off {
			t.Errorf("read cache off %v: %d audios kept", off, kept)
		}
	}
}

// TestWALIndexHeaderLayout pins the part of SQLite's file format that the read cache relies
// on (https://sqlite.org/walformat.html, "the WAL-index header"; the struct WalIndexHdr of
// wal.c): the -shm file starts with two copies of a 48-byte header in the machine's byte
// order, which a commit writes, the second copy first, and which holds, as 32-bit words,
// iVersion (3007000), a word unused, iChange (grows at every commit), isInit, bigEndCksum and
// szPage (a byte, a byte and 16 bits: 1, then the page size), mxFrame (the WAL's last valid
// frame), nPage (the database's size in pages), and the checksums and salts. The cache
// compares the first copy whole, and only when the second agrees. If a new SQLite moves any
// of it, this fails, and the cache must be revised or turned off (Options.NoReadCache).
func TestWALIndexHeaderLayout(t *testing.T) {
	ctx := t.Context()
	s := mustOpen(t, withJobs(recorderJobs{&storetest.Recorder{}}))
	commit := func() {
		t.Helper()
		if err := s.CreateAccount(ctx, &narrator.Account{Name: "Acme"}); err != nil {
			t.Fatal(err)
		}
	}
	var pageSize, pages uint32
	if err := s.writer.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	commit()
	before, ok := s.cache.header()
	if !ok {
		t.Fatal("the header's two copies differ with no commit under way")
	}
	if before[0] != 3007000 {
		t.Fatalf("iVersion = %d, want 3007000: SQLite's WAL-index format changed", before[0])
	}
	var word3 [4]byte
	binary.NativeEndian.PutUint32(word3[:], before[3])
	if isInit, szPage := word3[0], binary.NativeEndian.Uint16(word3[2:]); isInit != 1 || uint32(szPage) != pageSize {
		t.Errorf("isInit = %d, szPage = %d; want 1 and the page size, %d", isInit, szPage, pageSize)
	}
	if err := s.writer.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if before[4] == 0 || before[5] != pages {
		t.Errorf("mxFrame = %d, nPage = %d; want frames in the WAL and the database's %d pages", before[4], before[5], pages)
	}
	commit()
	after, ok := s.cache.header()
	if !ok || after == before || after[0] != 3007000 {
		t.Fatalf("after a commit the header is %v (copies agree: %v), before %v: it did not change", after, ok, before)
	}
	if after[2] <= before[2] {
		t.Errorf("iChange went from %d to %d at a commit; want it to grow", before[2], after[2])
	}
}
