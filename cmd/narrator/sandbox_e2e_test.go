//go:build e2e

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxedServe serves from a data directory with an accented name, with --sandbox on:
// the festival processes of the pool run in the sandbox (in its scratch directory, in a
// network namespace of their own), and an audio is made.
func TestSandboxedServe(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "Données")
	acct := mustJSON[accountOut](t, mustCLI(t, "accounts", "create", "--data", data, "--name", "Acme"))
	proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "P", "--language", "en_US"))
	s := startServer(t, data, freeAddr(t), "--sandbox", "on", "--unit-workers", "1")
	s.logs.waitFor(t, "speech engines run sandboxed")

	// The pool's festival runs in its scratch directory, under the data directory, in a
	// network namespace that is not the server's.
	ownNet, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "festival" {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, data+string(filepath.Separator)) {
			continue
		}
		found++
		if net, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); err != nil || net == ownNet {
			t.Errorf("festival process %s shares the server's network namespace (%s, %v)", e.Name(), net, err)
		}
	}
	if found == 0 {
		t.Error("no festival process runs in a scratch directory of the data directory")
	}

	s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Sandboxed", "body": "<p>The engines run in a sandbox, with nothing of the server's in reach.</p>", "external_id": "sb-1",
	})
	a := s.waitProcessed(t, proj.ID, "sb-1", acct.APIKey, 90*time.Second)
	res, body := fetch(t, a.url(t, "mp3"))
	if res.StatusCode != 200 {
		t.Fatalf("mp3: %d", res.StatusCode)
	}
	if d, rms := decodeMP3(t, body); d < 2*time.Second || rms < 0.01 {
		t.Errorf("mp3 lasts %s at RMS %.3f, want speech", d, rms)
	}
}
