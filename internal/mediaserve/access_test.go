package mediaserve_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/mediaserve"
)

// accessFunc finds a folder's access with a function, which reports false
// for a folder that no audio owns.
type accessFunc func(folder string) (narrator.ProjectAccess, bool)

func (f accessFunc) MediaAccess(_ context.Context, folder string) (narrator.ProjectAccess, error) {
	a, ok := f(folder)
	if !ok {
		return a, narrator.Errorf(narrator.ENOTFOUND, "no audio owns %s", folder)
	}
	return a, nil
}

// TestSignedProjectMedia checks that the files of a signed project open
// only with a valid token of their folder, and that every refusal is the
// 404 of a missing file.
func TestSignedProjectMedia(t *testing.T) {
	t.Parallel()
	media := mustLocalfs(t, filepath.Join(t.TempDir(), "media"))
	for _, key := range []string{"paid/audio.mp3", "paid/transcript.json", "free/audio.mp3", "other/audio.mp3",
		"orphan/live.m3u8", "orphan/seg00000.ts"} {
		if err := media.Put(t.Context(), key, strings.NewReader("ID3 bytes of "+key)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	signed := narrator.ProjectAccess{ProjectID: 4, Mode: narrator.AccessSigned, SigningSecret: "nes_media-test"}
	h := mediaserve.New(media, mediaserve.Options{Now: func() time.Time { return now }, Access: accessFunc(func(folder string) (narrator.ProjectAccess, bool) {
		switch folder {
		case "paid", "other":
			return signed, true
		case "free":
			return narrator.DefaultAccess(1), true
		}
		return narrator.ProjectAccess{}, false // a crash's leftovers, or nothing
	})})
	srv := httptest.NewServer(http.StripPrefix("/media/", h))
	t.Cleanup(srv.Close)
	get := func(path string) (int, string, http.Header) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, string(body), res.Header
	}
	token := func(folder string, expires time.Time) string {
		return url.QueryEscape(narrator.SignEmbed(signed.SigningSecret, signed.ProjectID, narrator.MediaSubject(folder), expires))
	}
	valid := token("paid", now.Add(time.Hour))

	for _, path := range []string{"/media/paid/audio.mp3?token=" + valid, "/media/paid/transcript.json?token=" + valid} {
		status, _, hdr := get(path)
		if status != http.StatusOK || hdr.Get("Cache-Control") != "private, max-age=3600" {
			t.Errorf("%s: %d, Cache-Control %q; want 200, private", path, status, hdr.Get("Cache-Control"))
		}
	}
	if status, _, hdr := get("/media/free/audio.mp3"); status != http.StatusOK || !strings.HasPrefix(hdr.Get("Cache-Control"), "public") {
		t.Errorf("a public project's file: %d %q", status, hdr.Get("Cache-Control"))
	}

	missingStatus, missingBody, _ := get("/media/nothing/audio.mp3")
	for name, path := range map[string]string{
		"no token":              "/media/paid/audio.mp3",
		"expired":               "/media/paid/audio.mp3?token=" + token("paid", now),
		"another folder's":      "/media/other/audio.mp3?token=" + valid,
		"forged":                "/media/paid/audio.mp3?token=" + strings.Replace(valid, ".", ".A", 1),
		"token for nothing":     "/media/paid/nothing.mp3?token=" + token("nothing", now.Add(time.Hour)),
		"missing, signed":       "/media/paid/nothing.mp3",
		"live stream, no token": "/media/paid/live.mp3",
		// A folder no audio owns may be a signed project's, left behind
		// by a rendering whose process died.
		"orphaned playlist": "/media/orphan/live.m3u8",
		"orphaned segment":  "/media/orphan/seg00000.ts",
		"orphaned live MP3": "/media/orphan/live.mp3",
	} {
		status, body, _ := get(path)
		if status != missingStatus || body != missingBody {
			t.Errorf("%s: %d %q, want the missing file's %d %q", name, status, body, missingStatus, missingBody)
		}
	}
}
