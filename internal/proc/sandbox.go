package proc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Limits bounds the resources of one sandboxed process with rlimits, which its children
// inherit. A zero field sets no limit of its kind.
type Limits struct {
	// Memory is the size of its address space in bytes (RLIMIT_AS): an allocation past it
	// fails, and the program usually dies.
	Memory int64
	// CPU is the processor time it may use in its whole life (RLIMIT_CPU), rounded up to a
	// second; past it the kernel kills it (SIGXCPU).
	CPU time.Duration
	// FileSize is the largest file it may write, in bytes (RLIMIT_FSIZE); pipes are not
	// files, so a program that writes to stdout needs none.
	FileSize int64
	// Procs bounds the processes and threads of the user it runs as (RLIMIT_NPROC), all of
	// them, the server's included: a guard against a fork bomb, not a count of children. The
	// kernel does not enforce it for root.
	Procs int
}

// SandboxProcs is the RLIMIT_NPROC of sandboxed engines (Limits.Procs): generous, since it
// counts the server's threads too, but a bound on a fork bomb.
const SandboxProcs = 1024

// SandboxOptions configures a Sandbox.
type SandboxOptions struct {
	// Hide lists directories that sandboxed processes must not see, not even read: the data
	// directory, the database's and the media's. Only the System directories (and the
	// program's own) are mounted at all, so Hide matters for a directory inside one of them,
	// which the sandbox covers with an empty file system.
	Hide []string
	// System lists the directories shown read-only: the programs, their libraries and their
	// data. Nil means DefaultSystem(). A directory that is a symbolic link (/bin to usr/bin)
	// is recreated as one; one that does not exist is left out.
	System []string
	// Bwrap is the bubblewrap program. Empty means "bwrap", looked up in PATH.
	Bwrap string
}

// DefaultSystem returns the directories a sandbox shows by default: /usr and /etc, and the
// top-level links or directories of programs and libraries.
func DefaultSystem() []string {
	return []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
}

// Sandbox runs programs with less power than the server, with bubblewrap (bwrap) and rlimits
// (the shell's ulimit). Each process sees only the system's programs and data, read-only, an
// empty /tmp, read-only too, and, if it is given one, its own scratch directory, the only
// place it can write (TMPDIR names it). It sees no other file of the server: not the data
// directory, the database or the media. It has no network (only a loopback device of its
// own), its own process, IPC and host-name namespaces, no capabilities, no terminal (so it
// cannot push input into the server's), an empty environment but for PATH, HOME (/tmp) and
// TMPDIR, and the Limits of its program. It dies with the server, and its whole process
// namespace dies with it when Kill kills the group it was started in.
//
// A nil *Sandbox runs programs as they are: see Command. A Sandbox is safe for concurrent
// use.
type Sandbox struct {
	bwrap, sh string
	// mounts are the arguments of bwrap that build the file system every process shares:
	// the system directories, /dev, /proc and /tmp.
	mounts []string
	// visible are the real paths of the directories mounted read-only.
	visible []string
	// hide are the real paths of Hide's directories.
	hide []string
}

// NewSandbox returns a Sandbox, or an error if bwrap or sh cannot be found. It does not try
// them: Probe does.
func NewSandbox(opts SandboxOptions) (*Sandbox, error) {
	if opts.Bwrap == "" {
		opts.Bwrap = "bwrap"
	}
	if opts.System == nil {
		opts.System = DefaultSystem()
	}
	s := &Sandbox{}
	for _, p := range []struct {
		dst  *string
		name string
	}{{&s.bwrap, opts.Bwrap}, {&s.sh, "sh"}} {
		path, err := exec.LookPath(p.name)
		if err != nil {
			return nil, fmt.Errorf("new sandbox: %w", err)
		}
		*p.dst = path
	}
	for _, dir := range opts.System {
		fi, err := os.Lstat(dir)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(dir)
			if err != nil {
				return nil, fmt.Errorf("new sandbox: %w", err)
			}
			s.mounts = append(s.mounts, "--symlink", target, dir)
		case fi.IsDir():
			s.mounts = append(s.mounts, "--ro-bind", dir, dir)
			s.visible = append(s.visible, realPath(dir))
		}
	}
	for _, dir := range opts.Hide {
		s.hide = append(s.hide, realPath(dir))
	}
	// The program stays in the server's session: where the kernel schedules sessions as
	// groups (autogroup), a session of its own would weigh as much as the whole server
	// however nice the program, and synthesis would starve the API. A session's programs
	// can push input into its terminal (TIOCSTI), if the server has one, through any
	// descriptor of it. The sandbox gives it none: /dev/tty is /dev/null there, the
	// program's standard streams are pipes, files of its scratch directory or /dev/null, it
	// inherits no other descriptor, and it sees
	// neither the server's processes nor the host's terminals.
	s.mounts = append(s.mounts, "--dev", "/dev", "--ro-bind", "/dev/null", "/dev/tty", "--proc", "/proc", "--tmpfs", "/tmp")
	return s, nil
}

// realPath returns path absolute and with its symbolic links resolved, as far as it exists.
func realPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// shows reports whether the real path is inside a directory mounted read-only.
func (s *Sandbox) shows(path string) bool {
	return slices.ContainsFunc(s.visible, func(dir string) bool { return within(path, dir) })
}

