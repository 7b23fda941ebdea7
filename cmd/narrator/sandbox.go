package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/proc"
)

// sandboxOptions returns the sandbox of cfg's engines: it hides the data
// directory, the SQLite database's directory and the media directory.
func sandboxOptions(cfg config.Config) proc.SandboxOptions {
	hide := []string{cfg.DataDir}
	if kind, path, err := config.ParseDatabase(cfg.Database); err == nil && kind == config.SQLite {
		hide = append(hide, filepath.Dir(path))
	}
	if kind, dir, err := config.ParseMedia(cfg.Media); err == nil && kind == config.File {
		hide = append(hide, dir)
	}
	return proc.SandboxOptions{Hide: hide}
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
