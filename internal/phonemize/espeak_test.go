package phonemize_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// helper is the narrator-espeak program TestMain built from helper/narrator-espeak.c, or
// empty if it could not (helperErr says why).
var helper, helperErr = "", error(nil)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "narrator-espeak-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	helper = filepath.Join(dir, "narrator-espeak")
	out, err := exec.Command("cc", "-O2", "-Wall", "-o", helper, "helper/narrator-espeak.c", "-lespeak-ng").CombinedOutput()
	if err != nil {
		helper, helperErr = "", fmt.Errorf("%v: %s", err, out)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mustHelper returns the path of the helper program built from source. If it could not be
// built (no C compiler, no libespeak-ng-dev) it skips the test, or fails it under
// NARRATOR_TEST_FULL=1.
func mustHelper(tb testing.TB) string {
	tb.Helper()
	if helper == "" {
		tb.Logf("building helper/narrator-espeak.c: %v", helperErr)
		proctest.Missing(tb, "a C compiler and libespeak-ng-dev", "apt-get install gcc libespeak-ng-dev")
	}
	return helper
}

// mustPhonemizer returns a Phonemizer running the helper built from source unless
// opts.Command says otherwise, closed when the test ends.
func mustPhonemizer(tb testing.TB, opts phonemize.Options) *phonemize.Phonemizer {
	tb.Helper()
	if opts.Command == "" {
		opts.Command = mustHelper(tb)
	}
	return enginetest.Must(tb, phonemize.New, opts)
}

// mustSandbox returns the sandbox the server runs engines in, or skips (fails under
// NARRATOR_TEST_FULL=1) without bubblewrap.
func mustSandbox(tb testing.TB) *proc.Sandbox {
	tb.Helper()
	return proctest.Sandbox(tb, tb.TempDir())
}

// counts is a proc.Recorder that counts what it is told.
type counts struct{ busy, restarted, timedOut atomic.Int32 }

func (c *counts) Busy(delta int) { c.busy.Add(int32(delta)) }
func (c *counts) Restarted()     { c.restarted.Add(1) }
func (c *counts) TimedOut()      { c.timedOut.Add(1) }

// failHandler is a slog.Handler that fails the test on every warning.
type failHandler struct{ tb testing.TB }

func (h failHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h failHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.tb.Errorf("logged: %s", r.Message)
	}
	return nil
}
func (h failHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h failHandler) WithGroup(string) slog.Handler      { return h }

// failLogger returns a logger that fails the test on every warning.
func failLogger(tb testing.TB) *slog.Logger { return slog.New(failHandler{tb}) }

// mustPhonemize returns the clauses of text, failing the test on an error.
func mustPhonemize(tb testing.TB, p *phonemize.Phonemizer, voice, text string) []phonemize.Clause {
	tb.Helper()
	clauses, err := p.Phonemize(tb.Context(), voice, text)
	if err != nil {
		tb.Fatal(err)
	}
	return clauses
}

// terminators returns the clauses' punctuation, with "|" after those that end a sentence.
func terminators(clauses []phonemize.Clause) string {
	var b strings.Builder
	for _, c := range clauses {
		b.WriteString("[" + c.Punct + "]")
		if c.SentenceEnd {
			b.WriteString("|")
		}
	}
	return b.String()
}

