package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCopyDataUsage(t *testing.T) {
	t.Parallel()
	data, _, _ := fixture(t)
	media := "file:" + filepath.Join(data, "media")
	from := []string{"--from-database", "sqlite:" + filepath.Join(data, "narrator.db"), "--from-media", media}
	to := []string{"--to-database", "sqlite:" + filepath.Join(t.TempDir(), "narrator.db"), "--to-media", "file:" + t.TempDir()}
	cases := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no flags", nil, "--from-database is required"},
		{"no target", from, "--to-database is required"},
		{"no such source", slices.Concat([]string{"--from-database", "sqlite:" + filepath.Join(data, "nope.db"), "--from-media", media}, to), "--from-database"},
		{"bad target", slices.Concat(from, []string{"--to-database", "mysql://db", "--to-media", "file:" + t.TempDir()}), "--to-database"},
		{"stray argument", slices.Concat(from, to, []string{"now"}), "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, err := runCLI(t, append([]string{"copy-data"}, c.args...)...)
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("copy-data %v: %v (exit %d), want a usage error naming %s", c.args, err, exitCode(err), c.want)
			}
			if !strings.Contains(errOut, "Usage: narrator copy-data") {
				t.Errorf("no usage printed:\n%s", errOut)
			}
		})
	}
}

// TestCopyDataSQLite copies an install without audios into another SQLite
// database, twice, and refuses a third one that has an account of its own.
// The end-to-end test, with audios, media and PostgreSQL, is
// TestCopyDataToPostgres.
func TestCopyDataSQLite(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	target := t.TempDir()
	copyArgs := func(to string) []string {
		return []string{"copy-data", "--from-database", "sqlite:" + filepath.Join(data, "narrator.db"), "--from-media", "file:" + filepath.Join(data, "media"),
			"--to-database", "sqlite:" + filepath.Join(to, "narrator.db"), "--to-media", "file:" + filepath.Join(to, "media")}
	}
	out := mustCLI(t, copyArgs(target)...)
	for _, want := range []string{"accounts: 1 copied, 0 already on the target", "api_keys: 1 copied", "projects: 1 copied",
		"audios: 0 copied (0 queued for synthesis), 0 already on the target", "media files: 0 copied, 0 skipped", "sessions: not copied"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	got := mustJSON[[]projectOut](t, mustCLI(t, "projects", "list", "--data", target, "--account", fmt.Sprint(acct.ID)))
	if len(got) != 1 || got[0].ID != proj.ID || got[0].Title != proj.Title {
		t.Errorf("target projects %+v, want %+v", got, proj)
	}
	if out := mustCLI(t, copyArgs(target)...); !strings.Contains(out, "accounts: 0 copied, 1 already on the target") {
		t.Errorf("second copy:\n%s", out)
	}

	other := t.TempDir()
	mustCLI(t, "accounts", "create", "--data", other, "--name", "Other")
	_, _, err := runCLI(t, copyArgs(other)...)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "already holds other data") {
		t.Fatalf("copy into a database with another account: %v", err)
	}
	if got := mustJSON[[]projectOut](t, mustCLI(t, "projects", "list", "--data", other)); len(got) != 0 {
		t.Errorf("the refused copy wrote projects: %+v", got)
	}
}
