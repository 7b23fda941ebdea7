package logbuf_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/logbuf"
	"github.com/narrator/narrator/internal/logtest"
)

func TestHeldUntilFlush(t *testing.T) {
	var out logtest.Buffer
	w := logbuf.New(&out, time.Hour)
	fmt.Fprintln(w, "one")
	fmt.Fprintln(w, "two")
	if got := out.String(); got != "" {
		t.Fatalf("written before the interval: %q", got)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\n" {
		t.Fatalf("after Flush: %q", got)
	}
	// A full buffer is written out without waiting.
	line := strings.Repeat("x", 1023) + "\n"
	for range 64 {
		w.Write([]byte(line))
	}
	if got := len(out.String()); got != len("one\ntwo\n")+64*1024 {
		t.Errorf("after 64 KiB held: %d bytes written out", got)
	}
	// Close writes out the rest, and later writes go straight through.
	fmt.Fprintln(w, "three")
	w.Close()
	fmt.Fprintln(w, "four")
	if got := out.String(); !strings.HasSuffix(got, "three\nfour\n") {
		t.Errorf("after Close: ends %q", got[len(got)-20:])
	}
}

func TestWrittenWithinTheInterval(t *testing.T) {
	var out logtest.Buffer
	w := logbuf.New(&out, 10*time.Millisecond)
	defer w.Close()
	fmt.Fprintln(w, "soon")
	deadline := time.Now().Add(10 * time.Second)
	for out.String() != "soon\n" {
		if time.Now().After(deadline) {
			t.Fatalf("not written out after 10 s: %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// A warning is written out at once, with the lines held before it.
func TestWarningsAreNotHeld(t *testing.T) {
	var out logtest.Buffer
	w := logbuf.New(&out, time.Hour)
	defer w.Close()
	log := slog.New(w.Handler(slog.NewTextHandler(w, nil))).With("node", "a")
	log.Info("request")
	if out.String() != "" {
		t.Fatalf("info written at once: %q", out.String())
	}
	log.Warn("engine restarted")
	got := out.String()
	if !strings.Contains(got, "msg=request node=a") || !strings.Contains(got, `msg="engine restarted" node=a`) {
		t.Errorf("after a warning: %q", got)
	}
}

func TestConcurrentLinesStayWhole(t *testing.T) {
	var out logtest.Buffer
	w := logbuf.New(&out, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(w, "goroutine %d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*500 {
		t.Fatalf("%d lines, want %d", len(lines), 8*500)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	for g := range 8 {
		for i := range 500 {
			if l := fmt.Sprintf("goroutine %d line %d", g, i); !seen[l] {
				t.Fatalf("missing or torn: %q", l)
			}
		}
	}
}
