package proc

import (
	"log/slog"
	"time"
)

// Options are the settings every engine that speaks through processes (espeak, flite,
// festival) shares; each embeds them in its own Options. The zero value is usable.
type Options struct {
	// Procs is the number of processes that may run at once. Zero means one per CPU (the
	// engine may bound it further).
	Procs int
	// Logger receives warnings about killed and replaced processes. Nil discards them.
	Logger *slog.Logger
	// Metrics is told of busy, failed and hung processes. Nil records nothing.
	Metrics Recorder
	// UnitTimeout is the fixed part of one unit's time limit. Zero means DefaultUnitTimeout.
	UnitTimeout time.Duration
	// CharTimeout is added to a unit's time limit per character of text. Zero means
	// DefaultCharTimeout.
	CharTimeout time.Duration
	// Sandbox runs the processes with less power than the server; nil runs them as they are.
	Sandbox *Sandbox
}

// Log returns o.Logger, or a logger that discards everything if it is nil, labelled with the
// engine's name.
func (o Options) Log(engine string) *slog.Logger {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With("engine", engine)
}

// Limit returns the time limit for speaking text in one unit.
func (o Options) Limit(text string) time.Duration {
	return Limit(o.UnitTimeout, o.CharTimeout, text)
}

// Runner returns a Runner of o.Procs processes of the named binary, logging as engine.
func (o Options) Runner(binary, engine string) *Runner {
	return NewRunner(binary, o.Procs, o.Log(engine), o.Metrics)
}
