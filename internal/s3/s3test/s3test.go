// Package s3test gives tests an s3.Store on a real S3-compatible server.
//
// The server is named by TEST_S3_URL, an s3.ParseURL URL such as
//
//	s3://narrator-test?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true
//
// with the credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
// scripts/test.sh starts versitygw and sets all three (see
// scripts/services.sh). Without TEST_S3_URL the tests skip, unless
// NARRATOR_TEST_FULL=1, where they fail.
package s3test

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/proctest"
	"github.com/narrator/narrator/internal/s3"
)

// URL returns TEST_S3_URL. It skips tb if TEST_S3_URL is unset, or fails it
// when NARRATOR_TEST_FULL=1.
func URL(tb testing.TB) string {
	tb.Helper()
	return proctest.NeedEnv(tb, "TEST_S3_URL", "an S3 server", "scripts/test.sh starts versitygw and sets TEST_S3_URL")
}

// Options returns the options of TEST_S3_URL with a key prefix of t's own,
// whose objects are removed when t ends. It skips t if TEST_S3_URL is unset,
// or fails it when NARRATOR_TEST_FULL=1.
func Options(tb testing.TB) s3.Options {
	tb.Helper()
	opts, err := s3.ParseURL(URL(tb), os.Getenv)
	if err != nil {
		tb.Fatalf("TEST_S3_URL: %v", err)
	}
	base := opts // the store the cleanup removes t's prefix from
	own := "test-" + strings.ToLower(rand.Text())
	if opts.Prefix != "" {
		opts.Prefix += "/"
	}
	opts.Prefix += own
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, err := s3.New(ctx, base)
		if err == nil {
			err = s.DeletePrefix(ctx, own)
		}
		if err != nil {
			tb.Errorf("remove the test's objects: %v", err)
		}
	})
	return opts
}

// New returns a Store on TEST_S3_URL's bucket, under a key prefix of t's
// own that is emptied when t ends. It skips t if TEST_S3_URL is unset, or
// fails it when NARRATOR_TEST_FULL=1.
func New(tb testing.TB) *s3.Store {
	tb.Helper()
	s, err := s3.New(tb.Context(), Options(tb))
	if err != nil {
		tb.Fatalf("%v (scripts/services.sh's start_versitygw creates the test bucket)", err)
	}
	return s
}

// Proxy stands between a store and TEST_S3_URL's server, for tests of what
// the store does when the server fails: it passes every request on, with
// its Host header, so that signatures hold, until Fail or Cut.
type Proxy struct {
	srv  *httptest.Server
	fail atomic.Bool
}

// NewProxy starts a Proxy to the server of opts, which it returns pointed
// at the proxy, and closes the proxy when tb ends.
func NewProxy(tb testing.TB, opts s3.Options) (*Proxy, s3.Options) {
	tb.Helper()
	target, err := url.Parse(opts.Endpoint)
	if err != nil {
		tb.Fatalf("endpoint %q: %v", opts.Endpoint, err)
	}
	p := &Proxy{}
	pass := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.fail.Load() {
			// S3's answer to a server that cannot take the request now.
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			return
		}
		pass.ServeHTTP(w, r)
	}))
	tb.Cleanup(p.srv.Close)
	opts.Endpoint = p.srv.URL
	return p, opts
}

// Fail makes the proxy answer every request 503 SlowDown, as S3 does when
// it cannot serve.
func (p *Proxy) Fail() { p.fail.Store(true) }

// Cut closes the proxy's connections and its listener: the server can no
// longer be reached.
func (p *Proxy) Cut() {
	p.srv.Listener.Close()
	p.srv.CloseClientConnections()
}
