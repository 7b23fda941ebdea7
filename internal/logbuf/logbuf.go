// Package logbuf gathers a server's log lines and writes them out in
// batches: one write to the log's file or pipe every few milliseconds
// instead of one per line. At thousands of requests per second, the write
// of each access line cost more than a tenth of a request
// (bench/api.sh).
//
// A line waits at most the Writer's interval. Lines at Warn and above, as
// wrapped by Handler, are written out at once with everything before
// them, so that the line that explains a failure is never the one held
// back. On kill -9 the lines of the last interval are lost; Close writes
// out what is held.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// maxHeld is how many bytes of lines are held before they are written out
// without waiting for the interval.
const maxHeld = 64 << 10

// Writer holds what is written to it and writes it to its output at most
// an interval later. It is safe for concurrent use.
type Writer struct {
	out   io.Writer
	every time.Duration

	mu     sync.Mutex
	held   []byte
	armed  bool // a flush is scheduled
	closed bool
	err    error // the output's first error, returned by later writes
}

// New returns a Writer that writes to out at most every interval.
func New(out io.Writer, every time.Duration) *Writer {
	return &Writer{out: out, every: every}
}

// Write holds a copy of p. Once the Writer is closed it writes straight
// through.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Write(p)
	}
	if w.err != nil {
		return 0, w.err
	}
	w.held = append(w.held, p...)
	switch {
	case len(w.held) >= maxHeld:
		w.flushLocked()
	case !w.armed:
		w.armed = true
		time.AfterFunc(w.every, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.armed = false
			w.flushLocked()
		})
	}
	return len(p), nil
}

// Flush writes out what is held.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	return w.err
}

// Close writes out what is held; later writes go straight to the output.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	w.closed = true
	return w.err
}

func (w *Writer) flushLocked() {
	if len(w.held) == 0 {
		return
	}
	if _, err := w.out.Write(w.held); err != nil && w.err == nil {
		w.err = err
	}
	// A burst's buffer is not kept for good.
	if cap(w.held) > 4*maxHeld {
		w.held = nil
	} else {
		w.held = w.held[:0]
	}
}

// Handler wraps h, whose output is w, so that a record at Warn or above is
// written out at once, with every line held before it.
func (w *Writer) Handler(h slog.Handler) slog.Handler {
	return urgent{Handler: h, w: w}
}

type urgent struct {
	slog.Handler
	w *Writer
}

func (u urgent) Handle(ctx context.Context, r slog.Record) error {
	err := u.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		u.w.Flush()
	}
	return err
}

func (u urgent) WithAttrs(attrs []slog.Attr) slog.Handler {
	return urgent{Handler: u.Handler.WithAttrs(attrs), w: u.w}
}

func (u urgent) WithGroup(name string) slog.Handler {
	return urgent{Handler: u.Handler.WithGroup(name), w: u.w}
}
