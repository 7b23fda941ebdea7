package mp3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/proctest"
)

// lameChunk is a chunk of a tone, whole frames, to encode.
func lameChunk() mp3.Chunk {
	return mp3.Chunk{Samples: tone(440, 0.3, time.Second)[:20*mp3.FrameSamples], Last: true}
}

// realLame is lame's path, for fake lames that hand over to it.
func realLame(t *testing.T) string {
	t.Helper()
	needTool(t, "lame")
	path, err := exec.LookPath("lame")
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestChunkPoolReusesWorkers checks that one worker encodes chunk after
// chunk, each as a fresh lame would.
func TestChunkPoolReusesWorkers(t *testing.T) {
	t.Parallel()
	shells := filepath.Join(t.TempDir(), "shells")
	fake := proctest.Script(t, fmt.Sprintf("echo $PPID >> %s\nexec %s \"$@\"", shells, realLame(t)))
	want, err := newPool(t, mp3.Options{}).Encode(t.Context(), lameChunk())
	if err != nil {
		t.Fatal(err)
	}
	pool := mp3.NewChunkPool(mp3.Options{Lame: fake}, 1, t.TempDir())
	defer pool.Close()
	for i := range 3 {
		got, err := pool.Encode(t.Context(), lameChunk())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("chunk %d: %d bytes unlike the %d of a pool's first", i, len(got), len(want))
		}
	}
	raw, err := os.ReadFile(shells)
	if err != nil {
		t.Fatal(err)
	}
	if pids := strings.Fields(string(raw)); len(pids) != 3 || pids[0] != pids[1] || pids[1] != pids[2] {
		t.Errorf("lame's parents %v, want one shell three times", pids)
	}
}

// TestChunkPoolReplacesDeadWorker kills a worker's shell while its lame
// runs, and checks that the chunk is encoded on a fresh worker; and that
// a chunk that kills every worker fails, with both attempts' errors.
func TestChunkPoolReplacesDeadWorker(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "killed")
	once := proctest.Script(t, fmt.Sprintf("if [ ! -e %s ]; then touch %s; kill -9 $PPID; exit 1; fi\nexec %s \"$@\"", marker, marker, realLame(t)))
	pool := mp3.NewChunkPool(mp3.Options{Lame: once}, 1, t.TempDir())
	defer pool.Close()
	if _, err := pool.Encode(t.Context(), lameChunk()); err != nil {
		t.Errorf("Encode with a worker that died: %v, want the chunk encoded on a fresh one", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the fake lame never ran: %v", err)
	}

	always := proctest.Script(t, "kill -9 $PPID; exit 1")
	pool2 := mp3.NewChunkPool(mp3.Options{Lame: always}, 1, t.TempDir())
	defer pool2.Close()
	_, err := pool2.Encode(t.Context(), lameChunk())
	if err == nil || strings.Count(err.Error(), "lame worker") != 2 {
		t.Errorf("Encode with workers that always die: %v, want the errors of two attempts", err)
	}
}

// hungPool returns a pool of one worker, closed when the test ends, whose lame starts a child
// that hangs, appends the child's process ID to the file pidFile, and waits for it.
func hungPool(t *testing.T) (pool *mp3.ChunkPool, pidFile string) {
	t.Helper()
	pidFile = filepath.Join(t.TempDir(), "child.pid")
	hang := proctest.Script(t, "sleep 1000 & echo $! >> "+pidFile+"\nwait")
	pool = mp3.NewChunkPool(mp3.Options{Lame: hang}, 1, t.TempDir())
	t.Cleanup(func() { pool.Close() })
	return pool, pidFile
}

// TestChunkPoolCancelKillsGroup checks that cancelling an encoding kills
// the worker's lame with what it started, and that Encode returns at once.
func TestChunkPoolCancelKillsGroup(t *testing.T) {
	t.Parallel()
	pool, pidFile := hungPool(t)
	proctest.CancelKills(t, pidFile, 5*time.Second, "child of a cancelled lame", func(ctx context.Context) error {
		_, err := pool.Encode(ctx, lameChunk())
		return err
	})
}

