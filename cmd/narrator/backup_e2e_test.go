//go:build e2e

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestBackupWhileServing backs up an install while its server serves and
// takes creates, edits and deletes, restores the backup into a new data
// directory, serves it, and finds through the API every audio acknowledged
// before the backup began, with the same MP3 bytes for those processed
// then; the audios still queued in the snapshot are synthesised by the
// restored server. It also checks the refusals: a non-empty --to, a
// non-empty restore target, a directory that is not a backup, PostgreSQL.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t), "--engine-standin", "20ms")
	audioPath := fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID)
	body := "The council met on Tuesday. It approved a new library. The vote was close."
	create := func(n *node, ref string) {
		t.Helper()
		n.create(t, proj.ID, map[string]any{"api_key": acct.APIKey, "title": "Story " + ref, "body": body, "external_id": ref})
	}
	mp3s := map[string][32]byte{} // processed before the backup: ref → SHA-256 of its MP3
	var lostURL string            // the MP3 of before-0, removed by hand at the end
	for i := range 4 {
		create(s, fmt.Sprintf("before-%d", i))
	}
	for i := range 4 {
		ref := fmt.Sprintf("before-%d", i)
		a := s.waitProcessed(t, proj.ID, ref, acct.APIKey, 60*time.Second)
		res, raw := fetch(t, a.url(t, "mp3"))
		if res.StatusCode != 200 || len(raw) == 0 {
			t.Fatalf("GET %s mp3: %d, %d bytes", ref, res.StatusCode, len(raw))
		}
		mp3s[ref] = sha256.Sum256(raw)
		if i == 0 {
			lostURL = a.url(t, "mp3")
		}
	}
	// Queued, maybe not yet processed when the snapshot is taken.
	create(s, "queued")

	// Creates, edits (each renders again and removes the old rendering's
	// files) and a delete, while the backup runs.
	stop := make(chan struct{})
	going := make(chan struct{}) // closed after the tenth create under load
	var wg sync.WaitGroup
	var busyErr error
	var busyMu sync.Mutex
	wg.Go(func() {
		call := func(method, path string, v any) error {
			raw, _ := json.Marshal(v)
			req, err := http.NewRequest(method, s.base+path, bytes.NewReader(raw))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				return fmt.Errorf("%s %s: %d", method, path, res.StatusCode)
			}
			return nil
		}
		// Paced, so that the audios created fit one page of the list.
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			var err error
			if i < 40 {
				err = call("POST", audioPath, map[string]any{"api_key": acct.APIKey, "title": "During", "body": body, "external_id": fmt.Sprintf("during-%d", i)})
			}
			if i == 10 {
				close(going)
			}
			if err == nil && i%3 == 0 {
				err = call("PUT", audioPath+"/before-3", map[string]any{"api_key": acct.APIKey, "body": fmt.Sprintf("Edition %d. %s", i, body)})
			}
			if err == nil && i == 5 {
				err = call("DELETE", audioPath+"/before-2", map[string]any{"api_key": acct.APIKey})
			}
			if err != nil {
				busyMu.Lock()
				busyErr = err
				busyMu.Unlock()
				return
			}
		}
	})
	select {
	case <-going:
	case <-time.After(30 * time.Second):
		t.Fatal("the load did not get going")
	}
	// Three backups in a row under the load; the last one is restored.
	var backup string
	var m *manifest
	for i := range 3 {
		backup = filepath.Join(t.TempDir(), "backup")
		out, errOut, err := runCLI(t, "backup", "--to", backup, "--data", data)
		if err != nil {
			t.Fatalf("backup %d: %v\n%s", i, err, errOut)
		}
		t.Logf("backup %d: %s%s", i, out, errOut)
		if m, err = readManifest(backup); err != nil {
			t.Fatal(err)
		}
		if m.Accounts != 1 || m.Projects != 1 || m.Audios < 5 || m.MediaFiles == 0 || len(m.Missing) != 0 {
			t.Errorf("backup %d: manifest %+v", i, m)
		}
	}
	close(stop)
	wg.Wait()
	if busyErr != nil {
		t.Fatalf("the load beside the backup: %v", busyErr)
	}
	delete(mp3s, "before-3") // edited: its rendering in the snapshot is whichever was current
	delete(mp3s, "before-2") // deleted, maybe before the snapshot
	s.stop(t, syscall.SIGTERM)

	// Refusals.
	if _, _, err := runCLI(t, "backup", "--to", backup, "--data", data); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("backup into a backup: %v", err)
	}
	if _, _, err := runCLI(t, "restore", "--from", data, "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "manifest.json") {
		t.Errorf("restore of a data directory: %v", err)
	}
	if _, _, err := runCLI(t, "restore", "--from", backup, "--data", data); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("restore over the source: %v", err)
	}
	if _, _, err := runCLI(t, "backup", "--to", t.TempDir(), "--database", "postgres://u@127.0.0.1:1/x"); err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("backup of PostgreSQL: %v", err)
	}

	// A file lost from the media store before the backup: it is missing
	// from two snapshots in a row, so the backup completes, says so, and
	// lists it in the manifest.
	lost := filepath.Join(data, "media", filepath.FromSlash(strings.TrimPrefix(lostURL, s.base+"/media/")))
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged")
	if out, errOut, err := runCLI(t, "backup", "--to", damaged, "--data", data); err != nil || !strings.Contains(out, "warning: 1 audios") {
		t.Errorf("backup of a store without one file: %v, %q\n%s", err, out, errOut)
	}
	if dm, err := readManifest(damaged); err != nil || len(dm.Missing) != 1 || dm.Snapshots != 2 {
		t.Errorf("manifest of the backup without one file: %+v, %v", dm, err)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if out, errOut, err := runCLI(t, "restore", "--from", backup, "--data", restored); err != nil {
		t.Fatalf("restore: %v\n%s", err, errOut)
	} else {
		t.Logf("restore: %s", out)
	}
	if _, _, err := runCLI(t, "restore", "--from", backup, "--data", restored); err == nil {
		t.Error("a second restore into the same directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(restored, "narrator.db")); err != nil {
		t.Fatal(err)
	}

	r := startServer(t, restored, freeAddr(t), "--engine-standin", "20ms")
	for ref, sum := range mp3s {
		a := r.waitProcessed(t, proj.ID, ref, acct.APIKey, 30*time.Second)
		res, raw := fetch(t, a.url(t, "mp3"))
		if res.StatusCode != 200 || sha256.Sum256(raw) != sum {
			t.Errorf("restored %s: GET mp3 %d, %d bytes, same bytes %t", ref, res.StatusCode, len(raw), sha256.Sum256(raw) == sum)
		}
	}
	for _, ref := range []string{"before-3", "queued"} {
		a := r.waitProcessed(t, proj.ID, ref, acct.APIKey, 60*time.Second)
		if res, raw := fetch(t, a.url(t, "mp3")); res.StatusCode != 200 || len(raw) == 0 {
			t.Errorf("restored %s: GET mp3 %d, %d bytes", ref, res.StatusCode, len(raw))
		}
	}
	status, raw := r.call(t, "GET", audioPath+"?api_key="+acct.APIKey, nil)
	if status != 200 {
		t.Fatalf("list: %d %s", status, raw)
	}
	var list []audioOut
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("list %s: %v", raw, err)
	}
	if len(list) != m.Audios {
		t.Errorf("the restored server lists %d audios, the manifest counts %d", len(list), m.Audios)
	}
	for _, a := range list {
		ref := fmt.Sprint(a.ID)
		if a.ExternalID != nil {
			ref = *a.ExternalID
		}
		if a.State != "processed" {
			a = r.waitProcessed(t, proj.ID, ref, acct.APIKey, 60*time.Second)
		}
		if res, _ := fetch(t, a.url(t, "mp3")); res.StatusCode != 200 {
			t.Errorf("restored %s: GET mp3 %d", ref, res.StatusCode)
		}
		res, raw := fetch(t, a.url(t, "m3u8"))
		if res.StatusCode != 200 {
			t.Errorf("restored %s: GET m3u8 %d", ref, res.StatusCode)
			continue
		}
		uris, _, _ := playlist(t, raw)
		base, err := url.Parse(a.url(t, "m3u8"))
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range uris {
			seg, err := base.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			if res, _ := fetch(t, seg.String()); res.StatusCode != 200 {
				t.Errorf("restored %s: GET segment %s %d", ref, u, res.StatusCode)
			}
		}
		if len(uris) == 0 {
			t.Errorf("restored %s: the playlist names no segment", ref)
		}
	}
}
