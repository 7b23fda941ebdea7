package proc_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// TestMain lets the test binary serve as the program a sandbox runs (see probe).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == probeArg {
		probe(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == terminalArg {
		terminalSession()
		return
	}
	os.Exit(m.Run())
}

// probeArg, as the first argument, makes the test binary run probe.
const probeArg = "sandbox-probe"

// probeReport is what probe finds it can do: the error of each attempt, "" for success.
type probeReport struct {
	ReadSecret   string   `json:"read_secret"`
	ListData     []string `json:"list_data"`
	WriteData    string   `json:"write_data"`
	WriteScratch string   `json:"write_scratch"`
	WriteHome    string   `json:"write_home"`
	WriteRoot    string   `json:"write_root"`
	WriteTmp     string   `json:"write_tmp"`
	Dial         string   `json:"dial"`
	Interfaces   []string `json:"interfaces"`
	Limits       string   `json:"limits"`
	Nice         string   `json:"nice"`
	Autogroup    string   `json:"autogroup"`
	Terminal     string   `json:"terminal"`
	Env          []string `json:"env"`
}

// probe tries what an engine gone bad would, and prints a probeReport: read the secret file
// args[0], list the data directory args[1], write in it and in the scratch directory args[2],
// connect to the TCP address args[3], and reports its network interfaces, rlimits, niceness
// and environment.
func probe(args []string) {
	secret, data, scratch, addr := args[0], args[1], args[2], args[3]
	errText := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	var r probeReport
	_, err := os.ReadFile(secret)
	r.ReadSecret = errText(err)
	entries, _ := os.ReadDir(data)
	for _, e := range entries {
		r.ListData = append(r.ListData, e.Name())
	}
	r.WriteData = errText(os.WriteFile(filepath.Join(data, "planted"), []byte("x"), 0o644))
	r.WriteScratch = errText(os.WriteFile(filepath.Join(scratch, "out.wav"), []byte("x"), 0o644))
	if home, err := os.UserHomeDir(); err == nil {
		r.WriteHome = errText(os.WriteFile(filepath.Join(home, ".narrator-probe"), []byte("x"), 0o644))
		_ = os.Remove(filepath.Join(home, ".narrator-probe"))
	}
	r.WriteRoot = errText(os.WriteFile("/narrator-probe", []byte("x"), 0o644))
	_ = os.Remove("/narrator-probe")
	r.WriteTmp = errText(os.WriteFile("/tmp/narrator-probe", []byte("x"), 0o644))
	_ = os.Remove("/tmp/narrator-probe")
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		conn.Close()
	}
	r.Dial = errText(err)
	ifaces, _ := net.Interfaces()
	for _, i := range ifaces {
		r.Interfaces = append(r.Interfaces, i.Name)
	}
	limits, err := os.ReadFile("/proc/self/limits")
	r.Limits = string(limits) + errText(err)
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command's name, which ends in ')': nice is the 19th field.
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 16 {
			r.Nice = f[16]
		}
	}
	r.Terminal = errText(openTerminal())
	if ag, err := os.ReadFile("/proc/self/autogroup"); err == nil {
		r.Autogroup = strings.TrimSpace(string(ag))
	}
	r.Env = os.Environ()
	_ = json.NewEncoder(os.Stdout).Encode(r)
}

// limitsLine returns the soft and hard values of the resource named in /proc/self/limits.
func limitsLine(t *testing.T, limits, resource string) string {
	t.Helper()
	for line := range strings.Lines(limits) {
		if rest, ok := strings.CutPrefix(line, resource); ok {
			f := strings.Fields(rest)
			if len(f) >= 2 {
				return f[0] + " " + f[1]
			}
		}
	}
	t.Fatalf("no %q in /proc/self/limits:\n%s", resource, limits)
	return ""
}

