//go:build e2e

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mmcdole/gofeed"
	"golang.org/x/crypto/bcrypt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/sqlite"
)

// TestCopyDataToPostgres moves an embedded install, with a processed, an
// unprocessed and a deleted audio, into PostgreSQL and another media
// directory, serves the copy, copies again, and refuses a database that
// holds other data.
func TestCopyDataToPostgres(t *testing.T) {
	t.Parallel()
	adminURL := pgtest.URL(t)
	data, acct, proj := fixture(t)
	account, project := fmt.Sprint(acct.ID), fmt.Sprint(proj.ID)
	if _, err := runCLIStdin(t, "a long enough password\n", "users", "create", "--data", data, "--account", account, "--email", "ed@acme.test"); err != nil {
		t.Fatal(err)
	}
	mustCLI(t, "pronunciations", "add", "--data", data, "--project", project, "--phrase", "nginx", "--say", "engine x")
	revoked := mustJSON[keyJSON](t, mustCLI(t, "accounts", "keys", "create", "--data", data, "--account", account))
	mustCLI(t, "accounts", "keys", "revoke", "--data", data, "--account", account, "--key", fmt.Sprint(revoked.ID))

	// A processed audio; then, with a node that works no jobs, one that
	// stays unprocessed and one deleted, which has the highest ID.
	s := startServer(t, data, freeAddr(t), "--engine-standin", "50ms")
	audioPath := fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID)
	create := func(n *node, ref string) audioOut {
		t.Helper()
		return n.create(t, proj.ID, map[string]any{"api_key": acct.APIKey, "title": "Story " + ref,
			"body": "The council met on Tuesday. It approved a new library.", "external_id": ref, "metadata": map[string]string{"ref": ref}})
	}
	create(s, "done")
	done := s.waitProcessed(t, proj.ID, "done", acct.APIKey, 60*time.Second)
	s.stop(t, syscall.SIGTERM)
	api := startServer(t, data, freeAddr(t), "--role", "api")
	pending := create(api, "pending")
	gone := create(api, "gone")
	if status, raw := api.call(t, "DELETE", audioPath+"/gone", map[string]any{"api_key": acct.APIKey}); status != 200 {
		t.Fatalf("delete: %d %s", status, raw)
	}
	api.stop(t, syscall.SIGTERM)
	feedToken := mustSaveFeed(t, data, acct.ID, proj.ID)

	target := newDatabase(t, adminURL)
	targetMedia := filepath.Join(t.TempDir(), "media")
	copyArgs := func(database string) []string {
		return []string{"copy-data", "--from-database", "sqlite:" + filepath.Join(data, "narrator.db"), "--from-media", "file:" + filepath.Join(data, "media"),
			"--to-database", database, "--to-media", "file:" + targetMedia}
	}
	files := countFiles(t, filepath.Join(data, "media"))
	out := mustCLI(t, copyArgs(target)...)
	for _, want := range []string{"accounts: 1 copied, 0 already on the target", "api_keys: 2 copied", "projects: 1 copied", "users: 1 copied",
		"pronunciations: 1 copied", "feeds: 1 copied", "audios: 2 copied (1 queued for synthesis), 0 already on the target",
		fmt.Sprintf("media files: %d copied, 0 skipped", files), "sessions: not copied"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}

	// The rows arrive with their IDs and every field; the files with their
	// bytes.
	src, err := sqlite.Open(t.Context(), filepath.Join(data, "narrator.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(t.Context(), target, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	for name, export := range map[string]func(s copyStore) (any, error){
		"meta":   func(s copyStore) (any, error) { return s.ExportMeta(t.Context()) },
		"audios": func(s copyStore) (any, error) { return s.ExportAudios(t.Context(), 0, 100) },
	} {
		want, err := export(src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := export(dst)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("target %s differ from the source's (-want +got):\n%s", name, diff)
		}
	}
	u, err := dst.FindUserByEmail(t.Context(), "ed@acme.test")
	if err != nil || bcrypt.CompareHashAndPassword(u.PasswordHash, []byte("a long enough password")) != nil {
		t.Errorf("target user %+v, %v: the password does not sign in", u, err)
	}
	sameFiles(t, filepath.Join(data, "media"), targetMedia)

	// The target serves the copy to the same key, and works the queued
	// audio.
	ts := startServer(t, t.TempDir(), freeAddr(t), "--database", target, "--media", "file:"+targetMedia, "--engine-standin", "50ms")
	got := ts.waitProcessed(t, proj.ID, "done", acct.APIKey, 10*time.Second)
	if got.ID != done.ID || got.Metadata["ref"] != "done" {
		t.Errorf("target audio %+v, want %+v", got, done)
	}
	for _, ct := range []string{"mp3", "m3u8"} {
		url := got.url(t, ct)
		want, err := os.ReadFile(filepath.Join(data, "media", filepath.FromSlash(strings.TrimPrefix(url, ts.base+"/media/"))))
		if err != nil {
			t.Fatal(err)
		}
		if res, body := fetch(t, url); res.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Errorf("target %s: %d, %d bytes; want the source's %d", ct, res.StatusCode, len(body), len(want))
		}
	}
	// The feed answers at the same URL, with the sizes recorded at the
	// source.
	res, raw := fetch(t, ts.base+narrator.FeedPath(feedToken))
	if res.StatusCode != 200 {
		t.Fatalf("feed on the target: %d", res.StatusCode)
	}
	f, err := gofeed.NewParser().ParseString(string(raw))
	if err != nil || len(f.Items) != 1 || len(f.Items[0].Enclosures) != 1 {
		t.Fatalf("feed on the target: %v\n%s", err, raw)
	}
	if enc := f.Items[0].Enclosures[0]; enc.URL != got.url(t, "mp3") {
		t.Errorf("enclosure %s, want %s", enc.URL, got.url(t, "mp3"))
	} else if _, mp3 := fetch(t, enc.URL); enc.Length != fmt.Sprint(len(mp3)) {
		t.Errorf("enclosure length %s, the MP3 has %d bytes", enc.Length, len(mp3))
	}
	if status, _ := ts.call(t, "GET", audioPath+"/done?api_key="+revoked.APIKey, nil); status != 401 {
		t.Errorf("revoked key on the target: %d, want 401", status)
	}
	if status, _ := ts.call(t, "GET", audioPath+fmt.Sprintf("/%d?api_key=%s", gone.ID, acct.APIKey), nil); status != 404 {
		t.Errorf("deleted audio on the target: %d, want 404", status)
	}
	if got := ts.waitProcessed(t, proj.ID, "pending", acct.APIKey, 60*time.Second); got.ID != pending.ID {
		t.Errorf("pending audio has ID %d on the target, want %d", got.ID, pending.ID)
	}
	if fresh := create(ts, "fresh"); fresh.ID <= gone.ID {
		t.Errorf("new audio on the target has ID %d; want above the deleted audio's %d", fresh.ID, gone.ID)
	}

	// Again: nothing new; the target keeps what it did meanwhile.
	out = mustCLI(t, copyArgs(target)...)
	for _, want := range []string{"accounts: 0 copied, 1 already on the target", "audios: 0 copied (0 queued for synthesis), 2 already on the target",
		fmt.Sprintf("media files: 0 copied, %d skipped", files)} {
		if !strings.Contains(out, want) {
			t.Errorf("second summary lacks %q:\n%s", want, out)
		}
	}
	if got := ts.waitProcessed(t, proj.ID, "pending", acct.APIKey, time.Second); got.State != narrator.StateProcessed {
		t.Errorf("second copy reset the pending audio: %+v", got)
	}

	// A database with an account of its own is refused, and left alone.
	other := newDatabase(t, adminURL)
	mustCLI(t, "accounts", "create", "--data", t.TempDir(), "--database", other, "--name", "Stranger")
	_, _, err = runCLI(t, copyArgs(other)...)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "already holds other data") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("copy into a database with other data: %v", err)
	}
	if got := mustJSON[[]projectOut](t, mustCLI(t, "projects", "list", "--data", t.TempDir(), "--database", other)); len(got) != 0 {
		t.Errorf("the refused copy wrote projects: %+v", got)
	}
}

// countFiles counts the regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sameFiles fails unless every file under want is under got with the same
// bytes.
func sameFiles(t *testing.T, want, got string) {
	t.Helper()
	err := filepath.WalkDir(want, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(want, path)
		if err != nil {
			return err
		}
		a, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("media file %s: %d bytes on the target (%v), want %d", rel, len(b), err, len(a))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mustSaveFeed turns on the feed of a project in the SQLite database of a
// data directory, while no server runs, and returns its token.
func mustSaveFeed(t *testing.T, data string, accountID, projectID int64) string {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(data, "narrator.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.FindProject(t.Context(), accountID, projectID)
	if err != nil {
		t.Fatal(err)
	}
	f := narrator.NewFeedSettings(p)
	if f.Token, err = narrator.NewFeedToken(); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveFeed(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	return f.Token
}
