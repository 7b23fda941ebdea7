package main

import (
	"context"
	"errors"
	"flag"

	"github.com/narrator/narrator/internal/onnx"
	"github.com/narrator/narrator/internal/onnx/worker"
)

// onnxWorkerCommand is the hidden command "onnx-worker": a worker process of a neural voice's
// pool (worker.Pool starts it, in the engines' sandbox), which runs the model on onnxruntime
// and talks to the server over its stdin and stdout. It is not for people: its flags are the
// pool's (worker.Flags), and the usage does not list it.
type onnxWorkerCommand struct{ e *env }

// Run serves runs until the server closes the worker's stdin.
func (c onnxWorkerCommand) Run(ctx context.Context, args []string) error {
	e := c.e
	f, err := worker.ParseFlags(args, e.stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("onnx-worker: %v", err)
	}
	return onnx.ServeWorker(ctx, f, e.stdin, e.stdout)
}
