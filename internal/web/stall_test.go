package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/clientlimit"
	"github.com/narrator/narrator/internal/httpapi"
)

// TestStalledForm: a form whose body stops arriving answers 408 on every
// POST route of the dashboard, signed in or not, and never a 500.
func TestStalledForm(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	// The body deadline of the real server (cmd/narrator), shortened.
	srv := httptest.NewServer(clientlimit.Requests(clientlimit.RequestOptions{
		Clients: clientip.New(nil), PerClient: 1000, MinRate: 1, BodyTimeout: 300 * time.Millisecond,
		WriteError: httpapi.WriteError,
	})(b.srv.Config.Handler))
	t.Cleanup(srv.Close)
	c, _ := b.signedIn(t)
	base, err := url.Parse(b.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var cookies []string
	for _, ck := range c.client.Jar.Cookies(base) {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	// Every POST route, as routes.go names them.
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`"POST (/[^"]*)"`).FindAllStringSubmatch(string(src), -1)
	if len(routes) < 10 {
		t.Fatalf("found %d POST routes in routes.go", len(routes))
	}
	ids := regexp.MustCompile(`\{[a-z]+\}`)
	answers := make([]string, len(routes))
	var wg sync.WaitGroup
	for i, m := range routes {
		path := strings.ReplaceAll(m[1], "{pid}", fmt.Sprint(b.project.ID))
		path = ids.ReplaceAllString(path, "1")
		wg.Go(func() {
			answers[i] = stallForm(srv.Listener.Addr().String(), "POST "+path+" HTTP/1.1\r\nHost: "+base.Host+
				"\r\nCookie: "+strings.Join(cookies, "; ")+
				"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 900\r\n\r\ncsrf_token=")
		})
	}
	wg.Wait()
	for i, m := range routes {
		if want := "408"; answers[i] != want {
			t.Errorf("POST %s: %s, want %s", m[1], answers[i], want)
		}
	}
}

// stallForm sends head, the start of a request, over a new connection to
// addr, sends nothing more, and returns the answer's status code, or what
// went wrong.
func stallForm(addr, head string) string {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	// Only so that a server that never answers fails the test rather than
	// hangs it.
	if err := conn.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		return err.Error()
	}
	if _, err := io.WriteString(conn, head); err != nil {
		return err.Error()
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err.Error()
	}
	res.Body.Close()
	return fmt.Sprint(res.StatusCode)
}
