package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// startCapped starts a real api node with the given serve flags after
// --max-connections 16 and returns its address.
func startCapped(t *testing.T, flags ...string) string {
	t.Helper()
	srv := openAPINode(t, t.TempDir(), append([]string{"--max-connections", "16"}, flags...)...)
	done := make(chan error, 1)
	go func() { done <- srv.run(t.Context()) }()
	t.Cleanup(func() {
		srv.close(t.Context())
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		default:
		}
	})
	return srv.ln.Addr().String()
}

// dialFrom connects to addr from the loopback address from (any of
// 127.0.0.0/8), so that one test can play several clients.
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

// healthz sends GET /healthz on c and returns the status, or an error if
// no answer came within a second.
func healthz(c net.Conn) (int, error) {
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: narrator.test\r\n\r\n"); err != nil {
		return 0, err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return 0, err
	}
	return res.StatusCode, nil
}

// stalledPost sends a sign-in POST's headers and one byte of its body on
// c, then nothing more.
func stalledPost(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "POST /signin HTTP/1.1\r\nHost: narrator.test\r\n"+
		"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ne"); err != nil {
		t.Fatal(err)
	}
}

// TestSlowClientsKeepHealth: more stalled clients than --max-connections
// neither keep /healthz from answering within a second nor hold their
// connections for long: each is dropped once its body is too slow.
func TestSlowClientsKeepHealth(t *testing.T) {
	t.Parallel()
	addr := startCapped(t)
	var stalled []net.Conn
	for i := range 20 {
		c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 2+i%4), addr)
		stalledPost(t, c)
		stalled = append(stalled, c)
	}
	for i := range 3 {
		status, err := healthz(dialFrom(t, "127.0.0.1", addr))
		if err != nil || status != http.StatusOK {
			t.Fatalf("healthz %d with 20 stalled clients: %d %v", i, status, err)
		}
	}
	// Every stalled client is cut off well before the 2 minutes of the
	// server's ReadTimeout.
	for i, c := range stalled {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("stalled client %d still connected: %v", i, err)
		}
	}
}

// TestOneClientLeavesRoom: with --max-connections alone, one client that
// opens more connections than the cap, each stalled in a request body,
// still leaves room for another client's requests: its share is a
// quarter of the cap (it was the whole cap).
func TestOneClientLeavesRoom(t *testing.T) {
	t.Parallel()
	addr := startCapped(t)
	for range 40 {
		c := dialFrom(t, "127.0.6.1", addr)
		if _, err := io.WriteString(c, "POST /embed/events HTTP/1.1\r\nHost: narrator.test\r\n"+
			"Content-Type: application/json\r\nContent-Length: 900\r\n\r\n{"); err != nil {
			t.Fatal(err)
		}
	}
	// The server accepts connections in the order they came: these come
	// after the 40.
	for i := range 3 {
		if got := getFrom(t, "127.0.0.1", addr, "/api/v3/openapi.json", ""); got != http.StatusOK {
			t.Fatalf("request %d from another client: %d, want 200", i, got)
		}
	}
}

// getFrom sends GET path on a connection from the loopback address from,
// with the given extra header lines, and returns the status.
func getFrom(t *testing.T, from, addr, path, headers string) int {
	t.Helper()
	c := dialFrom(t, from, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: narrator.test\r\nConnection: close\r\n"+headers+"\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestMetricsOnlyOnLoopback: without --metrics-addr, /metrics answers
// only a client on this machine, never one a proxy forwards.
func TestMetricsOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	addr := startCapped(t, "--addr", fmt.Sprintf("0.0.0.0:%d", port))
	if got := getFrom(t, "127.0.0.1", addr, "/metrics", ""); got != http.StatusOK {
		t.Errorf("/metrics from loopback: %d, want 200", got)
	}
	if got := getFrom(t, "127.0.0.1", addr, "/metrics", "X-Forwarded-For: 192.0.2.1\r\n"); got != http.StatusNotFound {
		t.Errorf("/metrics forwarded by a local proxy: %d, want 404", got)
	}
	// This machine's own non-loopback address, if it has one, stands for a
	// remote client.
	conns, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range conns {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.To4() == nil {
			continue
		}
		if got := getFrom(t, ip.IP.String(), fmt.Sprintf("%s:%d", ip.IP, port), "/metrics", ""); got != http.StatusNotFound {
			t.Errorf("/metrics from %s: %d, want 404", ip.IP, got)
		}
		return
	}
	t.Log("no non-loopback IPv4 address to test a remote client from")
}
