package main

import (
	"context"
	"errors"
	"flag"

	"github.com/narrator/narrator/internal/onnx"
	"github.com/narrator/narrator/internal/onnx/worker"
)

// runONNXWorker is the hidden subcommand "onnx-worker": a worker process of a neural voice's
// pool (worker.Pool starts it, in the engines' sandbox), which runs the model on onnxruntime
// and talks to the server over its stdin and stdout. It is not for people: its flags are the
// pool's (worker.Flags).
func runONNXWorker(ctx context.Context, e *env, args []string) error {
	f, err := worker.ParseFlags(args, e.stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("onnx-worker: %v", err)
	}
	return onnx.ServeWorker(ctx, f, e.stdin, e.stdout)
}
