package ctxio_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/ctxio"
)

// TestReader: reads pass through while the context lives, and the first read after it ends
// fails with its error, leaving the rest unread.
func TestReader(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	src := strings.NewReader("abcdef")
	r := ctxio.Reader(ctx, src)
	p := make([]byte, 2)
	if n, err := r.Read(p); n != 2 || err != nil || string(p) != "ab" {
		t.Fatalf("read while live: %d %q %v, want 2 \"ab\" nil", n, p[:n], err)
	}
	cancel()
	if n, err := io.Copy(io.Discard, r); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("copy after cancel: %d bytes, %v; want 0, context.Canceled", n, err)
	}
	if src.Len() != 4 {
		t.Errorf("%d bytes left unread, want 4", src.Len())
	}
}
