package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// tinyPiperOptions make tinyPiper's model: each value it encodes lasts 200 samples, so that
// a sentence lasts about a second.
var tinyPiperOptions = onnxtest.PiperOptions{Repeat: 200}

// tinyPiper writes a tiny Piper voice, en_US-tiny-medium, into a new directory and returns
// its model's path.
func tinyPiper(t *testing.T) string {
	t.Helper()
	model, _ := writePiper(t, "en_US-tiny-medium", onnxtest.Piper(tinyPiperOptions), nil)
	return model
}

// writePiper writes a Piper voice NAME (such as en_US-tiny-medium) into a new directory: the
// model, and beside it the test voice's config, changed by edit unless it is nil. It returns
// the model's path and the config.
func writePiper(t *testing.T, name string, model []byte, edit func(cfg map[string]any)) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".onnx")
	if err := os.WriteFile(path, model, 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../internal/neural/testdata/en_US-test.onnx.json")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		var cfg map[string]any
		if err := json.Unmarshal(raw, &cfg); err != nil {
			t.Fatal(err)
		}
		edit(cfg)
		if raw, err = json.Marshal(cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path+".json", raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// TestVoicesInstallSandbox checks that voices install checks the model in serve's sandbox, as
// --sandbox says: on installs where the sandbox works and refuses where it does not (here a
// bwrap that fails as one without namespaces does); auto installs there too, but warns on
// stderr that the check ran unsandboxed. It sets PATH, so it runs alone.
func TestVoicesInstallSandbox(t *testing.T) {
	lib := onnxtest.Library(t)
	proctest.NeedProgram(t, "bwrap", "apt-get install bubblewrap")
	var out string
	install := func(sandbox string) (string, error) {
		t.Helper()
		var errOut string
		var err error
		out, errOut, err = runCLI(t, "voices", "install", "--data", t.TempDir(), "--onnxruntime", lib, "--gender", "female", "--sandbox", sandbox, tinyPiper(t))
		return errOut, err
	}
	if errOut, err := install(config.SandboxOn); err != nil || !strings.HasSuffix(errOut, "it keeps sentence timings (it has 0)\n") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("--sandbox on where the sandbox works: %v, stderr %q", err, errOut)
	}
	// What was installed is printed with its digest.
	sum := sha256.Sum256(onnxtest.Piper(tinyPiperOptions))
	if !regexp.MustCompile(`(?m)^en_US-tiny-medium\.onnx +\d+ +` + hex.EncodeToString(sum[:]) + `$`).MatchString(out) {
		t.Errorf("install printed no SHA-256 of the model:\n%s", out)
	}

	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "bwrap"), []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", broken+string(os.PathListSeparator)+os.Getenv("PATH"))
	if errOut, err := install(config.SandboxOn); err == nil || !strings.Contains(err.Error(), "--sandbox on, but the sandbox does not work here") {
		t.Errorf("--sandbox on without a working sandbox: %v, stderr %q; want a refusal", err, errOut)
	}
	errOut, err := install(config.SandboxAuto)
	if err != nil {
		t.Fatalf("--sandbox auto without a working sandbox: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "level=WARN") || !strings.Contains(errOut, "UNSANDBOXED") {
		t.Errorf("--sandbox auto without a working sandbox installed without a warning; stderr %q", errOut)
	}
}

// TestVoicesInstallTimings installs Piper voices: one whose model has a single Ceil node is
// stored as a copy with its durations as an output, NAME.timed.onnx, and gives word timings;
// one with none or two is stored as it is, keeps sentence timings, and the CLI says so. The
// operator's file is never changed.
func TestVoicesInstallTimings(t *testing.T) {
	t.Parallel()
	lib := onnxtest.Library(t)
	for _, ceils := range []int{1, 0, 2} {
		model := tinyPiper(t)
		orig := onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: ceils})
		if err := os.WriteFile(model, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		data := t.TempDir()
		out, errOut, err := runCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", "--json", model)
		if err != nil {
			t.Fatalf("%d Ceil nodes: install: %v\n%s", ceils, err, errOut)
		}
		after, err := os.ReadFile(model)
		if err != nil || !bytes.Equal(after, orig) {
			t.Errorf("%d Ceil nodes: the operator's model changed", ceils)
		}
		var entries []struct {
			Words bool `json:"word_timings"`
			Files []struct {
				Role, Name, SHA256 string
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries) != 1 {
			t.Fatalf("%d Ceil nodes: install printed %q: %v", ceils, out, err)
		}
		e := entries[0]
		sum := sha256.Sum256(orig)
		if ceils == 1 {
			if !e.Words || e.Files[0].Name != "en_US-tiny-medium.timed.onnx" || e.Files[0].SHA256 == hex.EncodeToString(sum[:]) || errOut != "" {
				t.Errorf("one Ceil node: installed %+v, stderr %q; want a timed copy with word timings", e, errOut)
			}
		} else if e.Words || e.Files[0].Name != "en_US-tiny-medium.onnx" || e.Files[0].SHA256 != hex.EncodeToString(sum[:]) || !strings.Contains(errOut, "keeps sentence timings") {
			t.Errorf("%d Ceil nodes: installed %+v, stderr %q; want the model as it is, with sentence timings, and a note", ceils, e, errOut)
		}
		list, _, err := runCLI(t, "voices", "list", "--data", data, "--language", "en_US")
		if err != nil {
			t.Fatal(err)
		}
		want := "sentence only"
		if ceils == 1 {
			want = "yes"
		}
		if !regexp.MustCompile(`(?m)^en_US +Tiny +Female +piper/piper-en_us-tiny-medium +medium +- +` + want).MatchString(list) {
			t.Errorf("%d Ceil nodes: voices list says\n%s\nwant word timings %q", ceils, list, want)
		}
	}
}

// TestEngineSandboxHidesData checks that the sandbox of the engines and of the model check
// hides the data directory even where it lies beside the program, whose directory the
// sandbox shows: a program there cannot read the database.
func TestEngineSandboxHidesData(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "bwrap", "apt-get install bubblewrap")
	// Outside /tmp, which the sandbox covers anyway: beside the test's own binary.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(exe), "install-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	prog, data := filepath.Join(dir, "reader"), filepath.Join(dir, "data")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexec cat \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "narrator.db"), []byte("secret rows"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := config.Backends{DataDir: data, Database: "sqlite:" + filepath.Join(data, "narrator.db"), Media: "file:" + filepath.Join(data, "media")}
	sb, err := engineSandbox(t.Context(), config.SandboxOn, b, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cmd := sb.Command(proc.Limits{}, "", prog, filepath.Join(data, "narrator.db"))
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "secret") {
		t.Errorf("a sandboxed program beside the data directory read the database: %q, %v", out, err)
	}
	// The same program reads it outside the sandbox: the check above is not vacuous.
	if out, err := exec.Command(prog, filepath.Join(data, "narrator.db")).Output(); err != nil || string(out) != "secret rows" {
		t.Fatalf("unsandboxed: %q, %v", out, err)
	}
}

// TestVoicesDownloadRefusesPlainHTTP checks that voices download refuses a mirror over plain
// http, before it fetches anything, and names the flag that would accept it.
func TestVoicesDownloadRefusesPlainHTTP(t *testing.T) {
	t.Parallel()
	_, _, err := runCLI(t, "voices", "download", "--data", t.TempDir(), "--onnxruntime", "/nonexistent", "--from", "http://127.0.0.1:1/", "en_US-tiny-medium")
	if err == nil || !strings.Contains(err.Error(), "not https") || !strings.Contains(err.Error(), "--allow-insecure-mirror") {
		t.Errorf("download from an http mirror: %v, want a refusal naming --allow-insecure-mirror", err)
	}
}