// mustSandbox returns a Sandbox, or skips the test (fails it under NARRATOR_TEST_FULL=1) where
// bwrap is missing. (proctest.Sandbox is the same for the default options.)
func mustSandbox(tb testing.TB, opts proc.SandboxOptions) *proc.Sandbox {
	tb.Helper()
	proctest.NeedProgram(tb, "bwrap", "apt-get install bubblewrap")
	s, err := proc.NewSandbox(opts)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Probe(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestSandbox runs the probe as an engine's pool runs its processes (a Runner, the build func
// calling the sandbox), with a data directory laid out as the server's: the database and
// the media in it, the engines' scratch directories under it. Sandboxed, the probe can write
// only its scratch directory, cannot see the data directory, has no network, no inherited
// environment, and runs under its limits. Unsandboxed, as a control, the same probe reads
// and writes everything, which shows the test can tell.
func TestSandbox(t *testing.T) {
	t.Parallel()
	// The server's listener, on loopback.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// No memory limit: the probe is this test binary, which under the race detector needs an
	// address space of terabytes. TestSandboxLimits checks that limit with a program of C.
	limits := proc.Limits{CPU: 90 * time.Second, FileSize: 8 << 20, Procs: 500}

	tests := []struct {
		name      string
		sandboxed bool
		// inSystem puts the data directory inside a directory the sandbox shows, so that only
		// Hide keeps it out of sight.
		inSystem bool
	}{
		{name: "no sandbox (control)"},
		{name: "sandbox", sandboxed: true},
		{name: "sandbox, data inside a system directory", sandboxed: true, inSystem: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			data := filepath.Join(base, "Données")
			secret := filepath.Join(data, "media", "1", "secret.mp3")
			scratch := filepath.Join(data, "tmp", "narrator-probe", "w1")
			for _, dir := range []string{filepath.Dir(secret), scratch} {
				if err := os.MkdirAll(dir, 0o750); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{secret, filepath.Join(data, "narrator.db")} {
				if err := os.WriteFile(f, []byte("private"), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			var sb *proc.Sandbox
			if tt.sandboxed {
				opts := proc.SandboxOptions{Hide: []string{data}}
				if tt.inSystem {
					opts.System = append(proc.DefaultSystem(), base)
				}
				sb = mustSandbox(t, opts)
			}
			r := proc.NewRunner("probe", 1, nil, nil)
			t.Cleanup(r.Close)
			var rep probeReport
			build := func() *exec.Cmd {
				cmd := sb.Command(limits, scratch, os.Args[0], probeArg, secret, data, scratch, ln.Addr().String())
				cmd.Env = append(os.Environ(), "NARRATOR_TEST_SECRET=hunter2")
				return cmd
			}
			parse := func(stdout []byte) error { return json.Unmarshal(stdout, &rep) }
			if err := r.Run(t.Context(), time.Minute, build, parse); err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", rep)

			if !tt.sandboxed {
				if rep.ReadSecret != "" || rep.WriteData != "" || rep.Dial != "" || rep.WriteScratch != "" {
					t.Fatalf("unsandboxed, the probe failed to do what it tries: %+v", rep)
				}
				return
			}
			if rep.ReadSecret == "" {
				t.Error("the sandboxed probe read a file of the media")
			}
			// The data directory holds, in the sandbox, only the way to the scratch directory.
			if want := []string{"tmp"}; !slices.Equal(rep.ListData, want) {
				t.Errorf("the sandboxed probe lists %q in the data directory, want %q", rep.ListData, want)
			}
			if rep.WriteData == "" {
				t.Error("the sandboxed probe wrote in the data directory")
			}
			if _, err := os.Stat(filepath.Join(data, "planted")); err == nil {
				t.Error("the sandboxed probe planted a file in the data directory")
			}
			if rep.WriteScratch != "" {
				t.Errorf("the sandboxed probe could not write its scratch directory: %s", rep.WriteScratch)
			}
			if _, err := os.Stat(filepath.Join(scratch, "out.wav")); err != nil {
				t.Errorf("the probe's output is not in the scratch directory: %v", err)
			}
			if rep.WriteHome == "" || rep.WriteRoot == "" || rep.WriteTmp == "" {
				t.Errorf("the sandboxed probe wrote outside its scratch directory: home %q, / %q, /tmp %q", rep.WriteHome, rep.WriteRoot, rep.WriteTmp)
			}
			if rep.Dial == "" {
				t.Error("the sandboxed probe connected to the server's loopback listener")
			}
			if len(rep.Interfaces) > 1 || len(rep.Interfaces) == 1 && rep.Interfaces[0] != "lo" {
				t.Errorf("the sandboxed probe sees network interfaces %q, want only lo", rep.Interfaces)
			}
			for _, kv := range rep.Env {
				if strings.HasPrefix(kv, "NARRATOR_TEST_SECRET=") {
					t.Errorf("the sandboxed probe inherited %s", kv)
				}
			}
			for _, l := range []struct{ resource, want string }{
				{"Max cpu time", "90 90"},
				{"Max file size", "8388608 8388608"},
				{"Max processes", "500 500"},
				{"Max core file size", "0 0"},
			} {
				if got := limitsLine(t, rep.Limits, l.resource); got != l.want {
					t.Errorf("%s = %s, want %s", l.resource, got, l.want)
				}
			}
			if rep.Nice != fmt.Sprint(proc.Nice) {
				t.Errorf("nice = %s, want %d", rep.Nice, proc.Nice)
			}
			// Where the kernel schedules sessions as groups, the probe shares the
			// server's: in a group of its own it would weigh as much as the server,
			// whatever its niceness.
			if own, err := os.ReadFile("/proc/self/autogroup"); err == nil {
				if want := strings.TrimSpace(string(own)); rep.Autogroup != want {
					t.Errorf("the sandboxed probe's scheduling group is %q, want the server's, %q", rep.Autogroup, want)
				}
			}
		})
	}
}

// TestSandboxKill checks that killing a sandboxed process's group, as a Runner does to a unit
// that overruns its limit, kills the program inside the sandbox too.
func TestSandboxKill(t *testing.T) {
	t.Parallel()
	sb := mustSandbox(t, proc.SandboxOptions{})
	scratch := t.TempDir()
	r := proc.NewRunner("hang", 1, nil, nil)
	t.Cleanup(r.Close)
	build := func() *exec.Cmd {
		return sb.Command(proc.Limits{}, scratch, "sh", "-c", "sleep 1000 & wait")
	}
	err := r.Run(t.Context(), time.Second, build, nil)
	if err == nil || !strings.Contains(err.Error(), "hung") {
		t.Fatalf("err = %v, want hung", err)
	}
	// The program and its sleep have IDs of the sandbox's process namespace: find them among
	// the host's processes by their working directory, the scratch directory.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := processesIn(t, scratch)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of the killed sandbox still run", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesIn returns the host IDs of the processes whose working directory is dir.
func processesIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			found = append(found, e.Name())
		}
	}
	return found
}

// TestSandboxProbe checks that Probe reports a sandbox that cannot start programs, here a
// bwrap that always fails, as where namespaces are forbidden; and that a nil Sandbox runs
// programs as they are.
func TestSandboxProbe(t *testing.T) {
	t.Parallel()
	broken, err := proc.NewSandbox(proc.SandboxOptions{Bwrap: proctest.Script(t, `echo "bwrap: No permissions to create new namespace" >&2; exit 1`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := broken.Probe(t.Context()); err == nil || !strings.Contains(err.Error(), "No permissions") {
		t.Errorf("Probe = %v, want the error with bwrap's complaint", err)
	}
	if _, err := proc.NewSandbox(proc.SandboxOptions{Bwrap: filepath.Join(t.TempDir(), "no-bwrap")}); err == nil {
		t.Error("NewSandbox found a bwrap that does not exist")
	}
	var none *proc.Sandbox
	if err := none.Probe(t.Context()); err != nil {
		t.Errorf("nil Probe = %v", err)
	}
	if cmd := none.Command(proc.Limits{Memory: 1 << 20}, "", "true", "x"); !slices.Equal(cmd.Args, []string{"true", "x"}) {
		t.Errorf("nil Command runs %q, want the program as it is", cmd.Args)
	}
}

// TestSandboxLimits checks every limit of Limits in /proc/self/limits of a sandboxed program,
// started as a pool starts one.
func TestSandboxLimits(t *testing.T) {
	t.Parallel()
	sb := mustSandbox(t, proc.SandboxOptions{})
	limits := proc.Limits{Memory: 1 << 30, CPU: 90 * time.Second, FileSize: 8 << 20, Procs: 500}
	r := proc.NewRunner("cat", 1, nil, nil)
	t.Cleanup(r.Close)
	var got string
	build := func() *exec.Cmd { return sb.Command(limits, "", "cat", "/proc/self/limits") }
	parse := func(stdout []byte) error { got = string(stdout); return nil }
	if err := r.Run(t.Context(), time.Minute, build, parse); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ resource, want string }{
		{"Max address space", "1073741824 1073741824"},
		{"Max cpu time", "90 90"},
		{"Max file size", "8388608 8388608"},
		{"Max processes", "500 500"},
		{"Max core file size", "0 0"},
	} {
		if v := limitsLine(t, got, l.resource); v != l.want {
			t.Errorf("%s = %s, want %s", l.resource, v, l.want)
		}
	}
}

// terminalArg, as the first argument, makes the test binary run terminalSession.
const terminalArg = "sandbox-terminal"

// openTerminal opens the controlling terminal, /dev/tty, and checks that it is a terminal,
// as pushing input into it (TIOCSTI) would need.
func openTerminal() error {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var pgrp int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp))); errno != 0 {
		return fmt.Errorf("/dev/tty is not a terminal: %w", errno)
	}
	return nil
}

// terminalSession runs in a session whose controlling terminal is its standard input, as a
// server started from a shell does. It prints "<own> <probe's>": what openTerminal says
// for itself, then for the probe run sandboxed, as an engine's pool runs it.
func terminalSession() {
	sb, err := proc.NewSandbox(proc.SandboxOptions{})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	scratch, err := os.MkdirTemp("", "narrator-terminal-")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer os.RemoveAll(scratch)
	var out strings.Builder
	cmd := sb.Command(proc.Limits{}, scratch, os.Args[0], probeArg, "/nonexistent", scratch, scratch, "127.0.0.1:1")
	cmd.Stdout = &out
	proc.Isolate(cmd)
	if err := cmd.Run(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	var rep probeReport
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	own := ""
	if err := openTerminal(); err != nil {
		own = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode([]string{own, rep.Terminal})
}

// TestSandboxTerminal runs the probe sandboxed from a session that has a controlling
// terminal (a pseudo-terminal made here), as a server started from a shell would: the
// session can open its terminal, which shows the test can tell, and the probe cannot, so
// it cannot push input into it.
func TestSandboxTerminal(t *testing.T) {
	t.Parallel()
	mustSandbox(t, proc.SandboxOptions{})
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		proctest.Missing(t, fmt.Sprintf("pseudo-terminals (/dev/ptmx: %v)", err), "mount devpts on /dev/pts")
	}
	defer ptmx.Close()
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlock pseudo-terminal: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("name pseudo-terminal: %v", errno)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out strings.Builder
	cmd := exec.CommandContext(t.Context(), os.Args[0], terminalArg)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var got []string
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil || len(got) != 2 {
		t.Fatalf("session printed %q", out.String())
	}
	if got[0] != "" {
		t.Fatalf("the session cannot open its own terminal (%s): the test cannot tell", got[0])
	}
	if got[1] == "" {
		t.Error("the sandboxed probe opened the session's terminal")
	}
	t.Logf("the sandboxed probe's attempt: %s", got[1])
}
