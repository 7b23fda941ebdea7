package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestFramePolicy checks, on a real server, that the embed's pages may be
// framed by any site and that every other page may not.
func TestFramePolicy(t *testing.T) {
	t.Parallel()
	data, _, proj := fixture(t)
	s := startServer(t, data, freeAddr(t), "--role", "api")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) *http.Response {
		t.Helper()
		res, _ := send(t, client, "GET", s.base+path, nil, "Accept", "text/html")
		return res
	}
	for _, path := range []string{
		fmt.Sprintf("/embed/%d?external_id=not-yet", proj.ID),
		fmt.Sprintf("/embed/%d?url=https%%3A%%2F%%2Fnews.example%%2Fa", proj.ID),
		fmt.Sprintf("/embed/%d", proj.ID),
		"/embed/nope",
	} {
		res := get(path)
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors *") || strings.Contains(csp, "'unsafe-inline'") || res.Header.Get("X-Frame-Options") != "" {
			t.Errorf("%s: %d, CSP %q, X-Frame-Options %q; want framable by any site, no inline code", path, res.StatusCode, csp, res.Header.Get("X-Frame-Options"))
		}
		if res.StatusCode/100 != 4 {
			t.Errorf("%s: status %d, want 4xx for an audio that is not there", path, res.StatusCode)
		}
	}
	for _, path := range []string{"/", "/signin", "/projects", fmt.Sprintf("/projects/%d", proj.ID), "/keys", "/no-such-page"} {
		res := get(path)
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || res.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: %d, CSP %q, X-Frame-Options %q; want framing refused", path, res.StatusCode, csp, res.Header.Get("X-Frame-Options"))
		}
	}
}
