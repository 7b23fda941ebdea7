// Package proctest helps the tests of code that runs programs: finding the program or
// skipping, scripts that stand in for a program and misbehave, and checks that the processes
// they leave behind were killed.
//
// A test whose program is missing skips, unless NARRATOR_TEST_FULL=1 (scripts/test.sh), where
// nothing may be skipped and it fails instead.
package proctest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/proc"
)

// Full reports whether NARRATOR_TEST_FULL=1 is set: the complete test command (scripts/test.sh)
// runs everything, and a test that would skip for want of something fails instead. Tests call
// Missing; Full is for what has no testing.TB, such as a TestMain.
func Full() bool { return os.Getenv("NARRATOR_TEST_FULL") == "1" }

// Missing ends the test because something it needs, described by what, is not installed:
// install says how to install it. The test skips, or fails when NARRATOR_TEST_FULL=1.
func Missing(tb testing.TB, what, install string) {
	tb.Helper()
	if Full() {
		tb.Fatalf("%s not installed (%s), and NARRATOR_TEST_FULL=1 forbids skipping", what, install)
	}
	tb.Skipf("%s not installed (%s); set NARRATOR_TEST_FULL=1 to make this a failure", what, install)
}

// NeedEnv returns the environment variable name, which names a part the test needs, what; if
// it is empty it calls Missing, with install saying how to set it.
func NeedEnv(tb testing.TB, name, what, install string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		Missing(tb, what+" ("+name+" is not set)", install)
	}
	return v
}

// NeedProgram calls Missing unless program is found in PATH.
func NeedProgram(tb testing.TB, program, install string) {
	tb.Helper()
	if _, err := exec.LookPath(program); err != nil {
		Missing(tb, program, install)
	}
}

// Script writes body, a shell script without its "#!/bin/sh" line, to an executable file in a
// new temporary directory, and returns its path.
func Script(tb testing.TB, body string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "script.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		tb.Fatal(err)
	}
	// A process that another test forked while the file was open for
	// writing holds that descriptor until it execs, and executing the
	// script meanwhile fails with "text file busy" (golang/go#22315). The
	// window is the time between a fork and its exec: a moment suffices.
	time.Sleep(100 * time.Millisecond)
	return path
}

// PID waits up to 30 s (a loaded machine starts processes slowly) until the file at path holds a process ID and a newline, as a script's
// "echo $$ > path" writes, and returns the ID.
func PID(tb testing.TB, path string) int {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		return pid
	}
	tb.Fatalf("%s: no process ID within 30s", path)
	return 0
}

// Exited fails the test unless process pid, described by what, has exited (it is gone, or a
// zombie) within 10 s; a child left running sleeps far longer.
func Exited(tb testing.TB, pid int, what string) {
	tb.Helper()
	exited := func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		// The state follows the command name, which is in parentheses.
		return err != nil || strings.Contains(string(stat), ") Z ")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !exited() {
		if time.Now().After(deadline) {
			tb.Errorf("process %d (%s) still runs", pid, what)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CancelKills checks that cancelling op kills the hung process it runs with that process's
// child: it runs op with a context that it cancels once the child's process ID is in pidFile,
// and fails tb unless op then returns context.Canceled within wait and the child, which what
// names, has exited.
func CancelKills(tb testing.TB, pidFile string, wait time.Duration, what string, op func(ctx context.Context) error) {
	tb.Helper()
	ctx, cancel := context.WithCancel(tb.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- op(ctx) }()
	pid := PID(tb, pidFile)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			tb.Errorf("error after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(wait):
		tb.Fatalf("still running %s after cancel", wait)
	}
	Exited(tb, pid, what)
}

// Sandbox returns a proc.Sandbox that hides the directories hide, checked with Probe; or it
// calls Missing if bwrap is not installed.
func Sandbox(tb testing.TB, hide ...string) *proc.Sandbox {
	tb.Helper()
	NeedProgram(tb, "bwrap", "apt-get install bubblewrap")
	s, err := proc.NewSandbox(proc.SandboxOptions{Hide: hide})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Probe(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return s
}
