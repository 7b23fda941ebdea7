//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narrator/narrator/client"
	"github.com/narrator/narrator/internal/openapitest"
)

// The helpers of the end-to-end tests that drive a node (main_test.go
// starts it).

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

// call sends a JSON request to the node, body encoded unless it is nil,
// and returns the status and the answer.
func (s *node) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	res, raw := send(t, checkedHTTP(t), method, s.base+path, jsonBody(t, body), "Content-Type", "application/json")
	return res.StatusCode, raw
}

// jsonBody returns v encoded as a request body, or nil if v is nil.
func jsonBody(t testing.TB, v any) io.Reader {
	t.Helper()
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(raw)
}

// createUser creates a dashboard user of an account, its password given on
// standard input as a person would, and returns what the command printed.
func createUser(t *testing.T, data string, accountID int64, email, password string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"users", "create", "--data", data, "--account", fmt.Sprint(accountID), "--email", email},
		func(string) string { return "" }, strings.NewReader(password+"\n"), &out, &errOut); err != nil {
		t.Fatalf("users create: %v\n%s", err, errOut.String())
	}
	return out.String()
}

// create creates an audio in a project through the v3 API, fields being
// the request's (api_key included), and fails t unless it is accepted.
func (s *node) create(t *testing.T, projectID int64, fields map[string]any) audioOut {
	t.Helper()
	status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", projectID), fields)
	if status != 200 {
		t.Fatalf("create %v: %d %s", fields["external_id"], status, raw)
	}
	return mustJSON[audioOut](t, string(raw))
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