// TestChunkPoolTimeout checks that a lame that hangs past the chunk's
// time limit is killed, and the chunk fails after its second attempt.
func TestChunkPoolTimeout(t *testing.T) {
	t.Parallel()
	pool, pidFile := hungPool(t)
	pool.SetTimeout(200 * time.Millisecond)
	start := time.Now()
	_, err := pool.Encode(t.Context(), lameChunk())
	if err == nil || strings.Count(err.Error(), "no reply within") != 2 {
		t.Errorf("Encode with a hung lame: %v, want two attempts killed at the limit", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Encode with a hung lame took %s", took)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(raw)) {
		var pid int
		fmt.Sscan(f, &pid)
		proctest.Exited(t, pid, "child of a hung lame")
	}
}

// TestChunkPoolClose checks that Close stops the workers and removes
// their files, and that the pool then refuses work.
func TestChunkPoolClose(t *testing.T) {
	t.Parallel()
	shellFile := filepath.Join(t.TempDir(), "shell.pid")
	fake := proctest.Script(t, fmt.Sprintf("echo $PPID > %s\nexec %s \"$@\"", shellFile, realLame(t)))
	tmp := t.TempDir()
	pool := mp3.NewChunkPool(mp3.Options{Lame: fake}, 2, tmp)
	if _, err := pool.Encode(t.Context(), lameChunk()); err != nil {
		t.Fatal(err)
	}
	shell := proctest.PID(t, shellFile)
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	proctest.Exited(t, shell, "worker shell after Close")
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d files left in the scratch directory after Close", len(left))
	}
	if _, err := pool.Encode(t.Context(), lameChunk()); !errors.Is(err, mp3.ErrClosed) {
		t.Errorf("Encode after Close: %v, want ErrClosed", err)
	}
}

// TestChunkPoolRefusesPlantedFiles has lame, which may write in its
// worker's directory, plant a link where the next chunk's input goes, and
// make its own output a link to an endless file: the server must write
// nothing through the first and not read the second.
func TestChunkPoolRefusesPlantedFiles(t *testing.T) {
	t.Parallel()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("the server's file"), 0o600); err != nil {
		t.Fatal(err)
	}
	// lame's stdin is NAME.pcm; it links NAME+1.pcm to the victim.
	plant := proctest.Script(t, fmt.Sprintf(`in=$(readlink /proc/self/fd/0); n=$(basename "$in" .pcm)
ln -s %s "$(dirname "$in")/$((n+1)).pcm"
exec %s "$@"`, victim, realLame(t)))
	pool := mp3.NewChunkPool(mp3.Options{Lame: plant}, 1, t.TempDir())
	defer pool.Close()
	for i := range 2 {
		if _, err := pool.Encode(t.Context(), lameChunk()); err != nil {
			t.Errorf("chunk %d: %v, want it encoded on a fresh worker", i, err)
		}
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "the server's file" {
		t.Errorf("the file a link pointed to now holds %d bytes", len(raw))
	}

	endless := proctest.Script(t, `out=$(readlink /proc/$$/fd/1); cat >/dev/null; rm "$out"; ln -s /dev/zero "$out"`)
	pool2 := mp3.NewChunkPool(mp3.Options{Lame: endless}, 1, t.TempDir())
	defer pool2.Close()
	done := make(chan error, 1)
	go func() {
		_, err := pool2.Encode(t.Context(), lameChunk())
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "lame's output") {
			t.Errorf("Encode of an output linked to /dev/zero: %v, want it refused", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Encode still reading an output linked to /dev/zero after 30 s")
	}
}

// TestChunkPoolLameFails checks that lame's complaint reaches the error.
func TestChunkPoolLameFails(t *testing.T) {
	t.Parallel()
	failing := proctest.Script(t, "echo out of coffee >&2; exit 3")
	pool := mp3.NewChunkPool(mp3.Options{Lame: failing}, 1, t.TempDir())
	defer pool.Close()
	_, err := pool.Encode(t.Context(), lameChunk())
	if err == nil || strings.Count(err.Error(), "out of coffee") != 2 || !strings.Contains(err.Error(), "lame failed") {
		t.Errorf("Encode with a failing lame: %v, want lame's stderr from both attempts", err)
	}
}

// TestChunkPoolSandboxedRelative encodes in a sandbox whose scratch
// directory is named by a relative path, as under serve's default
// ./narrator-data.
func TestChunkPoolSandboxedRelative(t *testing.T) {
	t.Parallel()
	needTool(t, "lame")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pool := mp3.NewChunkPool(mp3.Options{Sandbox: proctest.Sandbox(t)}, 1, rel)
	defer pool.Close()
	got, err := pool.Encode(t.Context(), lameChunk())
	if err != nil {
		t.Fatal(err)
	}
	want, err := newPool(t, mp3.Options{}).Encode(t.Context(), lameChunk())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("sandboxed chunk of %d bytes unlike the %d unsandboxed", len(got), len(want))
	}
}
