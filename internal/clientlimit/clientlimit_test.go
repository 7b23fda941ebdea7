package clientlimit_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/clientlimit"
)

// dialFrom connects to addr from the loopback address from.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// accepted runs Accept on l in the background and sends every connection
// it returns.
func accepted(t *testing.T, l net.Listener) <-chan net.Conn {
	t.Helper()
	ch := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			ch <- c
		}
	}()
	return ch
}

func mustReceive(t *testing.T, ch <-chan net.Conn, what string) net.Conn {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no connection", what)
		return nil
	}
}

// closedByPeer reports whether the server closed c.
func closedByPeer(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection not closed by the listener: %v", err)
	}
}

func TestListenerCaps(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := clientlimit.NewListener(inner, clientlimit.ListenerOptions{
		Max: 4, PerClient: 2, Spare: 1,
		Exempt: func(host string) bool { return host == "127.0.0.9" },
	})
	t.Cleanup(func() { l.Close(); l.Overflow().Close() })
	addr := inner.Addr().String()
	main, over := accepted(t, l), accepted(t, l.Overflow())

	dialFrom(t, "127.0.0.2", addr)
	a1 := mustReceive(t, main, "first of client A")
	dialFrom(t, "127.0.0.2", addr)
	mustReceive(t, main, "second of client A")
	dialFrom(t, "127.0.0.2", addr) // past A's share: to the overflow
	mustReceive(t, over, "third of client A")
	extra := dialFrom(t, "127.0.0.2", addr) // the overflow is full too
	closedByPeer(t, extra)

	dialFrom(t, "127.0.0.3", addr) // another client has its own share
	mustReceive(t, main, "first of client B")
	dialFrom(t, "127.0.0.9", addr) // a trusted proxy is counted only in all
	p := mustReceive(t, main, "proxy")
	closedByPeer(t, dialFrom(t, "127.0.0.4", addr)) // all 4 taken, overflow full

	// Closing a connection frees its slot in all and for its client.
	p.Close()
	dialFrom(t, "127.0.0.5", addr)
	mustReceive(t, main, "after the proxy's closed")
	a1.Close()
	dialFrom(t, "127.0.0.2", addr)
	mustReceive(t, main, "client A after one of its closed")
}

// TestOverflowPerClient: one client may hold a quarter of the overflow's
// spare slots, so that a flood from it leaves room for others' health
// checks.
func TestOverflowPerClient(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := clientlimit.NewListener(inner, clientlimit.ListenerOptions{Max: 10, PerClient: 1, Spare: 8})
	t.Cleanup(func() { l.Close(); l.Overflow().Close() })
	addr := inner.Addr().String()
	main, over := accepted(t, l), accepted(t, l.Overflow())
	dialFrom(t, "127.0.0.2", addr)
	mustReceive(t, main, "client A")
	for i := range 2 {
		dialFrom(t, "127.0.0.2", addr)
		mustReceive(t, over, fmt.Sprintf("client A's overflow %d", i+1))
	}
	closedByPeer(t, dialFrom(t, "127.0.0.2", addr)) // past A's quarter of 8
	dialFrom(t, "127.0.0.3", addr)
	mustReceive(t, main, "client B")
	dialFrom(t, "127.0.0.3", addr)
	mustReceive(t, over, "client B's overflow")
}

