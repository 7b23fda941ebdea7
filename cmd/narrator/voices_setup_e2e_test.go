//go:build e2e

package main

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/proctest"
)

// runCLIEnv runs a command in-process, as runCLI does, with env as its environment.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(t.Context(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// piperMirror serves the tiny Piper voice under name, with the Piper repository's layout, on
// loopback, and counts the requests it answers.
func piperMirror(t *testing.T, name string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	model := tinyPiper(t)
	lang, rest, _ := strings.Cut(name, "-")
	speaker, quality, _ := strings.Cut(rest, "-")
	repo := map[string][]byte{}
	for _, suffix := range []string{".onnx", ".onnx.json"} {
		b, err := os.ReadFile(strings.TrimSuffix(model, ".onnx") + suffix)
		if err != nil {
			t.Fatal(err)
		}
		repo[filepath.Join(lang[:2], lang, speaker, quality, name+suffix)] = b
	}
	files := map[string]map[string]any{}
	for p, b := range repo {
		files[p] = map[string]any{"size_bytes": len(b), "md5_digest": fmt.Sprintf("%x", md5.Sum(b))}
	}
	index, err := json.Marshal(map[string]any{name: map[string]any{"files": files}})
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path == "/voices.json" {
			w.Write(index)
			return
		}
		w.Write(repo[strings.TrimPrefix(r.URL.Path, "/")])
	}))
	t.Cleanup(mirror.Close)
	return mirror, &requests
}

// demoVoices runs narrator demo and returns the demo project's title and body voices.
func demoVoices(t *testing.T, data string) (title, body string) {
	t.Helper()
	var account, project int64
	if _, err := fmt.Sscanf(mustCLI(t, "demo", "--data", data), "Demo account %d, project %d", &account, &project); err != nil {
		t.Fatal(err)
	}
	for _, p := range mustJSON[[]projectOut](t, mustCLI(t, "projects", "list", "--data", data, "--account", fmt.Sprint(account))) {
		if p.ID == project {
			return p.TitleVoice, p.BodyVoice
		}
	}
	t.Fatalf("demo project %d is not listed", project)
	return "", ""
}

// TestVoicesSetupDefault runs the quickstart's neural voice step (scripts/serve.sh runs
// narrator voices setup-default before narrator demo) against a loopback mirror of the Piper
// repository: the language's recommended voice is installed and speaks the demo project, and a
// second run fetches nothing. Against a repository that cannot be reached, refusing or
// silent, it prints one line saying how to add the voice later and the built-in voices speak.
func TestVoicesSetupDefault(t *testing.T) {
	t.Parallel()
	lib := onnxtest.Library(t)
	if helperErr != nil {
		proctest.Missing(t, helperErr.Error(), "apt-get install gcc libespeak-ng-dev")
	}
	_, builtin := demoVoices(t, t.TempDir())

	t.Run("reachable", func(t *testing.T) {
		t.Parallel()
		mirror, requests := piperMirror(t, "en_US-amy-medium")
		data := t.TempDir()
		env := map[string]string{config.EnvVoicesURL: mirror.URL + "/", config.EnvONNXRuntime: lib, config.EnvData: data}
		out, errOut, err := runCLIEnv(t, env, "voices", "setup-default", "--allow-insecure-mirror")
		if err != nil {
			t.Fatalf("setup-default: %v\n%s", err, errOut)
		}
		if !strings.HasPrefix(out, "Installed the neural voice en_US-amy-medium from "+mirror.URL) || strings.Count(out, "\n") != 1 {
			t.Errorf("setup-default printed %q, want one line saying what it installed", out)
		}
		if title, body := demoVoices(t, data); title != "Amy (Female)" || body != "Amy (Female)" {
			t.Errorf("the demo project speaks with %q and %q, want Amy (Female)", title, body)
		}
		fetched := requests.Load()
		if out, errOut, err := runCLIEnv(t, env, "voices", "setup-default", "--allow-insecure-mirror"); err != nil || out != "" {
			t.Errorf("second setup-default: %v, printed %q\n%s", err, out, errOut)
		}
		if n := requests.Load(); n != fetched {
			t.Errorf("a second run made %d requests to the mirror, want none", n-fetched)
		}
	})

	// A port nothing listens on refuses at once; a listener that never answers is given up
	// on after --reach-timeout.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/"
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			// It reads the request and never answers, until the client hangs up.
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c)
			}()
		}
	}()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"refused":    {map[string]string{config.EnvVoicesURL: closedURL, config.EnvONNXRuntime: lib}, "connection refused"},
		"silent":     {map[string]string{config.EnvVoicesURL: "http://" + silent.Addr().String() + "/", config.EnvONNXRuntime: lib}, "deadline exceeded"},
		"no runtime": {map[string]string{config.EnvVoicesURL: closedURL}, "no onnxruntime library"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data := t.TempDir()
			out, errOut, err := runCLIEnv(t, tc.env, "voices", "setup-default", "--data", data, "--allow-insecure-mirror", "--reach-timeout", "2s")
			if err != nil {
				t.Fatalf("setup-default: %v\n%s", err, errOut)
			}
			want := "voices download --data " + data + " --gender female en_US-amy-medium\n"
			if strings.Count(out, "\n") != 1 || !strings.Contains(out, tc.want) || !strings.HasSuffix(out, want) {
				t.Errorf("setup-default printed %q, want one line saying %q and ending %q", out, tc.want, want)
			}
			if _, body := demoVoices(t, data); body != builtin {
				t.Errorf("the demo project speaks with %q, want the built-in %q", body, builtin)
			}
		})
	}

	// NARRATOR_NO_NEURAL skips the step: not even a reachable mirror is asked.
	t.Run("skipped", func(t *testing.T) {
		t.Parallel()
		mirror, requests := piperMirror(t, "en_US-amy-medium")
		data := t.TempDir()
		env := map[string]string{config.EnvVoicesURL: mirror.URL + "/", config.EnvONNXRuntime: lib, config.EnvNoNeural: "1"}
		if out, errOut, err := runCLIEnv(t, env, "voices", "setup-default", "--data", data, "--allow-insecure-mirror"); err != nil || out != "" {
			t.Errorf("setup-default: %v, printed %q\n%s", err, out, errOut)
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("the mirror was asked %d times", n)
		}
		if _, body := demoVoices(t, data); body != builtin {
			t.Errorf("the demo project speaks with %q, want the built-in %q", body, builtin)
		}
	})
}
