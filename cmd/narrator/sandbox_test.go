package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// TestOpenSandbox checks --sandbox: auto falls back, with one warning, where the sandbox does
// not work (here a bwrap that fails as one without namespaces does), on refuses to start,
// off runs without it, and auto and on take it where it works.
func TestOpenSandbox(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "bwrap", "apt-get install bubblewrap")
	broken := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, mode, bwrap string
		wantSandbox       bool
		wantErr           bool
		wantWarnings      int
	}{
		{name: "auto, works", mode: config.SandboxAuto, wantSandbox: true},
		{name: "on, works", mode: config.SandboxOn, wantSandbox: true},
		{name: "auto, broken", mode: config.SandboxAuto, bwrap: broken, wantWarnings: 1},
		{name: "auto, missing", mode: config.SandboxAuto, bwrap: filepath.Join(t.TempDir(), "none"), wantWarnings: 1},
		{name: "on, broken", mode: config.SandboxOn, bwrap: broken, wantErr: true},
		{name: "off", mode: config.SandboxOff, bwrap: broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			sb, err := openSandbox(t.Context(), tt.mode, proc.SandboxOptions{Bwrap: tt.bwrap}, logger)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %t", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "--sandbox on") {
				t.Errorf("err = %v, want one naming --sandbox on", err)
			}
			if (sb != nil) != tt.wantSandbox {
				t.Errorf("sandbox = %v, want one: %t", sb, tt.wantSandbox)
			}
			if got := strings.Count(logs.String(), "level=WARN"); got != tt.wantWarnings {
				t.Errorf("%d warnings, want %d:\n%s", got, tt.wantWarnings, logs.String())
			}
			if tt.wantWarnings > 0 && !strings.Contains(logs.String(), "UNSANDBOXED") {
				t.Errorf("the warning does not say the engines run unsandboxed:\n%s", logs.String())
			}
		})
	}
}

// TestSandboxOptions checks that the sandbox hides the data directory, and a SQLite database
// and media directory elsewhere.
func TestSandboxOptions(t *testing.T) {
	t.Parallel()
	b := config.Backends{DataDir: "/srv/d", Database: "sqlite:/var/lib/db/n.db", Media: "file:/mnt/media"}
	got := sandboxOptions(b).Hide
	want := []string{"/srv/d", "/var/lib/db", "/mnt/media"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Hide = %q, want %q", got, want)
	}
	b.Database, b.Media = "postgres://u@h/db", "s3://bucket"
	if got := sandboxOptions(b).Hide; len(got) != 1 || got[0] != "/srv/d" {
		t.Errorf("Hide = %q, want only the data directory", got)
	}
}