// TestClauses checks where clauses end and what punctuation they keep, in the cases that
// espeak-ng's reading of punctuation decides: abbreviations, numbers, dots, ellipses, dashes,
// quotes and brackets. espeak-ng must end a clause wherever splitClauses expects one (else
// Phonemize logs a warning, which fails the test).
func TestClauses(t *testing.T) {
	t.Parallel()
	p := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 2, Logger: failLogger(t)}})
	for _, tt := range []struct {
		voice, text string
		want        string   // terminators
		phonemes    []string // if not nil, the clauses' phonemes
	}{
		{"en-us", "Hello, world!", "[,][!]|", []string{"həlˈoʊ", "wˈɜːld"}},
		{"en-us", "Really?! Yes.", "[?]|[.]|", nil},
		{"en-us", "Wait... what?", "[][?]|", nil},
		{"en-us", "Wait… what?", "[][?]|", nil},
		{"en-us", "Hello world..", "[.]|", []string{"həlˈoʊ wˈɜːld"}},
		{"en-us", "Hello.. World", "[.]|[]|", []string{"həlˈoʊ", "wˈɜːld"}},
		{"en-us", "Hello.. world", "[]|", nil},
		{"en-us", "Hi!!! There", "[!]|[]|", nil},
		{"en-us", "e.g. this one", "[]|", nil},
		{"en-us", "Call me at 5 p.m. Bye.", "[.]|[.]|", nil},
		{"en-us", "(Really.) Yes.", "[.]|[.]|", nil},
		{"en-us", "Ends with a comma,", "[,]|", nil},
		{"en-us", "Dr. Smith met Mr. Jones.", "[.]|[.]|[.]|", nil},
		{"en-us", "It costs 1.5 dollars, e.g. today.", "[,][.]|", nil},
		{"en-us", "The U.S. army's plan.", "[.]|", nil},
		{"en-us", "He said \"stop.\" Then he left.", "[.]|[.]|", nil},
		{"en-us", "He said “stop,” and left.", "[,][.]|", nil},
		{"en-us", "A (short) aside; then more: done.", "[;][:][.]|", nil},
		{"en-us", "Well — maybe.", "[;][.]|", nil},
		{"en-us", "No punctuation at the end", "[]|", nil},
		{"en-us", "Mixed: one, two; three. Four!", "[:][,][;][.]|[!]|", nil},
		{"de", "Am 3. Mai kam er.", "[.]|[.]|", nil},
		{"de", "Es war der 3. oder 4. Tag.", "[.]|[.]|", []string{"ɛs vɑːɾ dɛɾ dɾˈɪtə ˌoːdɜ fˈiːɾ", "tˈɑːk"}},
		{"de", "Es sind 3. Dann 4.", "[.]|[.]|", nil},
		{"fr-fr", "Bonjour, le monde !", "[,][!]|", nil},
		{"es", "¿Qué tal? Bien.", "[?]|[.]|", nil},
	} {
		t.Run(tt.voice+"/"+tt.text, func(t *testing.T) {
			t.Parallel()
			clauses := mustPhonemize(t, p, tt.voice, tt.text)
			if got := terminators(clauses); got != tt.want {
				t.Errorf("terminators %s, want %s (%+v)", got, tt.want, clauses)
			}
			if tt.phonemes == nil {
				return
			}
			var got []string
			for _, c := range clauses {
				got = append(got, c.Phonemes)
			}
			if diff := cmp.Diff(tt.phonemes, got); diff != "" {
				t.Errorf("phonemes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOddText checks texts that could break the protocol: none may hang, fail or shift the
// answers of later texts.
func TestOddText(t *testing.T) {
	t.Parallel()
	// One process, so that each text follows the one before on it.
	p := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 1}})
	long := strings.Repeat("The council met on Tuesday, and it approved the budget. ", 400) // 22,400 bytes
	noSpace := strings.Repeat("x", 3000)
	for _, tt := range []struct{ name, text string }{
		{"empty", ""},
		{"spaces", "   "},
		{"only punctuation", ".,;:!? …"},
		{"dots", "Hello world.."},
		{"invalid UTF-8", "caf\xe9 \xff\xfe ok"},
		{"NUL and line breaks", "one\x00two\nthree\r\nfour\u2028five"},
		{"phoneme input", "[[h@'loU]] and [[ unclosed"},
		{"tab", "one\ttwo"},
		{"option-like", "-v xx --stdin -q"},
		{"helper's answers", "D\nC 1 x\nE no"},
		{"long", long},
		{"long without spaces", noSpace},
		{"markup", "<speak>not <b>markup</b></speak> $(rm -rf /) ;|&"},
	} {
		clauses, err := p.Phonemize(t.Context(), "en-us", tt.text)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(clauses) == 0 {
			t.Errorf("%s: no clauses", tt.name)
		}
		// A known text after each: its answer must not be shifted, or start with a
		// stray "dot" (espeak-ng 1.51's library does so after "..").
		after := mustPhonemize(t, p, "en-us", "test")
		if len(after) != 1 || after[0].Phonemes != "tˈɛst" {
			t.Errorf("after %s: %+v, want [tˈɛst]", tt.name, after)
		}
	}
	clauses := mustPhonemize(t, p, "en-us", long)
	if got := terminators(clauses); got != strings.Repeat("[,][.]|", 400) {
		t.Errorf("long text: %d clauses, terminators %.80s…", len(clauses), got)
	}
	if got := mustPhonemize(t, p, "en-us", "[[h@'loU]]"); strings.Contains(got[0].Phonemes, "həlˈoʊ") {
		t.Errorf("[[ ]] was read as phonemes: %+v", got)
	}
}

func TestBadVoices(t *testing.T) {
	t.Parallel()
	p := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 1}})
	for _, voice := range []string{"", "-v", "--stdin", "+f3", "en us", "en;rm", "../en", strings.Repeat("a", 100)} {
		if _, err := p.Phonemize(t.Context(), voice, "test"); err == nil || !strings.Contains(err.Error(), "invalid espeak-ng voice name") {
			t.Errorf("voice %q: error %v, want an invalid voice name", voice, err)
		}
	}
	_, err := p.Phonemize(t.Context(), "xx-nope", "test")
	if err == nil || !strings.Contains(err.Error(), "no such espeak-ng voice") {
		t.Errorf("unknown voice: error %v, want no such voice", err)
	}
	// The process lives on.
	if c := mustPhonemize(t, p, "en-us", "test"); c[0].Phonemes != "tˈɛst" {
		t.Errorf("after an unknown voice: %+v", c)
	}
	// The voices espeak_SetVoiceByName refuses work, as the CLI falls back by language.
	for _, voice := range []string{"en-gb", "fr-fr", "pt-br"} {
		if c := mustPhonemize(t, p, voice, "Hello."); c[0].Phonemes == "" {
			t.Errorf("%s: no phonemes", voice)
		}
	}
}

