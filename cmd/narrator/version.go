package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// buildInfo is what a binary knows of its own build.
type buildInfo struct {
	Version   string // the module version; "(devel)" when built from a checkout
	Commit    string // the VCS revision, or "unknown"
	Time      string // the commit's time, RFC 3339, or ""
	Modified  bool   // the checkout had uncommitted changes
	GoVersion string // the Go toolchain, e.g. go1.26.8
	Platform  string // GOOS/GOARCH of the running binary
}

// readBuildInfo returns the binary's build information from the Go
// runtime, which the go command records in every binary it builds.
func readBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Version: "unknown", Commit: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	return parseBuildInfo(bi)
}

// parseBuildInfo picks what `narrator version` prints from bi.
func parseBuildInfo(bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: bi.Main.Version, Commit: "unknown", GoVersion: bi.GoVersion, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if b.Version == "" {
		b.Version = "unknown"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one-line form that the server logs at start.
func (b buildInfo) String() string {
	s := b.Version + " " + b.Commit
	if b.Modified {
		s += " (modified)"
	}
	return s + " " + b.GoVersion
}

// write prints b, one labelled line each.
func (b buildInfo) write(w io.Writer) {
	fmt.Fprintf(w, "narrator %s\n", b.Version)
	fmt.Fprintf(w, "commit:   %s\n", b.Commit)
	if b.Time != "" {
		fmt.Fprintf(w, "time:     %s\n", b.Time)
	}
	fmt.Fprintf(w, "modified: %t\n", b.Modified)
	fmt.Fprintf(w, "go:       %s %s\n", b.GoVersion, b.Platform)
}

// versionCommand is `narrator version`.
type versionCommand struct{ e *env }

// Run runs `narrator version`.
func (cmd versionCommand) Run(_ context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "version", "version")
	if err := parse(fs, args); err != nil {
		return err
	}
	readBuildInfo().write(e.stdout)
	return nil
}
