package logtest_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/narrator/narrator/internal/logtest"
)

// TestBufferConcurrent writes lines from many goroutines while reading, as a logger and a test
// do; under -race an unguarded buffer fails, and every line must arrive whole.
func TestBufferConcurrent(t *testing.T) {
	t.Parallel()
	var b logtest.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "line %d %d\n", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "line ") || strings.Count(l, " ") != 2 {
			t.Errorf("line %q is not whole", l)
		}
	}
}