// Command returns a command that runs the program name with args. With a nil Sandbox that is
// exec.Command(name, args...). Otherwise the program runs in the sandbox under lim, at
// niceness Nice, in the directory scratch (if not empty), which it can write and which must
// exist; else in /, with nowhere to write. Paths in args are read inside the sandbox: the
// scratch directory is at its own path there. A program outside the System directories is
// shown read-only with its directory (a test's script, say), unless that lies in a hidden
// one.
//
// The command is not started; the caller sets it up and starts it as it would the program
// (Isolate, then Start).
func (s *Sandbox) Command(lim Limits, scratch, name string, args ...string) *exec.Cmd {
	if s == nil {
		return exec.Command(name, args...)
	}
	path := name
	if found, err := exec.LookPath(name); err == nil {
		path = found
	}
	argv := []string{
		"--unshare-all", "--die-with-parent",
		"--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
	}
	argv = append(argv, s.mounts...)
	// Mounts are made in order: the program's directory after the system, the hidden
	// directories over both, and a scratch directory inside one of them after that.
	var progDir string
	if real := realPath(path); filepath.IsAbs(path) && !s.shows(real) && !s.hidden(real) {
		progDir, path = filepath.Dir(real), real
		argv = append(argv, "--ro-bind", progDir, progDir)
	}
	var covered []string
	for _, dir := range s.hide {
		if !s.shows(dir) && (progDir == "" || !within(dir, progDir)) {
			continue
		}
		if _, err := os.Stat(dir); err == nil {
			argv = append(argv, "--tmpfs", dir)
			covered = append(covered, dir)
		}
	}
	if scratch != "" {
		argv = append(argv, "--bind", scratch, scratch, "--chdir", scratch, "--setenv", "TMPDIR", scratch)
	} else {
		argv = append(argv, "--chdir", "/")
	}
	// The empty file systems were writable, to hold the mount points of what comes after
	// them; they are not once that is mounted, which leaves the scratch directory the only
	// writable place.
	for _, dir := range append([]string{"/", "/tmp"}, covered...) {
		argv = append(argv, "--remount-ro", dir)
	}
	// In the sandbox, a shell sets the limits, which the program inherits, and the program's
	// niceness: Lower, called on the command's process group, may come before bwrap has
	// started the program, so the shell sets Nice itself, absolutely, whatever bwrap's
	// niceness when it started the shell.
	argv = append(argv, "--", s.sh, "-c", lim.script(), path)
	return exec.Command(s.bwrap, append(argv, args...)...)
}

// hidden reports whether the real path is inside a hidden directory.
func (s *Sandbox) hidden(path string) bool {
	return slices.ContainsFunc(s.hide, func(dir string) bool { return within(path, dir) })
}

// script returns the shell script that runs the program "$0" with its arguments "$@" under
// lim, at niceness Nice. Core dumps are always off: they would land in the scratch
// directory. The shell's ulimit counts memory in KiB and files in blocks of 512 bytes:
// limits are rounded up to those.
func (lim Limits) script() string {
	cmds := []string{"ulimit -c 0"}
	if lim.Memory > 0 {
		cmds = append(cmds, "ulimit -v "+strconv.FormatInt((lim.Memory+1023)/1024, 10))
	}
	if lim.CPU > 0 {
		cmds = append(cmds, "ulimit -t "+strconv.FormatInt(int64(math.Ceil(lim.CPU.Seconds())), 10))
	}
	if lim.FileSize > 0 {
		cmds = append(cmds, "ulimit -f "+strconv.FormatInt((lim.FileSize+511)/512, 10))
	}
	if lim.Procs > 0 {
		cmds = append(cmds, "ulimit -p "+strconv.Itoa(lim.Procs))
	}
	// The shell's niceness is the 19th field of /proc/self/stat, read without starting a
	// process: a function's arguments split the fields, leaving "$@" alone.
	cmds = append(cmds, `f() { n=${19}; }`, `read -r s < /proc/self/stat`, `f $s`,
		`exec nice -n $((`+strconv.Itoa(Nice)+` - n)) "$0" "$@"`)
	return strings.Join(cmds, " && ")
}

// probeTimeout bounds Probe's run of a trivial program: bwrap starts in milliseconds, but a
// loaded machine is slow.
const probeTimeout = 30 * time.Second

// Probe runs a trivial program in the sandbox and returns an error, with bwrap's complaint, if
// it does not exit cleanly: bwrap may be unable to make namespaces here (a container that
// forbids them, a kernel without unprivileged user namespaces). A nil Sandbox probes
// nothing.
func (s *Sandbox) Probe(ctx context.Context) error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := s.Command(Limits{Memory: 256 << 20, CPU: time.Second, FileSize: 1 << 20}, "", "true")
	Isolate(cmd)
	stderr := &Tail{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("probe sandbox: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { Kill(cmd) })
	defer stop()
	err := cmd.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("probe sandbox: %w", errors.Join(err, ctx.Err()))
	}
	if err != nil {
		return fmt.Errorf("probe sandbox: %s: %w%s", filepath.Base(s.bwrap), err, stderr.Suffix())
	}
	return nil
}

// MkdirScratch makes a new directory in parent (os.TempDir() if empty), named from pattern as
// os.MkdirTemp names it, and returns its absolute path: engines write there, and a sandbox
// mounts a scratch directory at its own path, which a relative path (under the default
// ./narrator-data) would not name inside it.
func MkdirScratch(parent, pattern string) (string, error) {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	return abs, nil
}

// OpenScratchFile opens for reading a file that an engine wrote in its scratch directory,
// where a sandboxed process can also leave a link to one of the server's files, a pipe that
// would block the open, or a device that never ends: path must name a regular file itself.
// It returns the file and its size.
func OpenScratchFile(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	return f, fi.Size(), nil
}
