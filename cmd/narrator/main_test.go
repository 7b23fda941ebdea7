package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	"testing"
	"time"

	"github.com/narrator/narrator/internal/config"
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
	SpeechRate float64 `json:"speech_rate"`
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
	if proj.Type != "api" || proj.Language != "en_US" || proj.URL != nil || proj.SpeechRate != 1 || !strings.Contains(proj.TitleVoice, "(") || !strings.Contains(proj.BodyVoice, "(") {
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
	fast := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Fast", "--language", "en_US", "--speech-rate", "1.25"))
	if fast.SpeechRate != 1.25 {
		t.Errorf("project created at rate 1.25: %+v", fast)
	}
	slow := mustJSON[projectOut](t, mustCLI(t, "projects", "set", "--data", data, "--project", fmt.Sprint(fast.ID), "--speech-rate", "0.8"))
	if slow.ID != fast.ID || slow.SpeechRate != 0.8 || slow.Title != "Fast" {
		t.Errorf("projects set --speech-rate 0.8: %+v", slow)
	}
	list := mustJSON[[]projectOut](t, mustCLI(t, "projects", "list", "--data", data, "--account", fmt.Sprint(acct.ID)))
	if len(list) != 3 || list[2].SpeechRate != 0.8 || list[0].SpeechRate != 1 {
		t.Errorf("projects list %+v", list)
	}
	if out := mustCLI(t, "voices", "--data", data, "--language", "en_US"); !strings.Contains(out, "en_US") {
		t.Errorf("voices: %s", out)
	}

	rule := mustJSON[pronunciationOut](t, mustCLI(t, "pronunciations", "add", "--data", data, "--project", fmt.Sprint(proj.ID), "--phrase", "nginx", "--say", "engine x", "--resynthesize"))
	if rule.Phrase != "nginx" || rule.Resynthesis != "queued" {
		t.Errorf("rule %+v", rule)
	}
	rules := mustJSON[[]pronunciationOut](t, mustCLI(t, "pronunciations", "list", "--data", data, "--project", fmt.Sprint(proj.ID)))
	if len(rules) != 1 || rules[0].Say != "engine x" {
		t.Errorf("rules %+v", rules)
	}
	mustCLI(t, "pronunciations", "remove", "--data", data, "--project", fmt.Sprint(proj.ID), "--id", fmt.Sprint(rule.ID))

	bad := [][]string{
		{"pronunciations", "add", "--data", data, "--project", fmt.Sprint(proj.ID), "--phrase", "x"},
		// the first resynthesis is still queued: no server works it
		{"pronunciations", "add", "--data", data, "--project", fmt.Sprint(proj.ID), "--phrase", "x", "--say", "ex", "--resynthesize"},
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
		{"projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "x", "--language", "en_US", "--speech-rate", "3"},
		{"projects", "set", "--data", data, "--project", fmt.Sprint(proj.ID), "--speech-rate", "0.3"},
		{"projects", "set", "--data", data, "--project", "999", "--speech-rate", "1.5"},
		{"projects", "set", "--data", data, "--project", fmt.Sprint(proj.ID)},
		{"serve", "--addr", "nonsense"},
		{"voices", "--data", data, "--language", "xx_XX"},
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
	return startServerEnv(t, nil, data, addr, extra...)
}

// startServerEnv is startServer with env (KEY=value pairs) added to the
// server's environment: a test that sets the server's environment this
// way, not with t.Setenv, can run in parallel.
func startServerEnv(t *testing.T, env []string, data, addr string, extra ...string) *node {
	t.Helper()
	return startNode(t, env, "http://"+addr, 60*time.Second, binary, append([]string{"serve", "--data", data, "--addr", addr}, extra...)...)
}

// startNode runs a process that serves HTTP at base (a narrator server or
// a balancer in front of some), with env (KEY=value pairs, or nil) added
// to its environment, kills it when the test ends, and waits until its
// /healthz answers 200.
func startNode(t *testing.T, env []string, base string, within time.Duration, name string, args ...string) *node {
	t.Helper()
	s := &node{base: base, logs: &logBuffer{}}
	s.cmd = exec.Command(name, args...)
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
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
			t.Logf("%s log:\n%s", filepath.Base(name), s.logs.String())
		}
	})
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if res, err := http.Get(s.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s not healthy within %s; log:\n%s", filepath.Base(name), within, s.logs.String())
	return nil
}

// send makes a request with c (http.DefaultClient when nil), header being
// name, value pairs, and returns the answer with its body read whole. It
// fails t when the exchange fails or takes over two minutes.
func send(t testing.TB, c *http.Client, method, url string, body io.Reader, header ...string) (*http.Response, []byte) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read the answer: %v", method, url, err)
	}
	return res, raw
}

// openAPINode opens in this process, as serve does at start-up, an api
// node on data at a free loopback port, with the given serve flags after
// those. The caller runs and closes it.
func openAPINode(t *testing.T, data string, flags ...string) *server {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	finish := config.ServeFlags(fs, func(string) string { return "" })
	if err := fs.Parse(append([]string{"--data", data, "--role", "api", "--addr", "127.0.0.1:0"}, flags...)); err != nil {
		t.Fatal(err)
	}
	cfg, err := finish()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := openServer(t.Context(), cfg, slog.New(slog.DiscardHandler), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestServeFailsWhenHTTPFails checks that serve returns an error, and so
// exits non-zero, when its HTTP server stops on its own.
func TestServeFailsWhenHTTPFails(t *testing.T) {
	t.Parallel()
	srv := openAPINode(t, t.TempDir())
	srv.ln.Close() // the listener dies under the server
	if err := srv.run(t.Context()); err == nil {
		t.Fatal("run returned nil after the HTTP server failed")
	}
	if err := srv.close(t.Context()); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestUsage freezes narrator's usage, which is rendered from the table of
// commands, and checks that a wrong command prints it and is a usage error.
func TestUsage(t *testing.T) {
	t.Parallel()
	const want = `Usage: narrator COMMAND [flags]

Commands:
  serve         run the API, the media server and the job workers
  accounts      create accounts and manage their API keys
  users         create dashboard users (sign-in for the web dashboard)
  projects      create, set, list and resynthesize projects
  voices        list, install, download and remove voices
  pronunciations  manage a project's pronunciation rules
  webhooks      manage a project's webhook endpoints
  sources       manage the sources (feeds) an rss project narrates
  migrate       create or update the database schema
  copy-data     copy an install's data and media into other stores (SQLite to PostgreSQL, file to S3)
  backup        copy the SQLite database and the media into a directory, while serving
  restore       put a backup back into a new data directory
  demo          create a demo account and project, print a key and a curl
  version       print the version, commit and Go version (also --version)

Run 'narrator COMMAND -h' for a command's flags.
`
	for _, arg := range []string{"help", "-h", "--help"} {
		if out := mustCLI(t, arg); out != want {
			t.Errorf("narrator %s printed\n%s\nwant\n%s", arg, out, want)
		}
	}
	for _, args := range [][]string{{}, {"nope"}} {
		_, errOut, err := runCLI(t, args...)
		if exitCode(err) != 2 || errOut != want {
			t.Errorf("narrator %v: %v (exit %d), printed\n%s\nwant the usage", args, err, exitCode(err), errOut)
		}
	}
}
