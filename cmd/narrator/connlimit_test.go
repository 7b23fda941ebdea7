package main

import (
	"bufio"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/config"
)

// TestMaxConnections holds --max-connections connections open on a real
// server: one more is not served until one of them closes.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	const max = 16
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	finish := config.ServeFlags(fs, func(string) string { return "" })
	if err := fs.Parse([]string{"--data", t.TempDir(), "--role", "api", "--addr", "127.0.0.1:0", "--max-connections", "16"}); err != nil {
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
	done := make(chan error, 1)
	go func() { done <- srv.run(t.Context()) }()
	t.Cleanup(func() {
		srv.close(t.Context())
	})
	addr := srv.ln.Addr().String()

	// healthz sends a request on c and reads its answer.
	healthz := func(c net.Conn, rd *bufio.Reader) error {
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: narrator.test\r\n\r\n"); err != nil {
			return err
		}
		res, err := http.ReadResponse(rd, nil)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return err
	}
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	var held []net.Conn
	for range max {
		c, rd := dial()
		if err := healthz(c, rd); err != nil {
			t.Fatal(err)
		}
		held = append(held, c) // kept alive, idle
	}
	extra, rd := dial() // the kernel accepts it; the server does not yet
	answered := make(chan error, 1)
	go func() { answered <- healthz(extra, rd) }()
	select {
	case err := <-answered:
		t.Fatalf("connection %d was served (%v) while %d were open", max+1, err, max)
	case <-time.After(time.Second):
	}
	held[0].Close()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("connection %d, after one closed: %v", max+1, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("connection %d not served after one of the %d closed", max+1, max)
	}
	select {
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	default:
	}
}
