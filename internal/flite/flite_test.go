package flite_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/flite"
)

const sentence = "The council approved the budget for the new library on Tuesday."

// mustEngine returns an Engine, or skips the test if flite is not installed.
func mustEngine(tb testing.TB, opts flite.Options) *flite.Engine {
	tb.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		tb.Skip("flite not installed (apt-get install flite)")
	}
	e, err := flite.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Error(err)
		}
	})
	return e
}

// mustSpeech checks that samples hold audible speech at wantRate lasting minSec to maxSec.
func mustSpeech(tb testing.TB, samples []int16, rate, wantRate int, minSec, maxSec float64) {
	tb.Helper()
	if rate != wantRate {
		tb.Fatalf("sample rate = %d, want %d", rate, wantRate)
	}
	sec := float64(len(samples)) / float64(rate)
	if sec < minSec || sec > maxSec {
		tb.Errorf("duration = %.2fs, want %.1f..%.1fs", sec, minSec, maxSec)
	}
	var sum float64
	for _, v := range samples {
		sum += float64(v) * float64(v)
	}
	if r := math.Sqrt(sum / float64(max(len(samples), 1))); r < 300 {
		tb.Errorf("RMS = %.0f, want speech (> 300)", r)
	}
}

// mustScript writes an executable shell script that runs body the first time and the real
// flite afterwards.
func mustScript(tb testing.TB, first string) string {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "flite.sh")
	body := fmt.Sprintf("#!/bin/sh\nif mkdir %s/started 2>/dev/null; then %s; fi\nexec flite \"$@\"\n", dir, first)
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestSynthesize(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, flite.Options{})
	tests := []struct {
		voice          string
		text           string
		rate           float64
		wantRate       int
		minSec, maxSec float64
	}{
		{"slt", sentence, 1, 16000, 2.5, 6},
		{"slt", sentence, 2, 16000, 1, 3},
		{"slt", sentence, 0.5, 16000, 5, 12},
		{"rms", sentence, 1, 16000, 2.5, 6},
		{"awb", sentence, 1, 16000, 2.5, 6},
		{"kal16", sentence, 1, 16000, 2.5, 6},
		{"kal", sentence, 1, 8000, 2.5, 6},
		{"slt", `-t "quotes" \ back\slash <speak>not ssml</speak> naïve — café 日本 $(rm -rf /) ;|&`, 1, 16000, 2, 15},
	}
	for _, tt := range tests {
		t.Run(tt.voice+"/"+strconv.FormatFloat(tt.rate, 'f', -1, 64), func(t *testing.T) {
			t.Parallel()
			samples, rate, err := e.Synthesize(t.Context(), tt.voice, tt.text, tt.rate)
			if err != nil {
				t.Fatal(err)
			}
			mustSpeech(t, samples, rate, tt.wantRate, tt.minSec, tt.maxSec)
		})
	}
}

func TestUnknownVoice(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, flite.Options{})
	for _, v := range []string{"", "nobody", "http://example.com/x.flitevox", "/etc/passwd"} {
		if _, _, err := e.Synthesize(t.Context(), v, "Hi.", 1); err == nil {
			t.Errorf("voice %q: no error", v)
		}
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, flite.Options{Procs: 2})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			text := fmt.Sprintf("This is sentence number %d of the test.", i+1)
			samples, rate, err := e.Synthesize(t.Context(), "slt", text, 1)
			if err != nil {
				t.Error(err)
				return
			}
			mustSpeech(t, samples, rate, 16000, 1, 5)
		})
	}
	wg.Wait()
}

func TestHungProcessReplaced(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	cmd := mustScript(t, "sh -c 'echo $$ > "+pidFile+"; exec sleep 1000'")
	e := mustEngine(t, flite.Options{Command: cmd, UnitTimeout: 500 * time.Millisecond, CharTimeout: time.Millisecond})
	start := time.Now()
	samples, rate, err := e.Synthesize(t.Context(), "slt", "Still here.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 16000, 0.4, 3)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s, want the hung unit killed after about 0.5s", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !mustExit(t, pid, 2*time.Second) {
		t.Errorf("child %d (sleep 1000) still runs: the process group was not killed", pid)
	}
}

func TestCrashedProcessReplaced(t *testing.T) {
	t.Parallel()
	cmd := mustScript(t, "echo boom >&2; kill -9 $$")
	e := mustEngine(t, flite.Options{Command: cmd})
	samples, rate, err := e.Synthesize(t.Context(), "slt", "Still here.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 16000, 0.4, 3)
}

func TestAlwaysFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "flite.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho boom >&2\nkill -9 $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := mustEngine(t, flite.Options{Command: path})
	_, _, err := e.Synthesize(t.Context(), "slt", "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want a killed process with its stderr", err)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "flite.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := mustEngine(t, flite.Options{Command: path})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := e.Synthesize(ctx, "slt", "Hi.", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("returned after %s, want soon after the deadline", d)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, flite.Options{})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Synthesize(t.Context(), "slt", "Hi.", 1); !errors.Is(err, flite.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"two\nlines\t", "two lines "},
		{"café naïve", "cafe naive"},
		{"“q” ‘s’", `"q" 's'`},
		{"a—b", "a, b"},
		{"日本", "  "},
	}
	for _, tt := range tests {
		if got := flite.Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// mustExit reports whether process pid is gone (or a zombie) within d.
func mustExit(tb testing.TB, pid int, d time.Duration) bool {
	tb.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return true
		}
	}
	return false
}

const benchSentence = "The central library reopened on Monday after eighteen months of renovation work."

// BenchmarkUnit is the per-unit latency: one flite process, start to wave.
func BenchmarkUnit(b *testing.B) {
	e := mustEngine(b, flite.Options{Procs: 1})
	for b.Loop() {
		if _, _, err := e.Synthesize(b.Context(), "slt", benchSentence, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartup is the part of a unit's latency that a long-lived process would save:
// running flite on empty text.
func BenchmarkStartup(b *testing.B) {
	mustEngine(b, flite.Options{Procs: 1})
	for b.Loop() {
		if out, err := exec.Command("flite", "-voice", "slt", "-t", "", "-o", "none").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// TestCatalogVoices checks that every flite voice of the catalog is one flite has.
func TestCatalogVoices(t *testing.T) {
	t.Parallel()
	for _, v := range narrator.Voices() {
		if v.Engine == narrator.EngineFlite && !slices.Contains(flite.Voices(), v.EngineVoice) {
			t.Errorf("%s (%s): flite has no voice %q", v.Label(), v.Language, v.EngineVoice)
		}
	}
}
