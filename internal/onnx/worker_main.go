package onnx

import (
	"context"
	"fmt"
	"io"

	"github.com/narrator/narrator/internal/onnx/worker"
)

// ServeWorker is the body of a worker process ("narrator onnx-worker"): it loads the library
// and the model that f names and serves runs on r and w until r ends (see worker.Serve). A
// failure to load either is returned before anything is written: the server reads it from
// the worker's stderr.
func ServeWorker(ctx context.Context, f worker.Flags, r io.Reader, w io.Writer) error {
	if err := Load(f.Library); err != nil {
		return err
	}
	s, err := Open(f.Model, Options{Threads: f.Threads})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := worker.Serve(ctx, r, w, s, worker.ServeOptions{Runs: f.Runs, Fault: f.Fault}); err != nil {
		return fmt.Errorf("onnx worker: %w", err)
	}
	return nil
}
