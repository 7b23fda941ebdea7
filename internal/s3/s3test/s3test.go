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
	"os"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/proctest"
	"github.com/narrator/narrator/internal/s3"
)

// URL returns TEST_S3_URL. It skips tb if TEST_S3_URL is unset, or fails it
// when NARRATOR_TEST_FULL=1.
func URL(tb testing.TB) string {
	tb.Helper()
	raw := os.Getenv("TEST_S3_URL")
	if raw == "" {
		if proctest.Full() {
			tb.Fatal("TEST_S3_URL is not set; scripts/test.sh starts an S3 server and sets it")
		}
		tb.Skip("TEST_S3_URL is not set; set NARRATOR_TEST_FULL=1 to make this a failure")
	}
	return raw
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
