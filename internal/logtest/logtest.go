// Package logtest helps tests read what code logs while it runs.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a logger's goroutines write while a test reads it. It is safe
// for concurrent use; the zero value is empty and ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
