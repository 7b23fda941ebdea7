// Package proc runs external programs, which can hang or crash. Every subprocess of Narrator
// is run through it.
//
// Speech engines and the MP3 encoder are external programs that sometimes never answer or die
// on odd input. proc starts each in a process group of its own that also dies with us
// (Isolate), kills the whole group when it must (Kill), bounds each unit of work by a time
// limit that grows with its text (Limit), and keeps the tail of a process's stderr for error
// messages (Tail). Runner puts these together for engines that run one short-lived process per
// unit: it caps concurrency, kills a process that overruns its limit, retries a failed unit
// once on a fresh process, and kills every running process on Close. Stream puts them together
// for a long-lived filter such as lame, fed on its stdin while its stdout is copied on: it kills
// the group when its context ends. The festival engine keeps long-lived processes of its own
// and uses the parts directly. Sandbox makes the command of each, when the server runs its
// engines sandboxed: the program then runs in bubblewrap with less power than the server.
package proc

import (
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Default parts of a unit's time limit; see Limit.
const (
	DefaultUnitTimeout = 5 * time.Second
	DefaultCharTimeout = 200 * time.Millisecond
)

// Limit returns the time limit of one unit of text: unit plus perChar for every byte of text. A
// zero or negative unit means DefaultUnitTimeout, and likewise perChar DefaultCharTimeout.
func Limit(unit, perChar time.Duration, text string) time.Duration {
	if unit <= 0 {
		unit = DefaultUnitTimeout
	}
	if perChar <= 0 {
		perChar = DefaultCharTimeout
	}
	return unit + time.Duration(len(text))*perChar
}

// Isolate makes cmd, before it starts, the leader of a process group of its own, so that Kill
// also reaches anything it starts; and has the kernel kill it when our thread dies, so that a
// crashed narrator leaves no engine behind.
func Isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Nice is the niceness engine processes run at, above the server's 0: when
// synthesis saturates the cores, the kernel then gives the API's threads
// the CPU first, so that reads answer in milliseconds, while an otherwise
// idle machine still runs the engines at full speed
// (docs/architecture.md, "The API's reads and writes").
const Nice = 10

// Lower sets the niceness of cmd, started after Isolate, and of its process
// group, to Nice. The process runs at the server's niceness for the moment
// between its start and this call. An error is ignored: the process then
// merely competes with the server as an equal.
func Lower(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, Nice)
	}
}

// Kill kills the process group of cmd, started after Isolate, with SIGKILL. It does nothing if
// cmd has not started. Even after cmd itself has exited it reaches the children left in its
// group: the group ID cannot be reused while any of them lives.
func Kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Abbrev shortens a unit's text to at most 60 characters, for error messages.
func Abbrev(text string) string {
	if r := []rune(text); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return text
}

// defaultTailSize is how many bytes a Tail keeps when its Size is zero.
const defaultTailSize = 1024

// Tail is an io.Writer that keeps the last bytes written to it: a process's stderr, for error
// messages. The zero value is ready to use. It is safe for concurrent use.
type Tail struct {
	// Size is how many bytes are kept. Zero means 1 KiB. Set it before the first Write.
	Size int
	// SkipFunc, if set, reports the lines, without their line ends, that Suffix leaves out:
	// noise a program prints on every run, which would only hide the message that matters.
	SkipFunc func(line string) bool

	mu  sync.Mutex
	buf []byte
}

// Write keeps the end of b. It never fails.
func (t *Tail) Write(b []byte) (int, error) {
	size := t.Size
	if size <= 0 {
		size = defaultTailSize
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - size; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// Reset forgets what was written, as before a new command to a long-lived process.
func (t *Tail) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// String returns the kept bytes as they were written.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Suffix returns "; stderr: " and the kept text, without the lines SkipFunc reports, trimmed
// and made valid UTF-8, for appending to an error message; or "" if nothing but white space is
// left.
func (t *Tail) Suffix() string {
	s := strings.ToValidUTF8(t.String(), "?")
	if t.SkipFunc != nil {
		var kept strings.Builder
		for line := range strings.Lines(s) {
			if !t.SkipFunc(strings.TrimRight(line, "\r\n")) {
				kept.WriteString(line)
			}
		}
		s = kept.String()
	}
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	return "; stderr: " + s
}
