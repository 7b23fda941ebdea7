package client_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/openapitest"
	"github.com/narrator/narrator/internal/proctest"
)

// The server the examples and tests talk to: a real `narrator serve` with
// its real speech engines, started by TestMain.
var (
	serverURL string // such as http://127.0.0.1:41234
	apiKey    string // the key of its one account
	projectID int64  // its en_US project
	// resynthKey and resynthProject are a second account's key and
	// project, whose audios only TestResynthesizeProject resynthesizes.
	resynthKey     string
	resynthProject int64
)

func TestMain(m *testing.M) {
	// The server reads with the real engines. Without them the tests are
	// skipped, as other packages' tests are (proctest.Missing), unless
	// NARRATOR_TEST_FULL=1.
	for _, program := range []string{"festival", "flite", "espeak-ng", "lame"} {
		if _, err := exec.LookPath(program); err != nil {
			fmt.Fprintf(os.Stderr, "client tests need %s, which is not installed (scripts/test.sh installs it)\n", program)
			if proctest.Full() {
				os.Exit(1)
			}
			fmt.Println("ok: skipped")
			os.Exit(0)
		}
	}
	code, err := runWithServer(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// runWithServer builds narrator, creates an account and a project, serves
// them on a free loopback port and runs the tests.
func runWithServer(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "narrator-client-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin, data := filepath.Join(dir, "narrator"), filepath.Join(dir, "data")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/narrator/narrator/cmd/narrator").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build narrator: %v\n%s", err, out)
	}
	var acct struct {
		ID     int64  `json:"id"`
		APIKey string `json:"api_key"`
	}
	if err := runJSON(&acct, bin, "accounts", "create", "--data", data, "--name", "Example News"); err != nil {
		return 0, err
	}
	var proj struct {
		ID int64 `json:"id"`
	}
	if err := runJSON(&proj, bin, "projects", "create", "--data", data, "--account", strconv.FormatInt(acct.ID, 10), "--title", "Daily", "--language", "en_US"); err != nil {
		return 0, err
	}
	if resynthKey, resynthProject, err = accountProject(bin, data, "Weekly News"); err != nil {
		return 0, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	logs, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return 0, err
	}
	defer logs.Close()
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr)
	srv.Stdout, srv.Stderr = logs, logs
	if err := srv.Start(); err != nil {
		return 0, err
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}()
	serverURL, apiKey, projectID = "http://"+addr, acct.APIKey, proj.ID
	if err := waitHealthy(serverURL, 60*time.Second); err != nil {
		log, _ := os.ReadFile(logs.Name())
		return 0, fmt.Errorf("%w; server log:\n%s", err, log)
	}
	return m.Run(), nil
}

// accountProject creates an account named name with an en_US project and
// returns its key and the project's ID.
func accountProject(bin, data, name string) (string, int64, error) {
	var acct struct {
		ID     int64  `json:"id"`
		APIKey string `json:"api_key"`
	}
	if err := runJSON(&acct, bin, "accounts", "create", "--data", data, "--name", name); err != nil {
		return "", 0, err
	}
	var proj struct {
		ID int64 `json:"id"`
	}
	err := runJSON(&proj, bin, "projects", "create", "--data", data, "--account", strconv.FormatInt(acct.ID, 10), "--title", name, "--language", "en_US")
	return acct.APIKey, proj.ID, err
}

func runJSON(v any, name string, args ...string) error {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return fmt.Errorf("narrator %v: %w", args, err)
	}
	return json.Unmarshal(out, v)
}

// waitHealthy polls /healthz until it answers 200.
func waitHealthy(base string, within time.Duration) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("narrator at %s not healthy within %s", base, within)
}

// checkedHTTPClient returns an HTTP client that checks every exchange
// against the server's OpenAPI document, failing t on a mismatch.
func checkedHTTPClient(t *testing.T) *http.Client {
	return &http.Client{Transport: openapitest.MustLoad(t).Transport(t, nil)}
}
