package s3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/narrator/narrator"
)

// timeout is a net.Error that timed out.
type timeout struct{}

func (timeout) Error() string   { return "i/o timeout" }
func (timeout) Timeout() bool   { return true }
func (timeout) Temporary() bool { return true }

// TestUnavailableErrors checks which errors unavailable marks
// narrator.EUNAVAILABLE: those that say the server is away or cannot serve
// just now, and not those that say the configuration or the request is
// wrong. TestUnavailable checks the first kind on a real server.
func TestUnavailableErrors(t *testing.T) {
	t.Parallel()
	viaURL := func(err error) error { return &url.Error{Op: "Get", URL: "http://s3.test/b/k", Err: err} }
	dial := func(err error) error { return viaURL(&net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"503 SlowDown", minio.ErrorResponse{StatusCode: 503, Code: "SlowDown"}, narrator.EUNAVAILABLE},
		{"500 InternalError", minio.ErrorResponse{StatusCode: 500, Code: "InternalError"}, narrator.EUNAVAILABLE},
		{"504", minio.ErrorResponse{StatusCode: 504}, narrator.EUNAVAILABLE},
		{"connection refused", dial(syscall.ECONNREFUSED), narrator.EUNAVAILABLE},
		{"connection reset", viaURL(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), narrator.EUNAVAILABLE},
		{"timeout", viaURL(timeout{}), narrator.EUNAVAILABLE},
		{"answer cut short", viaURL(io.ErrUnexpectedEOF), narrator.EUNAVAILABLE},
		{"connection closed", viaURL(io.EOF), narrator.EUNAVAILABLE},
		{"name server failing", dial(&net.DNSError{Err: "server misbehaving", Name: "s3.test", IsTemporary: true}), narrator.EUNAVAILABLE},
		{"403 AccessDenied", minio.ErrorResponse{StatusCode: 403, Code: "AccessDenied"}, narrator.EINTERNAL},
		{"404 NoSuchBucket", minio.ErrorResponse{StatusCode: 404, Code: "NoSuchBucket"}, narrator.EINTERNAL},
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "s3.test", IsNotFound: true}), narrator.EINTERNAL},
		{"certificate refused", viaURL(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), narrator.EINTERNAL},
		{"HTTP to an HTTPS endpoint", viaURL(errors.New("http: server gave HTTP response to HTTPS client")), narrator.EINTERNAL},
		{"bad key", narrator.Errorf(narrator.EINVALID, "bad key"), narrator.EINVALID},
		{"other", errors.New("something else"), narrator.EINTERNAL},
	} {
		err := unavailable(t.Context(), fmt.Errorf("s3: open %q: %w", "k", tt.err))
		if got := narrator.ErrorCode(err); got != tt.want {
			t.Errorf("%s: code %q, want %q (%v)", tt.name, got, tt.want, err)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: the error lost its cause: %v", tt.name, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := unavailable(ctx, dial(syscall.ECONNREFUSED)); narrator.ErrorCode(err) != narrator.EINTERNAL {
		t.Errorf("after the caller's cancellation: code %q, want it as it was", narrator.ErrorCode(err))
	}
}
