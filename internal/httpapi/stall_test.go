package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/clientlimit"
	"github.com/narrator/narrator/internal/httpapi"
)

// TestStalledBody: a client that sends the start of a body and then stops
// gets a 408 with the v3 error body on every route that reads a body, with
// the key in a header or in the body, and also when the key was checked
// on this node before, so that the body is read before the key is
// (a 500 with "context canceled" before).
func TestStalledBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The body deadline of the real server, shortened: the middleware that
	// sets it in cmd/narrator, with its whole-body bound small.
	srv := httptest.NewServer(clientlimit.Requests(clientlimit.RequestOptions{
		Clients:     clientip.New(nil),
		PerClient:   1000,
		MinRate:     1,
		BodyTimeout: 300 * time.Millisecond,
		WriteError:  httpapi.WriteError,
	})(b.api))
	t.Cleanup(srv.Close)
	// The key creates once: the node now knows it for the project, and
	// reads a create's body before the key (authedLate).
	b.create(t, map[string]any{"body": "Known key."})
	audio := b.create(t, map[string]any{"body": "An audio to name in paths."})
	ids := strings.NewReplacer(
		"{project_id}", fmt.Sprint(b.project.ID),
		"{audio_id}", fmt.Sprint(audio["id"]),
		"{webhook_id}", "1", "{delivery_id}", "1", "{feed_id}", "1", "{source_id}", "1", "{rule_id}", "1",
	)
	type exchange struct {
		name, head string
		res        *http.Response
		body       []byte
		err        error
	}
	var exchanges []*exchange
	for _, pattern := range httpapi.RoutePatterns(b.api) {
		method, path, _ := strings.Cut(pattern, " ")
		if path == "/api/v3/openapi.json" || (method == "GET" && strings.HasPrefix(path, "/v1/")) {
			continue // they read no body: the key is in a header
		}
		path = ids.Replace(path)
		wheres := []string{"header", "body"}
		if strings.HasPrefix(path, "/v1/") {
			wheres = []string{"header"} // the OpenAI convention's key is a Bearer token
		}
		if method == "PUT" && (strings.HasSuffix(path, "/intro") || strings.HasSuffix(path, "/outro")) {
			wheres = []string{"header"} // the body is the audio: the key is never in it
		}
		for _, where := range wheres {
			header := "X-Api-Key: " + b.key + "\r\n"
			if strings.HasPrefix(path, "/v1/") {
				header = "Authorization: Bearer " + b.key + "\r\n"
			}
			if where == "body" {
				header = ""
			}
			exchanges = append(exchanges, &exchange{name: pattern + " key in " + where,
				head: method + " " + path + " HTTP/1.1\r\nHost: narrator.test\r\n" + header +
					"Content-Type: application/json\r\nContent-Length: 900\r\n\r\n{"})
		}
	}
	// The create with the known key first and alone: the others' key
	// checks would fill the store's cache, which answered its late key
	// check when the request's context had ended.
	first := slices.IndexFunc(exchanges, func(e *exchange) bool {
		return e.name == "POST /api/v3/projects/{project_id}/audio key in header"
	})
	if first < 0 {
		t.Fatal("no create among the routes")
	}
	e := exchanges[first]
	e.res, e.body, e.err = stall(srv.Listener.Addr().String(), e.head)
	// The others all at once, so that the test waits for one deadline
	// more only.
	var wg sync.WaitGroup
	for _, e := range slices.Delete(slices.Clone(exchanges), first, first+1) {
		wg.Go(func() { e.res, e.body, e.err = stall(srv.Listener.Addr().String(), e.head) })
	}
	wg.Wait()
	for _, e := range exchanges {
		t.Run(e.name, func(t *testing.T) {
			if e.err != nil {
				t.Fatal(e.err)
			}
			if e.res.StatusCode != http.StatusRequestTimeout {
				t.Errorf("status %d, want 408; body %s", e.res.StatusCode, e.body)
			}
			if strings.Contains(e.name, " /v1/") {
				var body struct {
					Error struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(e.body, &body); err != nil || body.Error.Message == "" {
					t.Errorf("body %s (%v), want OpenAI's error body", e.body, err)
				}
			} else {
				var body struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal(e.body, &body); err != nil || body.Code != 10 || body.Message == "" {
					t.Errorf("body %s (%v), want the v3 error body with code 10", e.body, err)
				}
			}
			if ct := e.res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
		})
	}
}

// stall sends head, the start of a request, over a new connection to addr,
// sends nothing more, and returns the answer and its body.
func stall(addr, head string) (*http.Response, []byte, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	// Only so that a server that never answers fails the test rather than
	// hangs it.
	if err := conn.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		return nil, nil, err
	}
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, nil, err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("read the answer: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("read the answer's body: %w", err)
	}
	return res, body, nil
}
