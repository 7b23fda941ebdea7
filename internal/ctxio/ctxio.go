// Package ctxio stops reads when a context ends, so that a long copy ends with its request.
package ctxio

import (
	"context"
	"io"
)

// Reader returns a reader of r whose reads fail with ctx's error once ctx ends: an io.Copy
// from it stops within one read of the end.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
