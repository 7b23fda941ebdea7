package player_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/clientlimit"
	"github.com/narrator/narrator/internal/httpapi"
)

// TestStalledEvent: a listening event whose body stops arriving answers
// 408 with the v3 error body, as the API does, not 400.
func TestStalledEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The body deadline of the real server (cmd/narrator), shortened.
	srv := httptest.NewServer(clientlimit.Requests(clientlimit.RequestOptions{
		Clients: clientip.New(nil), PerClient: 10, MinRate: 1, BodyTimeout: 300 * time.Millisecond,
		WriteError: httpapi.WriteError,
	})(b.srv.Config.Handler))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Only so that a server that never answers fails the test rather than
	// hangs it.
	if err := conn.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "POST /embed/events HTTP/1.1\r\nHost: narrator.test\r\n"+
		"Content-Type: application/json\r\nContent-Length: 900\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusRequestTimeout || body.Code != 10 || body.Message == "" {
		t.Errorf("answer %d %+v, want 408 with the v3 error body, code 10", res.StatusCode, body)
	}
}
