package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupRestoreCLI backs up an install that has no server running and
// no media, restores it and reads it back through the CLI, and checks the
// usage errors. TestBackupWhileServing (e2e) does it under load.
func TestBackupRestoreCLI(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	backup := filepath.Join(t.TempDir(), "b")
	if out := mustCLI(t, "backup", "--to", backup, "--data", data); !strings.Contains(out, "1 accounts, 1 projects, 0 users, 0 audios, 0 media files") {
		t.Errorf("backup printed %q", out)
	}
	// The database holds webhook secrets and feed tokens: no one else may
	// read it.
	if fi, err := os.Stat(filepath.Join(backup, backupDatabase)); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup database mode %v, want 0600", fi.Mode().Perm())
	}
	restored := filepath.Join(t.TempDir(), "r")
	mustCLI(t, "restore", "--from", backup, "--data", restored)
	got := mustJSON[[]projectOut](t, mustCLI(t, "projects", "list", "--data", restored, "--account", fmt.Sprint(acct.ID)))
	if len(got) != 1 || got[0].ID != proj.ID || got[0].Title != proj.Title {
		t.Errorf("restored projects %+v, want %+v", got, proj)
	}

	cases := []struct {
		name    string
		args    []string
		wantErr string
		usage   bool
	}{
		{"backup without --to", []string{"backup", "--data", data}, "--to is required", true},
		{"backup of no database", []string{"backup", "--to", t.TempDir(), "--data", t.TempDir()}, "no such file", true},
		{"backup of PostgreSQL", []string{"backup", "--to", t.TempDir(), "--database", "postgres://u@127.0.0.1:1/n"}, "pg_dump", false},
		{"backup of S3 media", []string{"backup", "--to", t.TempDir(), "--data", data, "--media", "s3://b/p?endpoint=http://127.0.0.1:1"}, "versioning", false},
		{"restore without --from", []string{"restore", "--data", t.TempDir()}, "--from is required", true},
		{"restore of no backup", []string{"restore", "--from", data, "--data", t.TempDir()}, "manifest.json", true},
		{"restore over data", []string{"restore", "--from", backup, "--data", restored}, "exists", true},
		{"restore into PostgreSQL", []string{"restore", "--from", backup, "--database", "postgres://u@127.0.0.1:1/n"}, "copy-data", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runCLI(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("narrator %s: %v, want an error containing %q", strings.Join(c.args, " "), err, c.wantErr)
			}
			var u *usageError
			if errors.As(err, &u) != c.usage {
				t.Errorf("narrator %s: usage error %t, want %t (exit status 2 for usage)", strings.Join(c.args, " "), !c.usage, c.usage)
			}
		})
	}
}
