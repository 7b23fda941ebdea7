package main

import (
	"bufio"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/proctest"
)

// unitFile is the systemd unit shipped in deploy/.
const unitFile = "../../deploy/narrator.service"

// parseUnit reads a systemd unit into section → key → values, in order.
func parseUnit(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unit := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			unit[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not KEY=VALUE in a section", path, n, line)
			}
			unit[section][k] = append(unit[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return unit
}

// TestSystemdUnit checks deploy/narrator.service: the hardening it must
// have, nothing that stops bwrap from sandboxing the engines, a serve
// configuration that validates, and, where systemd-analyze is installed,
// that systemd itself finds nothing wrong with it.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	unit := parseUnit(t, unitFile)
	want := map[string]map[string]string{
		"Service": {
			"User":                  "narrator",
			"Group":                 "narrator",
			"ExecStart":             "/usr/local/bin/narrator serve",
			"Environment":           "NARRATOR_DATA=/var/lib/narrator",
			"EnvironmentFile":       "-/etc/narrator/narrator.env",
			"Restart":               "on-failure",
			"StateDirectory":        "narrator",
			"ReadWritePaths":        "/var/lib/narrator",
			"NoNewPrivileges":       "yes",
			"ProtectSystem":         "strict",
			"ProtectHome":           "yes",
			"PrivateTmp":            "yes",
			"CapabilityBoundingSet": "",
		},
		"Install": {"WantedBy": "multi-user.target"},
	}
	for section, keys := range want {
		for k, v := range keys {
			got := unit[section][k]
			if len(got) != 1 || got[0] != v {
				t.Errorf("[%s] %s = %q, want exactly %q", section, k, got, v)
			}
		}
	}
	// bwrap, which sandboxes the engines, needs user namespaces and a
	// /proc it can mount again.
	for _, k := range []string{"RestrictNamespaces", "PrivateUsers", "ProtectKernelTunables", "ProtectKernelLogs", "ProtectProc", "ProcSubset"} {
		if v, ok := unit["Service"][k]; ok {
			t.Errorf("[Service] %s = %q would stop bwrap from sandboxing the engines", k, v)
		}
	}
	// The unit's environment is a valid serve configuration.
	env := map[string]string{}
	for _, kv := range unit["Service"]["Environment"] {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	finish := config.ServeFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(strings.Fields(strings.TrimPrefix(unit["Service"]["ExecStart"][0], "/usr/local/bin/narrator serve"))); err != nil {
		t.Fatal(err)
	}
	cfg, err := finish()
	if err != nil {
		t.Fatalf("the unit's serve configuration: %v", err)
	}
	if cfg.DataDir != unit["Service"]["ReadWritePaths"][0] || cfg.Database != "sqlite:/var/lib/narrator/narrator.db" {
		t.Errorf("serve would use data %s and database %s, outside ReadWritePaths", cfg.DataDir, cfg.Database)
	}

	t.Run("systemd-analyze verify", func(t *testing.T) {
		proctest.NeedProgram(t, "systemd-analyze", "apt-get install systemd")
		// verify checks that ExecStart exists: point it at the built binary.
		raw, err := os.ReadFile(unitFile)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "narrator.service")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(raw), "/usr/local/bin/narrator", binary)), 0o644); err != nil {
			t.Fatal(err)
		}
		// It warns of unknown keys and bad values, but exits 0: any output
		// is a failure.
		out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
}