// TestConcurrent phonemises texts in several voices from many goroutines on a small pool and
// checks each answer against the one given alone.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	p := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 2}})
	type job struct{ voice, text string }
	var jobs []job
	for i := range 12 {
		jobs = append(jobs,
			job{"en-us", fmt.Sprintf("Sentence number %d, read in English. And another one.", i)},
			job{"de", fmt.Sprintf("Satz Nummer %d, auf Deutsch gelesen.", i)},
			job{"fr-fr", fmt.Sprintf("Phrase numéro %d, lue en français.", i)})
	}
	want := make([][]phonemize.Clause, len(jobs))
	for i, j := range jobs {
		want[i] = mustPhonemize(t, p, j.voice, j.text)
	}
	got := make([][]phonemize.Clause, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			c, err := p.Phonemize(t.Context(), j.voice, j.text)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("concurrent answers differ from lone ones (-want +got):\n%s", diff)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                string
		fault               enginetest.Fault
		hang, always        bool
		restarted, timedOut int32
	}{
		{"HungReplaced", enginetest.HangOnce, true, false, 1, 1},
		{"CrashReplaced", enginetest.CrashOnce, false, false, 1, 0},
		{"HungEverywhere", enginetest.Hang, true, true, 2, 2},
		{"CrashEverywhere", enginetest.Crash, false, true, 2, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			counts := &counts{}
			p := mustPhonemizer(t, phonemize.Options{
				Options: proc.Options{Procs: 1, UnitTimeout: 2 * time.Second, Metrics: counts},
				Command: enginetest.FaultyCommand(t, mustHelper(t), enginetest.Options{Fault: tt.fault, PIDFile: pidFile}),
			})
			clauses, err := p.Phonemize(t.Context(), "en-us", "test")
			if tt.always {
				if err == nil {
					t.Fatalf("got %+v, want an error", clauses)
				}
				if !tt.hang && !strings.Contains(err.Error(), "boom") {
					t.Errorf("error %v, want the stderr tail", err)
				}
				if tt.hang && !errors.Is(err, proc.ErrHung) {
					t.Errorf("error %v, want proc.ErrHung", err)
				}
			} else if err != nil || len(clauses) != 1 || clauses[0].Phonemes != "tˈɛst" {
				t.Fatalf("got %+v, %v; want the text read on a fresh process", clauses, err)
			}
			if tt.hang {
				proctest.Exited(t, proctest.PID(t, pidFile), "hung process's child")
			}
			if got := counts.restarted.Load(); got != tt.restarted {
				t.Errorf("%d restarts, want %d", got, tt.restarted)
			}
			if got := counts.timedOut.Load(); got != tt.timedOut {
				t.Errorf("%d timeouts, want %d", got, tt.timedOut)
			}
		})
	}
}

