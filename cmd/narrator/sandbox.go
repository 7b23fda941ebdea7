package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/proc"
)

// sandboxOptions returns the sandbox of the engines of a node on b: it hides
// the data directory, the SQLite database's directory and the media
// directory.
func sandboxOptions(b config.Backends) proc.SandboxOptions {
	hide := []string{b.DataDir}
	if kind, path, err := config.ParseDatabase(b.Database); err == nil && kind == config.SQLite {
		hide = append(hide, filepath.Dir(path))
	}
	if kind, dir, err := config.ParseMedia(b.Media); err == nil && kind == config.File {
		hide = append(hide, dir)
	}
	return proc.SandboxOptions{Hide: hide}
}

// engineSandbox returns the sandbox that every untrusted program of a node
// on b runs in, as mode (--sandbox) says (see openSandbox): serve's engines
// and the check of a voice's model at install, which reads the same files
// with the same onnxruntime.
func engineSandbox(ctx context.Context, mode string, b config.Backends, logger *slog.Logger) (*proc.Sandbox, error) {
	return openSandbox(ctx, mode, sandboxOptions(b), logger)
}

// openSandbox returns the sandbox engine processes run in, as mode
// (--sandbox) says: nil for off; for auto, the sandbox if it passes its
// probe here, else nil and one warning; for on, the sandbox or an error.
func openSandbox(ctx context.Context, mode string, opts proc.SandboxOptions, logger *slog.Logger) (*proc.Sandbox, error) {
	if mode == config.SandboxOff {
		logger.Info("speech engines run unsandboxed (--sandbox off)")
		return nil, nil
	}
	sb, err := proc.NewSandbox(opts)
	if err == nil {
		err = sb.Probe(ctx)
	}
	switch {
	case err == nil:
		logger.Info("speech engines run sandboxed", "hidden", opts.Hide)
		return sb, nil
	case mode == config.SandboxOn:
		return nil, fmt.Errorf("--sandbox on, but the sandbox does not work here (is bubblewrap installed, and may it make namespaces?): %w", err)
	}
	logger.Warn("speech engines run UNSANDBOXED, with the server's access to the database and to every account's media, because the sandbox does not work here: install bubblewrap (apt-get install bubblewrap) and allow it namespaces, or set --sandbox off to accept this",
		"err", err)
	return nil, nil
}
