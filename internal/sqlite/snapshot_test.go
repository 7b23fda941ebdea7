package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// TestSnapshotUnderWrites takes snapshots while creates are committed
// from several goroutines. Each create inserts an audio and its media rows
// and adds one to its project's audio_count in one transaction, so a copy
// that caught half a transaction would disagree with itself; every
// snapshot must agree, and the last one, taken after the writes, must hold
// every acknowledged create.
func TestSnapshotUnderWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	src := filepath.Join(dir, "narrator.db")
	s := mustOpenPath(t, src, withJobs(recorderJobs{&storetest.Recorder{}}))
	p := mustProject(t, s)

	var acked atomic.Int64
	stop := make(chan struct{})
	created := make(chan struct{}, 1024) // a token per acknowledged create, dropped when full
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a := &narrator.Audio{ProjectID: p.ID, Title: "T", Body: "Some words to read.", ExternalID: fmt.Sprintf("w%d-%d", w, i)}
				if _, err := s.CreateAudio(ctx, a); err != nil {
					t.Error(err)
					return
				}
				acked.Add(1)
				select {
				case created <- struct{}{}:
				default:
				}
			}
		})
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()
	check := func(path string) int64 {
		t.Helper()
		db, err := sql.Open("sqlite", path+"?_pragma=query_only(ON)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var counted, audios, media int64
		err = db.QueryRowContext(ctx, `SELECT
			(SELECT audio_count FROM projects WHERE id = ?),
			(SELECT COUNT(*) FROM audios WHERE project_id = ? AND deleted_at IS NULL),
			(SELECT COUNT(*) FROM media)`, p.ID, p.ID).Scan(&counted, &audios, &media)
		if err != nil {
			t.Fatal(err)
		}
		if counted != audios || media != 2*audios {
			t.Errorf("snapshot %s: audio_count %d, %d audios, %d media rows; want them to agree", filepath.Base(path), counted, audios, media)
		}
		return audios
	}
	var last int64
	for i := range 5 {
		for range 20 { // let more creates commit first
			select {
			case <-created:
			case <-writersDone:
				t.Fatal("the writers stopped")
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("snap-%d.db", i))
		if err := Snapshot(ctx, src, path); err != nil {
			t.Fatal(err)
		}
		n := check(path)
		if n < last {
			t.Errorf("snapshot %d has %d audios, fewer than the %d of the one before", i, n, last)
		}
		last = n
	}
	close(stop)
	<-writersDone
	final := filepath.Join(dir, "final.db")
	if err := Snapshot(ctx, src, final); err != nil {
		t.Fatal(err)
	}
	if n := check(final); n != acked.Load() {
		t.Errorf("the snapshot after the writes has %d audios, %d were acknowledged", n, acked.Load())
	}
	if last == 0 {
		t.Error("no snapshot taken under writes held an audio")
	}
}

func TestSnapshotRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "narrator.db")
	mustOpenPath(t, src, Options{})
	exists := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(exists, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.db")
	cases := []struct {
		name, src, dst, wantErr string
	}{
		{"target exists", src, exists, "exists"},
		{"no source", missing, filepath.Join(dir, "out.db"), "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Snapshot(t.Context(), c.src, c.dst)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Snapshot: %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
	if raw, err := os.ReadFile(exists); err != nil || string(raw) != "keep" {
		t.Errorf("the existing target holds %q, %v", raw, err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the missing source was created: %v", err)
	}
}