func TestCancelAndClose(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 1}, Command: enginetest.FaultyCommand(t, mustHelper(t), enginetest.Options{Fault: enginetest.Hang, PIDFile: pidFile})})
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if _, err := p.Phonemize(ctx, "en-us", "test"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: error %v, want context.DeadlineExceeded", err)
	}
	proctest.Exited(t, proctest.PID(t, pidFile), "hung process's child")

	q := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 1}})
	mustPhonemize(t, q, "en-us", "test")
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Phonemize(t.Context(), "en-us", "test"); !errors.Is(err, phonemize.ErrClosed) {
		t.Errorf("after Close: error %v, want ErrClosed", err)
	}
	if err := q.Ping(t.Context()); !errors.Is(err, phonemize.ErrClosed) {
		t.Errorf("Ping after Close: %v, want ErrClosed", err)
	}
}

// benchParagraph is a news paragraph of 612 characters (bytes: it is ASCII).
const benchParagraph = "The city council approved the budget for the new central library on Tuesday, " +
	"after a debate that lasted almost four hours. Construction will begin in the spring and is " +
	"expected to take eighteen months; the old building on Market Street will stay open until then. " +
	"\"We have waited a long time for this,\" said the mayor, who voted in favour. Critics argued " +
	"that the cost, estimated at 42 million dollars, was too high for a town of this size. Others " +
	"asked whether the plans leave enough room for children's books, study spaces and the archive " +
	"of local newspapers. The council will publish the final design in March."

// BenchmarkPhonemize is the phonemiser's cost per character of a paragraph, on one warm
// process, unsandboxed and sandboxed (which costs only at start).
func BenchmarkPhonemize(b *testing.B) {
	for _, sandboxed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(b *testing.B) {
			opts := phonemize.Options{Options: proc.Options{Procs: 1}}
			if sandboxed {
				opts.Sandbox = mustSandbox(b)
			}
			p := mustPhonemizer(b, opts)
			mustPhonemize(b, p, "en-us", "warm up")
			for b.Loop() {
				if _, err := p.Phonemize(b.Context(), "en-us", benchParagraph); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(benchParagraph)), "ns/char")
		})
	}
}

// TestDefaultCommand finds the helper in PATH when it is not beside the running executable
// (the test binary).
func TestDefaultCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(mustHelper(t), filepath.Join(dir, phonemize.DefaultCommand)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	p, err := phonemize.New(phonemize.Options{Options: proc.Options{Procs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if c := mustPhonemize(t, p, "en-us", "test"); c[0].Phonemes != "tˈɛst" {
		t.Errorf("got %+v", c)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := phonemize.New(phonemize.Options{}); err == nil || !strings.Contains(err.Error(), phonemize.DefaultCommand) {
		t.Errorf("without the helper: error %v, want one naming it", err)
	}
}

// BenchmarkStart is the cost of a fresh helper process: its start, the library's
// initialisation and a one-word text, unsandboxed and sandboxed.
func BenchmarkStart(b *testing.B) {
	for _, sandboxed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(b *testing.B) {
			opts := phonemize.Options{Options: proc.Options{Procs: 1}, Command: mustHelper(b)}
			if sandboxed {
				opts.Sandbox = mustSandbox(b)
			}
			for b.Loop() {
				p, err := phonemize.New(opts)
				if err != nil {
					b.Fatal(err)
				}
				mustPhonemize(b, p, "en-us", "test")
				p.Close()
			}
		})
	}
}
