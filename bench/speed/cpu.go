package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/narrator/narrator/bench/internal/benchserve"
)

// clockTick is the unit of CPU times in /proc (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procTimes is one process's line of /proc/PID/stat.
type procTimes struct {
	comm     string
	ppid     int
	self     time.Duration // utime + stime
	children time.Duration // cutime + cstime: its waited-for children
	rssPages int64
	exists   bool
}

func readProc(pid int) procTimes {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procTimes{}
	}
	s := string(raw)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procTimes{}
	}
	// Fields after the command name, from field 3 (state) on.
	f := strings.Fields(s[end+1:])
	if len(f) < 22 {
		return procTimes{}
	}
	num := func(i int) int64 { n, _ := strconv.ParseInt(f[i-3], 10, 64); return n }
	return procTimes{
		comm:     s[open+1 : end],
		ppid:     int(num(4)),
		self:     time.Duration(num(14)+num(15)) * clockTick,
		children: time.Duration(num(16)+num(17)) * clockTick,
		rssPages: num(24),
		exists:   true,
	}
}

// cpuStat is the machine's busy and total time per core, from /proc/stat.
type cpuStat struct{ busy, total []int64 }

func readCPUStat() cpuStat {
	raw, _ := os.ReadFile("/proc/stat")
	var st cpuStat
	for line := range strings.Lines(string(raw)) {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var total, idle int64
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		st.busy = append(st.busy, total-idle)
		st.total = append(st.total, total)
	}
	return st
}

// coreBusy is each core's busy share between two samples.
func coreBusy(a, b cpuStat) []float64 {
	var out []float64
	for i := range min(len(a.total), len(b.total)) {
		if dt := b.total[i] - a.total[i]; dt > 0 {
			out = append(out, float64(b.busy[i]-a.busy[i])/float64(dt))
		}
	}
	return out
}

