package s3_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/blobtest"
	"github.com/narrator/narrator/internal/s3"
	"github.com/narrator/narrator/internal/s3/s3test"
)

// TestConformance is not parallel: the suite's memory check needs the
// process to itself.
func TestConformance(t *testing.T) {
	// Over plain http, as to the test server, the SDK signs every 64 KiB
	// chunk of an upload, which makes about 13% of the object in garbage;
	// the memory it holds at once stays checked at the suite's limit.
	blobtest.Run(t, func(t *testing.T) blobtest.Store { return s3test.New(t) }, blobtest.AllocLimit(blobtest.LargeSize/2))
}

func mustNew(t *testing.T, opts s3.Options) *s3.Store {
	t.Helper()
	s, err := s3.New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func mustPut(t *testing.T, s *s3.Store, key, data string) {
	t.Helper()
	if err := s.Put(t.Context(), key, strings.NewReader(data)); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func mustRead(t *testing.T, s *s3.Store, key string) string {
	t.Helper()
	rc, _, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return string(data)
}

// TestPrefix checks that a store's keys live under its prefix, and that it
// reaches nothing outside it.
func TestPrefix(t *testing.T) {
	t.Parallel()
	opts := s3test.Options(t)
	outer := mustNew(t, opts)
	opts.Prefix += "/inner"
	inner := mustNew(t, opts)

	mustPut(t, inner, "tok/a.mp3", "inner")
	mustPut(t, outer, "tok/a.mp3", "outer")
	if got := mustRead(t, outer, "inner/tok/a.mp3"); got != "inner" {
		t.Errorf("outer store's inner/tok/a.mp3 = %q, want %q", got, "inner")
	}
	if got := mustRead(t, inner, "tok/a.mp3"); got != "inner" {
		t.Errorf("inner store's tok/a.mp3 = %q, want %q", got, "inner")
	}

	if err := inner.DeletePrefix(t.Context(), "tok"); err != nil {
		t.Fatalf("DeletePrefix: %v", err)
	}
	if got := mustRead(t, outer, "tok/a.mp3"); got != "outer" {
		t.Errorf("after the inner store's DeletePrefix, outer tok/a.mp3 = %q, want it kept", got)
	}
	if _, _, err := outer.Open(t.Context(), "inner/tok/a.mp3"); !errors.Is(err, narrator.ErrBlobNotFound) {
		t.Errorf("Open of the removed object: %v, want narrator.ErrBlobNotFound", err)
	}
}

// TestContentType checks the Content-Type stored with objects, small ones
// sent in one PUT and large ones in a multipart upload alike.
func TestContentType(t *testing.T) {
	t.Parallel()
	s := s3test.New(t)
	large := strings.Repeat("x", 3<<20)
	tests := []struct{ key, data, want string }{
		{"tok/audio.mp3", "mp3", "audio/mpeg"},
		{"tok/large.mp3", large, "audio/mpeg"},
		{"tok/hls/index.m3u8", "#EXTM3U\n", "application/vnd.apple.mpegurl"},
		{"tok/hls/seg00000.ts", "G", "video/mp2t"},
		{"tok/notes.html", "<html>", "application/octet-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			mustPut(t, s, tt.key, tt.data)
			got, err := s3.StoredContentType(t.Context(), s, tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("stored Content-Type = %q, want %q", got, tt.want)
			}
			if got := mustRead(t, s, tt.key); got != tt.data {
				t.Errorf("content: %d bytes, not the %d written", len(got), len(tt.data))
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	good := s3test.Options(t)
	tests := []struct {
		name   string
		modify func(*s3.Options)
		want   string
	}{
		{"missing bucket", func(o *s3.Options) { o.Bucket = "narrator-no-such-bucket" }, `bucket "narrator-no-such-bucket" does not exist`},
		{"wrong secret", func(o *s3.Options) { o.SecretAccessKey += "-wrong" }, "check bucket"},
		{"no credentials", func(o *s3.Options) { o.AccessKeyID = "" }, "credentials missing"},
		{"bad prefix", func(o *s3.Options) { o.Prefix = "a//b" }, `prefix "a//b"`},
		{"bad endpoint", func(o *s3.Options) { o.Endpoint = "ftp://example.com" }, "scheme must be http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := good
			tt.modify(&opts)
			_, err := s3.New(t.Context(), opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s3cr3t"}
	creds := func(o s3.Options) s3.Options {
		o.AccessKeyID, o.SecretAccessKey = "AKID", "s3cr3t"
		return o
	}
	tests := []struct {
		name string
		raw  string
		want s3.Options
	}{
		{"bucket only", "s3://media", creds(s3.Options{Bucket: "media"})},
		{"bucket and slash", "s3://media/", creds(s3.Options{Bucket: "media"})},
		{"prefix", "s3://media/narrator/prod", creds(s3.Options{Bucket: "media", Prefix: "narrator/prod"})},
		{"prefix with trailing slash", "s3://media/narrator/", creds(s3.Options{Bucket: "media", Prefix: "narrator"})},
		{
			"everything",
			"s3://narrator-test/p?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true",
			creds(s3.Options{Bucket: "narrator-test", Prefix: "p", Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", PathStyle: true}),
		},
		{"https endpoint with slash", "s3://b.example?endpoint=https://s3.example.com/", creds(s3.Options{Bucket: "b.example", Endpoint: "https://s3.example.com/"})},
		{"path_style false", "s3://media?path_style=false", creds(s3.Options{Bucket: "media"})},
		{"escaped endpoint", "s3://media?endpoint=http%3A%2F%2Fminio%3A9000", creds(s3.Options{Bucket: "media", Endpoint: "http://minio:9000"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := s3.ParseURL(tt.raw, func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseURL(%q) (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	full := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s3cr3t"}
	tests := []struct {
		name string
		raw  string
		env  map[string]string
		want string // a part of the error
	}{
		{"not a URL", "s3://media/%zz", full, "invalid URL"},
		{"empty", "", full, `scheme "" is not s3`},
		{"wrong scheme", "https://media/p", full, `scheme "https" is not s3`},
		{"a path", "/srv/media", full, `scheme "" is not s3`},
		{"no slashes", "s3:media", full, "missing // after s3:"},
		{"no bucket", "s3:///prefix", full, "missing bucket name"},
		{"bad bucket", "s3://Media_Bucket", full, `bucket name "Media_Bucket"`},
		{"port on bucket", "s3://media:9000", full, `bucket name "media:9000"`},
		{"empty segment", "s3://media/a//b", full, `prefix "a//b"`},
		{"dot segment", "s3://media/a/../b", full, `prefix "a/../b"`},
		{"credentials in URL", "s3://AKID:s3cr3t@media", full, "credentials do not belong in the URL"},
		{"fragment", "s3://media#x", full, "fragment"},
		{"unknown parameter", "s3://media?endpiont=http://x", full, `unknown query parameter "endpiont"`},
		{"repeated parameter", "s3://media?region=a&region=b", full, `"region" is given 2 times`},
		{"empty parameter", "s3://media?region=", full, `"region" is empty`},
		{"bad query", "s3://media?region=%zz", full, "query"},
		{"bad path_style", "s3://media?path_style=yes please", full, `path_style "yes please" is not a boolean`},
		{"endpoint without scheme", "s3://media?endpoint=127.0.0.1:9000", full, "endpoint"},
		{"endpoint ftp", "s3://media?endpoint=ftp://host", full, "scheme must be http or https"},
		{"endpoint with path", "s3://media?endpoint=http://host/bucket", full, "want only a scheme and a host"},
		{"endpoint without host", "s3://media?endpoint=http://", full, "want only a scheme and a host"},
		{"endpoint not a URL", "s3://media?endpoint=http://host%25zz", full, "endpoint is not a URL"},
		{"endpoint with credentials", "s3://media?endpoint=http://AKID:s3cr3t@host", full, "endpoint: credentials do not belong"},
		{"no credentials", "s3://media", nil, "set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"no secret", "s3://media", map[string]string{"AWS_ACCESS_KEY_ID": "AKID"}, "set both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := s3.ParseURL(tt.raw, func(k string) string { return tt.env[k] })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseURL(%q) error = %v, want one containing %q", tt.raw, err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}

// TestUnavailable checks that the store marks narrator.EUNAVAILABLE the
// errors that say the server cannot serve just now, a 503 (after the SDK's
// retries) and a server that cannot be reached, and those only: a missing
// object stays ErrBlobNotFound and a bad key EINVALID.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	p, opts := s3test.NewProxy(t, s3test.Options(t))
	s := mustNew(t, opts)
	mustPut(t, s, "a/1.mp3", "one")
	ctx := t.Context()
	if _, _, err := s.Open(ctx, "a/missing.mp3"); !errors.Is(err, narrator.ErrBlobNotFound) || narrator.ErrorCode(err) == narrator.EUNAVAILABLE {
		t.Fatalf("Open of a missing object: %v (code %s), want ErrBlobNotFound", err, narrator.ErrorCode(err))
	}
	for _, fault := range []struct {
		name  string
		start func()
	}{{"answering 503", p.Fail}, {"unreachable", p.Cut}} {
		fault.start()
		calls := map[string]error{
			"Ping":         s.Ping(ctx),
			"Put":          s.Put(ctx, "a/2.mp3", strings.NewReader("two")),
			"Delete":       s.Delete(ctx, "a/1.mp3"),
			"DeletePrefix": s.DeletePrefix(ctx, "a"),
		}
		_, _, calls["Open"] = s.Open(ctx, "a/1.mp3")
		for name, err := range calls {
			if got := narrator.ErrorCode(err); got != narrator.EUNAVAILABLE {
				t.Errorf("%s, %s: %v (code %q), want %s", fault.name, name, err, got, narrator.EUNAVAILABLE)
			}
		}
		if _, _, err := s.Open(ctx, "../x.mp3"); narrator.ErrorCode(err) != narrator.EINVALID {
			t.Errorf("%s, Open of a bad key: %v, want EINVALID", fault.name, err)
		}
	}
}
