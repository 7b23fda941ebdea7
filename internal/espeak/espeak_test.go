package espeak_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/espeak"
)

const sentence = "The council approved the budget for the new library on Tuesday."

// mustEngine returns an Engine, or skips the test if espeak-ng is not installed.
func mustEngine(tb testing.TB, opts espeak.Options) *espeak.Engine {
	tb.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		tb.Skip("espeak-ng not installed (apt-get install espeak-ng)")
	}
	e, err := espeak.New(opts)
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

// mustSpeech checks that samples hold audible speech at 22050 Hz lasting minSec to maxSec.
func mustSpeech(tb testing.TB, samples []int16, rate int, minSec, maxSec float64) {
	tb.Helper()
	if rate != 22050 {
		tb.Fatalf("sample rate = %d, want 22050", rate)
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

// mustScript writes an executable shell script that runs first the first time and the real
// espeak-ng afterwards.
func mustScript(tb testing.TB, first string) string {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "espeak.sh")
	body := fmt.Sprintf("#!/bin/sh\nif mkdir %s/started 2>/dev/null; then %s; fi\nexec espeak-ng \"$@\"\n", dir, first)
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestSynthesize(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, espeak.Options{})
	tests := []struct {
		name           string
		voice          string
		text           string
		rate           float64
		minSec, maxSec float64
	}{
		{"en-us", "en-us", sentence, 1, 2, 6},
		{"en-us female", "en-us+f3", sentence, 1, 2, 6},
		{"faster", "en-us", sentence, 2, 1, 3},
		{"slower", "en-us", sentence, 0.5, 4, 12},
		{"german female", "de+f3", "Der Gemeinderat hat am Dienstag den Haushalt für die neue Bibliothek beschlossen.", 1, 3, 9},
		{"french male", "fr-fr+m3", "Le conseil municipal a approuvé mardi le budget de la nouvelle bibliothèque.", 1, 3, 9},
		{"nasty", "en-us", `-v "quotes" \ back\slash <speak>not markup</speak> naïve — café $(rm -rf /) ;|&`, 1, 2, 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			samples, rate, err := e.Synthesize(t.Context(), tt.voice, tt.text, tt.rate)
			if err != nil {
				t.Fatal(err)
			}
			mustSpeech(t, samples, rate, tt.minSec, tt.maxSec)
		})
	}
}

func TestBadVoice(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, espeak.Options{})
	for _, v := range []string{"", "-h", "xx-nosuch", "de;rm", "../../etc/passwd"} {
		if _, _, err := e.Synthesize(t.Context(), v, "Hi.", 1); err == nil {
			t.Errorf("voice %q: no error", v)
		}
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, espeak.Options{Procs: 2})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			text := fmt.Sprintf("This is sentence number %d of the test.", i+1)
			samples, rate, err := e.Synthesize(t.Context(), "en-us+m3", text, 1)
			if err != nil {
				t.Error(err)
				return
			}
			mustSpeech(t, samples, rate, 1, 5)
		})
	}
	wg.Wait()
}

func TestHungProcessReplaced(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	cmd := mustScript(t, "sh -c 'echo $$ > "+pidFile+"; exec sleep 1000'")
	e := mustEngine(t, espeak.Options{Command: cmd, UnitTimeout: 500 * time.Millisecond, CharTimeout: time.Millisecond})
	start := time.Now()
	samples, rate, err := e.Synthesize(t.Context(), "en-us", "Still here.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 0.4, 3)
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
	e := mustEngine(t, espeak.Options{Command: cmd})
	samples, rate, err := e.Synthesize(t.Context(), "en-us", "Still here.", 1)
	if err != nil {
		t.Fatal(err)
	}
	mustSpeech(t, samples, rate, 0.4, 3)
}

func TestAlwaysFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "espeak.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho boom >&2\nkill -9 $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := mustEngine(t, espeak.Options{Command: path})
	_, _, err := e.Synthesize(t.Context(), "en-us", "Hi.", 1)
	if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want a killed process with its stderr", err)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "espeak.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := mustEngine(t, espeak.Options{Command: path})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := e.Synthesize(ctx, "en-us", "Hi.", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("returned after %s, want soon after the deadline", d)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, espeak.Options{})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Synthesize(t.Context(), "en-us", "Hi.", 1); !errors.Is(err, espeak.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
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

// BenchmarkUnit is the per-unit latency: one espeak-ng process, start to wave.
func BenchmarkUnit(b *testing.B) {
	e := mustEngine(b, espeak.Options{Procs: 1})
	for b.Loop() {
		if _, _, err := e.Synthesize(b.Context(), "en-us", benchSentence, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartup is the part of a unit's latency that a long-lived process would save:
// running espeak-ng on empty text.
func BenchmarkStartup(b *testing.B) {
	mustEngine(b, espeak.Options{Procs: 1})
	for b.Loop() {
		if out, err := exec.Command("espeak-ng", "-v", "en-us", "-q", "").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// TestCatalogVoices speaks a word in every espeak voice of the catalog, in its language.
func TestCatalogVoices(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, espeak.Options{})
	for _, v := range narrator.Voices() {
		if v.Engine != narrator.EngineEspeak {
			continue
		}
		t.Run(v.Language+"/"+v.Name, func(t *testing.T) {
			t.Parallel()
			samples, rate, err := e.Synthesize(t.Context(), v.EngineVoice, "1, 2, 3.", 1)
			if err != nil {
				t.Fatal(err)
			}
			mustSpeech(t, samples, rate, 0.5, 5)
		})
	}
}