// loadAvg is the first line of /proc/loadavg, the machine's load.
func loadAvg() string {
	raw, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// sampler follows the CPU time of a process and of its descendants, by
// command name, from Start to Stop.
//
// Where the server runs in a cgroup of its own (benchserve.Server.CPU),
// the total is exact, and so is each command's time among the processes
// still alive at Stop (the server, its festival processes); the rest is
// what the processes that exited meanwhile used (lame's chunks, flite,
// the sandbox's starts), however short they lived.
//
// Elsewhere the total is sampled every 50 ms: a descendant counts with the
// last value seen while it lived, and those reaped by the server are made
// whole from its cutime. That misses the CPU a process used after its last
// sample, and all of a sandboxed one, whose bubblewrap leaves it to init:
// lame's chunks, mostly.
type sampler struct {
	pid   int
	every time.Duration
	// exact reads the cgroup's count; nil where there is none.
	exact func() (time.Duration, bool)

	mu        sync.Mutex
	first     map[int]procTimes // children at Start
	last      map[int]procTimes // last sample of each child seen
	root0     procTimes
	rootLast  procTimes
	cpu0      cpuStat
	cpuLast   cpuStat
	exact0    time.Duration
	peakRSS   int64 // of the children together, in bytes
	stop      chan struct{}
	done      chan struct{}
	startedAt time.Time
}

func newSampler(srv *benchserve.Server) *sampler {
	s := &sampler{pid: srv.Cmd.Process.Pid, every: 50 * time.Millisecond}
	if _, ok := srv.CPU(); ok {
		s.exact = srv.CPU
	}
	return s
}

// Start takes the first sample and samples until Stop.
func (s *sampler) Start() {
	s.first, s.last = map[int]procTimes{}, map[int]procTimes{}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.root0 = readProc(s.pid)
	for _, c := range descendants(s.pid) {
		s.first[c] = readProc(c)
	}
	s.cpu0 = readCPUStat()
	if s.exact != nil {
		s.exact0, _ = s.exact()
	}
	s.startedAt = time.Now()
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

func (s *sampler) sample() {
	var rss int64
	for _, c := range descendants(s.pid) {
		if p := readProc(c); p.exists {
			s.mu.Lock()
			s.last[c] = p
			s.mu.Unlock()
			rss += p.rssPages * int64(os.Getpagesize())
		}
	}
	s.mu.Lock()
	s.rootLast = readProc(s.pid)
	s.cpuLast = readCPUStat()
	s.peakRSS = max(s.peakRSS, rss)
	s.mu.Unlock()
}

// profile is where a run's CPU time went.
type profile struct {
	wall    time.Duration
	server  time.Duration            // narrator's own threads: Go
	byComm  map[string]time.Duration // its children, by command
	cores   []float64                // the machine's cores, busy share
	peakRSS int64
	// exact is the total counted by the server's cgroup; 0 where it has
	// none. Then byComm holds only the processes alive at the end, and
	// exited the rest.
	exact  time.Duration
	exited time.Duration
}

func (p profile) total() time.Duration {
	if p.exact > 0 {
		return p.exact
	}
	t := p.server
	for _, d := range p.byComm {
		t += d
	}
	return t
}

// utilisation is the share of all cores that narrator and its engines used.
func (p profile) utilisation() float64 {
	return p.total().Seconds() / (p.wall.Seconds() * float64(runtime.NumCPU()))
}

func (p profile) String() string {
	var b strings.Builder
	how := "sampled"
	if p.exact > 0 {
		how = "exact"
	}
	fmt.Fprintf(&b, "CPU %.2f s (%s) over %.2f s wall = %.0f %% of %d cores (go %.2f s",
		p.total().Seconds(), how, p.wall.Seconds(), 100*p.utilisation(), runtime.NumCPU(), p.server.Seconds())
	for _, c := range p.commands() {
		if d := p.byComm[c]; d > 0 {
			fmt.Fprintf(&b, ", %s %.2f s", c, d.Seconds())
		}
	}
	if p.exact > 0 {
		fmt.Fprintf(&b, ", exited processes (lame's chunks, flite, sandbox starts) %.2f s", p.exited.Seconds())
	}
	b.WriteString("); machine cores busy")
	for i, c := range p.cores {
		fmt.Fprintf(&b, " cpu%d %.0f %%", i, 100*c)
	}
	return b.String()
}

// commands lists byComm's commands, the engines first.
func (p profile) commands() []string {
	out := []string{"festival", "flite", "lame", "espeak-ng"}
	var rest []string
	for c := range p.byComm {
		if !slices.Contains(out, c) {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Stop takes a last sample and returns the profile since Start.
func (s *sampler) Stop() profile {
	close(s.stop)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := profile{wall: time.Since(s.startedAt), byComm: map[string]time.Duration{}, peakRSS: s.peakRSS,
		server: s.rootLast.self - s.root0.self, cores: coreBusy(s.cpu0, s.cpuLast)}
	live := map[int]bool{}
	for _, c := range descendants(s.pid) {
		live[c] = true
	}
	if s.exact != nil {
		if t, ok := s.exact(); ok {
			p.exact = t - s.exact0
			p.exited = p.exact - p.server
			for pid, last := range s.last {
				if live[pid] {
					d := last.self - s.first[pid].self
					p.byComm[last.comm] += d
					p.exited -= d
				}
			}
			return p
		}
	}
	var seenDead time.Duration
	for pid, last := range s.last {
		d := last.self - s.first[pid].self
		p.byComm[last.comm] += d
		if !live[pid] {
			seenDead += d
		}
	}
	if rest := (s.rootLast.children - s.root0.children) - seenDead; rest > 0 {
		p.byComm["flite"] += rest
	}
	return p
}

// descendants lists the children of a process, their children, and so on:
// the engines of a sandboxed server run under bwrap, not as its children.
func descendants(pid int) []int {
	var out []int
	for next := children(pid); len(next) > 0; {
		out = append(out, next...)
		var deeper []int
		for _, c := range next {
			deeper = append(deeper, children(c)...)
		}
		next = deeper
	}
	return out
}

// children lists the direct children of a process, from the children
// file of each of its threads (a child belongs to the thread that forked
// it).
func children(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(raw)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
