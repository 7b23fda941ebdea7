package mediaserve_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/mediaserve"
)

// bigObject is larger than what the loopback socket buffers of both ends
// hold, so that a client that stops reading blocks the server's writes.
const bigObject = 48 << 20

type nopSeekCloser struct{ *bytes.Reader }

func (nopSeekCloser) Close() error { return nil }

// slowServer serves one object of size bytes with a per-write timeout,
// and reports on closed when a connection is closed.
func slowServer(t *testing.T, size int, timeout time.Duration) (srv *httptest.Server, body []byte, closed chan struct{}) {
	return slowServerRate(t, size, mediaserve.Options{WriteTimeout: timeout})
}

// slowServerRate is slowServer with any options.
func slowServerRate(t *testing.T, size int, opts mediaserve.Options) (srv *httptest.Server, body []byte, closed chan struct{}) {
	t.Helper()
	body = make([]byte, size)
	for i := range body {
		body[i] = byte(i * 31)
	}
	h := mediaserve.New(openerFunc(func(context.Context, string) (io.ReadSeekCloser, narrator.BlobInfo, error) {
		return nopSeekCloser{bytes.NewReader(body)}, narrator.BlobInfo{Size: int64(len(body)), ModTime: time.Unix(1, 0)}, nil
	}), opts)
	closed = make(chan struct{}, 10)
	srv = httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, body, closed
}

// dialGet opens a connection and sends a GET for the object; small gives
// it a small receive buffer.
func dialGet(t *testing.T, srv *httptest.Server, small bool) *bufio.Reader {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn := c.(*net.TCPConn)
	t.Cleanup(func() { conn.Close() }) // before srv.Close, which waits for handlers
	if small {
		if err := conn.SetReadBuffer(4096); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(conn, "GET /tok/audio.mp3 HTTP/1.1\r\nHost: media.test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return bufio.NewReaderSize(conn, 4096)
}

// TestStalledClientCutOff: a client that stops reading a download has its
// connection closed once a write has waited for the per-write timeout.
func TestStalledClientCutOff(t *testing.T) {
	t.Parallel()
	srv, _, closed := slowServer(t, bigObject, 300*time.Millisecond)
	rd := dialGet(t, srv, true)
	res, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	// The client reads nothing more. The server must give up on it.
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the server still holds the connection of a client that stopped reading 30 s ago")
	}
}

// TestSlowDownloadCompletes: a download that takes several times the
// per-write timeout, read at a steady pace, completes: the timeout bounds
// each write, not the response. (The reader's pauses add up to at least
// three timeouts; the timeout is long enough that a busy machine does not
// stall a single write past it.)
func TestSlowDownloadCompletes(t *testing.T) {
	t.Parallel()
	const timeout, chunk, pause = 2 * time.Second, 256 << 10, 100 * time.Millisecond
	srv, body, _ := slowServer(t, 16<<20, timeout)
	rd := dialGet(t, srv, false)
	res, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	buf := make([]byte, chunk)
	start := time.Now()
	for {
		n, err := io.ReadFull(res.Body, buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
		time.Sleep(pause) // a steady, slow reader
	}
	if !bytes.Equal(got.Bytes(), body) {
		t.Fatalf("got %d bytes of %d, or other bytes", got.Len(), len(body))
	}
	if d := time.Since(start); d < 3*timeout {
		t.Fatalf("the download took %v, less than three per-write timeouts: the test proves nothing", d)
	}
}

// TestTricklingClientCutOff: a client that keeps reading, but far below
// the minimum rate, so that no single write waits for the per-write
// timeout, is cut off once its writes have taken longer than the bytes
// sent earned.
func TestTricklingClientCutOff(t *testing.T) {
	t.Parallel()
	srv, _, closed := slowServerRate(t, bigObject, mediaserve.Options{WriteTimeout: 10 * time.Minute, MinRate: 1 << 20})
	rd := dialGet(t, srv, false)
	res, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	go func() {
		buf := make([]byte, 1024)
		for {
			if _, err := res.Body.Read(buf); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond) // at most 20 KiB/s
		}
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Minute):
		t.Fatal("the server still holds the connection of a client reading at 20 KiB/s, below the 1 MiB/s minimum")
	}
}