// TestRequestsPerClient: a client with its share of requests in flight is
// refused one more with the service's error body and Retry-After, while
// other clients and the exempt paths are served.
func TestRequestsPerClient(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	inside := make(chan struct{}, 10)
	h := clientlimit.Requests(clientlimit.RequestOptions{
		Clients:   clientip.New(nil),
		PerClient: 2,
		Exempt:    func(r *http.Request) bool { return r.URL.Path == "/healthz" },
		WriteError: func(w http.ResponseWriter, err error) {
			w.WriteHeader(http.StatusTooManyRequests)
			json.NewEncoder(w).Encode(map[string]string{"code": narrator.ErrorCode(err), "message": narrator.ErrorMessage(err)})
		},
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			inside <- struct{}{}
			<-release
		}
	}))
	serve := func(remote, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	done := make(chan struct{})
	for range 2 {
		go func() { serve("[2001:db8::1]:1000", "/slow"); done <- struct{}{} }()
		<-inside
	}
	// The same /64, another address: the same client.
	w := serve("[2001:db8::2]:1000", "/fast")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" ||
		!strings.Contains(w.Body.String(), narrator.ERATELIMITED) {
		t.Errorf("third request: %d %q, Retry-After %q", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if w := serve("[2001:db8::2]:1000", "/healthz"); w.Code != http.StatusOK {
		t.Errorf("health check refused: %d", w.Code)
	}
	if w := serve("[2001:db8:0:1::1]:1000", "/fast"); w.Code != http.StatusOK {
		t.Errorf("another client refused: %d", w.Code)
	}
	close(release)
	<-done
	<-done
	if w := serve("[2001:db8::2]:1000", "/fast"); w.Code != http.StatusOK {
		t.Errorf("after the requests ended: %d", w.Code)
	}
}

// TestBodyMinRate: a body that stalls after its first byte is cut off
// after the grace, while one that arrives whole is read.
func TestBodyMinRate(t *testing.T) {
	t.Parallel()
	got := make(chan error, 10)
	srv := httptest.NewServer(clientlimit.Requests(clientlimit.RequestOptions{
		Clients: clientip.New(nil), PerClient: 10, MinRate: 1024,
		WriteError: func(w http.ResponseWriter, err error) { w.WriteHeader(http.StatusTooManyRequests) },
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	})))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	c := dialFrom(t, "127.0.0.1", addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nx")
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("a stalled body was read to its end")
		}
	case <-time.After(clientlimit.BodyGrace + 20*time.Second):
		t.Fatal("a stalled body still holds its handler")
	}

	c = dialFrom(t, "127.0.0.1", addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("whole body: %v %v", res, err)
	}
	if err := <-got; err != nil {
		t.Fatalf("whole body: %v", err)
	}
}

// TestBodyTimeout: a body that keeps above the minimum rate is still cut
// off once it has taken BodyTimeout in all.
func TestBodyTimeout(t *testing.T) {
	t.Parallel()
	got := make(chan error, 1)
	srv := httptest.NewServer(clientlimit.Requests(clientlimit.RequestOptions{
		Clients: clientip.New(nil), PerClient: 10, MinRate: 1, BodyTimeout: time.Second,
		WriteError: func(w http.ResponseWriter, err error) { w.WriteHeader(http.StatusTooManyRequests) },
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	})))
	t.Cleanup(srv.Close)
	c := dialFrom(t, "127.0.0.1", srv.Listener.Addr().String())
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		tick := time.NewTicker(100 * time.Millisecond) // 10 bytes a second, above the minimum
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := io.WriteString(c, "x"); err != nil {
					return
				}
			}
		}
	}()
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("the body was read to its end")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a body trickling above the minimum rate still holds its handler past the body timeout")
	}
}

// TestUnreadBodyAnswered: a handler that answers without reading the body
// (a refusal) is answered while the client still owes the rest of its
// body, and the connection is closed; a handler that reads the whole body
// keeps the connection for the client's next request.
func TestUnreadBodyAnswered(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(clientlimit.Requests(clientlimit.RequestOptions{
		Clients: clientip.New(nil), PerClient: 10, MinRate: 1024, BodyTimeout: time.Hour,
		WriteError: func(w http.ResponseWriter, err error) { w.WriteHeader(http.StatusTooManyRequests) },
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
		}
	})))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	c := dialFrom(t, "127.0.0.1", addr)
	// Only a guard: the server waits for nothing the client sends.
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, "POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n{")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a refusal waited for the rest of the body: %v", err)
	}
	if res.StatusCode != http.StatusUnauthorized || !res.Close {
		t.Errorf("refusal: %d, close %v; want 401 and the connection closed", res.StatusCode, res.Close)
	}

	c = dialFrom(t, "127.0.0.1", addr)
	br := bufio.NewReader(c)
	for i := range 2 {
		io.WriteString(c, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on one connection: %v", i, err)
		}
		io.Copy(io.Discard, res.Body)
		if res.StatusCode != http.StatusOK || res.Close {
			t.Errorf("request %d: %d, close %v; want 200, kept alive", i, res.StatusCode, res.Close)
		}
	}
}
