package benchserve

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroup is a cgroup v2 leaf made for one server, so that the CPU time of
// the server and of every process it starts is counted exactly, the
// engines' short-lived processes and those they leave to init included.
type cgroup struct {
	dir string
	fd  *os.File
}

var cgroups atomic.Int64

// newCgroup makes a leaf under the cgroup v2 hierarchy, or returns an
// error where there is none or it cannot be written (not root, a
// container): the benchmarks then fall back to sampling /proc.
func newCgroup() (*cgroup, error) {
	root, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, fmt.Sprintf("narrator-bench-%d-%d", os.Getpid(), cgroups.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	fd, err := os.Open(dir)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &cgroup{dir: dir, fd: fd}, nil
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted: at
// /sys/fs/cgroup on a unified system, at /sys/fs/cgroup/unified on a
// hybrid one.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mount-point options ... - type source options
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

// attr has a process start inside the cgroup.
func (c *cgroup) attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(c.fd.Fd())}
}

// usage is the CPU time used in the cgroup so far, user and system.
func (c *cgroup) usage() (time.Duration, error) {
	raw, err := os.ReadFile(filepath.Join(c.dir, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return time.Duration(us) * time.Microsecond, err
		}
	}
	return 0, errors.New("cpu.stat has no usage_usec")
}

// remove removes the cgroup once its processes have exited.
func (c *cgroup) remove() {
	c.fd.Close()
	// A process that has exited may take a moment to leave it.
	for range 50 {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
