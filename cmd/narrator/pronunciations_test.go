package main

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/jobs"
)

// TestPronunciationsBounded: past narrator.MaxPronunciations rules in a
// project, `narrator pronunciations add` refuses with a clear message.
func TestPronunciationsBounded(t *testing.T) {
	t.Parallel()
	data, _, proj := fixture(t)
	getenv := func(string) string { return "" }
	bk, err := openBackends(t.Context(), config.Backends{DataDir: data, Database: "sqlite:" + data + "/narrator.db", Media: "file:" + data + "/media"},
		jobs.Config{Logger: slog.New(slog.DiscardHandler)}, cliEventBody(getenv), narrator.Limits{}, false, getenv)
	if err != nil {
		t.Fatal(err)
	}
	for i := range narrator.MaxPronunciations {
		if err := bk.store.SetPronunciation(t.Context(), &narrator.Pronunciation{ProjectID: proj.ID, Phrase: fmt.Sprint("word", i), Say: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	bk.store.Close()
	_, _, err = runCLI(t, "pronunciations", "add", "--data", data, "--project", fmt.Sprint(proj.ID), "--phrase", "nginx", "--say", "engine x")
	if err == nil || !strings.Contains(err.Error(), "500 pronunciation rules, the most allowed") || strings.Contains(err.Error(), "code=") {
		t.Errorf("error %v, want a plain message about the limit", err)
	}
	// Replacing a rule still works.
	mustCLI(t, "pronunciations", "add", "--data", data, "--project", fmt.Sprint(proj.ID), "--phrase", "WORD1", "--say", "y")
}
