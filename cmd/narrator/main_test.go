package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narrator/narrator/client"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/openapitest"
)

// binary is the narrator binary built once for the tests that need a
// separate process (signals, kill -9).
var binary string

// helperErr says why narrator-espeak could not be built beside binary.
var helperErr error

func TestMain(m *testing.M) {
	// The in-process commands start neural workers as this binary's
	// "onnx-worker", as narrator's own.
	if len(os.Args) > 1 && os.Args[1] == "onnx-worker" {
		if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "narrator-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "narrator")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build narrator: %v\n%s", err, out)
		os.Exit(1)
	}
	// The phonemiser's helper, beside narrator as scripts/deps.sh builds
	// it; a test of neural voices fails if it could not be built.
	if out, err := exec.Command("cc", "-O2", "-o", filepath.Join(dir, "narrator-espeak"), "../../internal/phonemize/helper/narrator-espeak.c", "-lespeak-ng").CombinedOutput(); err != nil {
		helperErr = fmt.Errorf("build narrator-espeak: %v: %s", err, out)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCLI runs a command in-process through run and returns its output.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(t.Context(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("narrator %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func mustJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("output %q is not JSON: %v", s, err)
	}
	return v
}

type accountOut struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	APIKey string `json:"api_key"`
}

type projectOut struct {
	ID         int64   `json:"id"`
	Title      string  `json:"title"`
	Type       string  `json:"type"`
	Language   string  `json:"language"`
	URL        *string `json:"url"`
	TitleVoice string  `json:"title_voice"`
	BodyVoice  string  `json:"body_voice"`
	AudioCount int     `json:"audio_count"`
}

// fixture creates an account and a project in a new data directory.
func fixture(t *testing.T) (data string, acct accountOut, proj projectOut) {
	t.Helper()
	data = t.TempDir()
	acct = mustJSON[accountOut](t, mustCLI(t, "accounts", "create", "--data", data, "--name", "Acme News"))
	proj = mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Daily", "--language", "en_US"))
	return data, acct, proj
}

func TestCLI(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	if acct.Name != "Acme News" || !strings.HasPrefix(acct.APIKey, "nk_") || acct.ID <= 0 {
		t.Errorf("account %+v", acct)
	}
	if proj.Type != "api" || proj.Language != "en_US" || proj.URL != nil || !strings.Contains(proj.TitleVoice, "(") || !strings.Contains(proj.BodyVoice, "(") {
		t.Errorf("project %+v", proj)
	}
	raw, err := os.ReadFile(filepath.Join(data, "narrator.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(acct.APIKey)) {
		t.Error("the API key is stored in clear")
	}

	key := mustJSON[keyJSON](t, mustCLI(t, "accounts", "keys", "create", "--data", data, "--account", fmt.Sprint(acct.ID)))
	if !strings.HasPrefix(key.APIKey, key.Prefix) {
		t.Errorf("key %+v", key)
	}
	keys := mustJSON[[]keyJSON](t, mustCLI(t, "accounts", "keys", "list", "--data", data, "--account", fmt.Sprint(acct.ID)))
	if len(keys) != 2 || keys[0].APIKey != "" {
		t.Errorf("keys %+v", keys)
	}
	revoked := mustJSON[keyJSON](t, mustCLI(t, "accounts", "keys", "revoke", "--data", data, "--account", fmt.Sprint(acct.ID), "--key", fmt.Sprint(key.ID)))
	if revoked.RevokedAt == nil {
		t.Errorf("revoke %+v", revoked)
	}

	withURL := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Blog", "--language", "en_US", "--url", "https://blog.test"))
	if withURL.URL == nil || *withURL.URL != "https://blog.test" {
		t.Errorf("project url %+v", withURL)
	}
	list := mustJSON[[]projectOut](t, mustCLI(t, "projects", "list", "--data", data, "--account", fmt.Sprint(acct.ID)))
	if len(list) != 2 {
		t.Errorf("projects list %+v", list)
	}
	if out := mustCLI(t, "voices", "--language", "en_US"); !strings.Contains(out, "en_US") {
		t.Errorf("voices: %s", out)
	}

	rule := mustJSON[pronunciationOut](t, mustCLI(t, "pronunciations", "add", "--data", data, "--project", fmt.Sprint(proj.ID), "--phrase", "nginx", "--say", "engine x", "--resynthesize"))
	if rule.Phrase != "nginx" || rule.Resynthesized == nil || len(*rule.Resynthesized) != 0 {
		t.Errorf("rule %+v", rule)
	}
	rules := mustJSON[[]pronunciationOut](t, mustCLI(t, "pronunciations", "list", "--data", data, "--project", fmt.Sprint(proj.ID)))
	if len(rules) != 1 || rules[0].Say != "engine x" {
		t.Errorf("rules %+v", rules)
	}
	mustCLI(t, "pronunciations", "remove", "--data", data, "--project", fmt.Sprint(proj.ID), "--id", fmt.Sprint(rule.ID))

	bad := [][]string{
		{"pronunciations", "add", "--data", data, "--project", fmt.Sprint(proj.ID), "--phrase", "x"},
		{"pronunciations", "remove", "--data", data, "--project", fmt.Sprint(proj.ID), "--id", "12345"},
		{"pronunciations", "list", "--data", data},
		{},
		{"nope"},
		{"accounts"},
		{"accounts", "create", "--data", data},
		{"accounts", "keys", "create", "--data", data},
		{"projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "x", "--language", "xx_XX"},
		{"projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "x", "--language", "en_US", "--body-voice", "Nobody"},
		{"projects", "create", "--data", data, "--account", "999", "--title", "x", "--language", "en_US"},
		{"projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "x", "--language", "en_US", "--url", "ftp://x"},
		{"serve", "--addr", "nonsense"},
		{"voices", "--language", "xx_XX"},
		{"serve", "--bogus-flag"},
	}
	for _, args := range bad {
		_, errOut, err := runCLI(t, args...)
		if err == nil {
			t.Errorf("narrator %v succeeded", args)
			continue
		}
		if err.Error() == "" && errOut == "" {
			t.Errorf("narrator %v failed without a message", args)
		}
	}
}

// node is a narrator serve process.
type node struct {
	cmd  *exec.Cmd
	base string
	logs *logBuffer
}

// logBuffer collects a process's output; tests read it while it runs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor returns the log once it holds s, failing the test if it does not
// within 10 s: serve writes its informational lines out in batches, up to
// 100 ms after they are logged.
func (b *logBuffer) waitFor(t *testing.T, s string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs := b.String()
		if strings.Contains(logs, s) {
			return logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log does not hold %q after 10 s:\n%s", s, logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs `narrator serve` on data and waits for /healthz.
func startServer(t *testing.T, data, addr string, extra ...string) *node {
	t.Helper()
	s := &node{base: "http://" + addr, logs: &logBuffer{}}
	s.cmd = exec.Command(binary, append([]string{"serve", "--data", data, "--addr", addr}, extra...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("server log:\n%s", s.logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(s.base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server not healthy within 60 s; log:\n%s", s.logs.String())
	return nil
}

func (s *node) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := s.cmd.Wait()
	var exit *exec.ExitError
	if sig == syscall.SIGKILL {
		if !errors.As(err, &exit) {
			t.Fatalf("kill -9: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("graceful stop: %v\n%s", err, s.logs.String())
	}
}

func (s *node) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := checkedHTTP(t).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, raw
}

// contract checks exchanges against the OpenAPI document; it is loaded
// once for all tests.
var contract = sync.OnceValues(func() (*openapitest.Validator, error) {
	return openapitest.Load(context.Background())
})

// checkedHTTP returns an HTTP client that checks every request and answer
// against the OpenAPI document, and fails t on a mismatch.
func checkedHTTP(t testing.TB) *http.Client {
	t.Helper()
	v, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: v.Transport(t, nil)}
}

// client returns a Go client of the node for key, whose exchanges are
// checked against the OpenAPI document.
func (s *node) client(t testing.TB, key string) *client.Client {
	t.Helper()
	c, err := client.New(s.base, key, client.WithHTTPClient(checkedHTTP(t)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// audioOut is the v3 Audio as the tests read it.
type audioOut struct {
	ID         int64             `json:"id"`
	ExternalID *string           `json:"external_id"`
	State      string            `json:"state"`
	Deleted    bool              `json:"deleted"`
	Metadata   map[string]string `json:"metadata"`
	Error      string            `json:"error"`
	Media      []struct {
		ID          int64           `json:"id"`
		ContentType string          `json:"content_type"`
		URL         json.RawMessage `json:"url"`
	} `json:"media"`
}

func (a audioOut) url(t *testing.T, contentType string) string {
	t.Helper()
	for _, m := range a.Media {
		if m.ContentType == contentType {
			var u string
			if err := json.Unmarshal(m.URL, &u); err != nil {
				t.Fatalf("%s url %s is not a string", contentType, m.URL)
			}
			return u
		}
	}
	t.Fatalf("no %s media in %+v", contentType, a)
	return ""
}

// waitProcessed polls an audio until it is processed.
func (s *node) waitProcessed(t *testing.T, projectID int64, ref, key string, within time.Duration) audioOut {
	t.Helper()
	deadline := time.Now().Add(within)
	var a audioOut
	for time.Now().Before(deadline) {
		status, raw := s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s?api_key=%s", projectID, ref, key), nil)
		if status != 200 {
			t.Fatalf("get audio %s: %d %s", ref, status, raw)
		}
		a = mustJSON[audioOut](t, string(raw))
		switch a.State {
		case "processed":
			return a
		case "failed":
			t.Fatalf("audio %s failed: %s", ref, a.Error)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("audio %s not processed within %s: %+v", ref, within, a)
	return a
}

// TestServeFailsWhenHTTPFails checks that serve returns an error, and so
// exits non-zero, when its HTTP server stops on its own.
func TestServeFailsWhenHTTPFails(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	finish := func() (config.Config, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f := config.ServeFlags(fs, func(string) string { return "" })
		if err := fs.Parse([]string{"--data", t.TempDir(), "--role", "api", "--addr", "127.0.0.1:0"}); err != nil {
			return config.Config{}, err
		}
		return f()
	}
	cfg, err := finish()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := openServer(t.Context(), cfg, slog.New(slog.NewTextHandler(&errOut, nil)), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	srv.ln.Close() // the listener dies under the server
	if err := srv.run(t.Context()); err == nil {
		t.Fatal("run returned nil after the HTTP server failed")
	}
	if err := srv.close(t.Context()); err != nil {
		t.Errorf("close: %v", err)
	}
}
