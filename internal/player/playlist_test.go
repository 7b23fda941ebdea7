package player_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
)

// itemTitle finds the playlist's items in a page.
var itemTitle = regexp.MustCompile(`class="np-item"[^>]*data-title="([^"]*)"`)

// TestPlaylist checks that a playlist holds the project's latest audios
// that anonymous listeners may hear, newest first, or those of one
// category, and that what may not be listed (drafts, audios scheduled for
// later, audios still being made, deleted ones, a signed project's, a
// foreign origin's) never appears: a playlist with nothing to play
// answers as an audio that does not exist.
func TestPlaylist(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	newAudio := func(ref, category string) *narrator.Audio {
		t.Helper()
		a := &narrator.Audio{ProjectID: b.project.ID, ExternalID: ref, Title: "Title " + ref, Body: "Text.",
			Metadata: map[string]string{narrator.CategoryKey: category}}
		if _, err := b.store.CreateAudio(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, ref := range []string{"old", "sport", "draft", "later", "gone", "new"} {
		category := "News"
		if ref == "sport" {
			category = "sport, local"
		}
		a := newAudio(ref, category)
		b.finish(t, a, "t-"+ref)
		switch ref {
		case "draft", "later":
			p := narrator.Publication{AudioID: a.ID, State: narrator.PublicationDraft}
			if ref == "later" {
				p = narrator.Publication{AudioID: a.ID, State: narrator.PublicationScheduled, PublishAt: b.now.Add(time.Hour)}
			}
			if _, err := b.store.SetPublication(ctx, p); err != nil {
				t.Fatal(err)
			}
		case "gone":
			if _, err := b.store.DeleteAudio(ctx, b.project.ID, ref); err != nil {
				t.Fatal(err)
			}
		}
	}
	newAudio("waiting", "News") // still being made
	titles := func(path string) (int, []string) {
		res := b.visit(t, path, "")
		var got []string
		for _, m := range itemTitle.FindAllStringSubmatch(res.body, -1) {
			got = append(got, m[1])
		}
		return res.StatusCode, got
	}
	list := fmt.Sprintf("/embed/%d/playlist", b.project.ID)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"Title new", "Title sport", "Title old"}},
		{"?category=news", []string{"Title new", "Title old"}},
		{"?category=Local", []string{"Title sport"}},
	} {
		status, got := titles(list + tc.query)
		if status != http.StatusOK {
			t.Errorf("playlist%s: %d", tc.query, status)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("playlist%s (-want +got):\n%s", tc.query, diff)
		}
	}
	missing := b.visit(t, fmt.Sprintf("/embed/%d?external_id=nothing", b.project.ID), "")

	signed, _, secret := b.signedProject(t, "nes_playlist-secret")
	token := narrator.SignEmbed(secret, signed.ID, narrator.EmbedSubject("paid", ""), b.now.Add(time.Hour))
	if err := b.store.SetProjectAccess(ctx, &narrator.ProjectAccess{ProjectID: b.project.ID, Mode: narrator.AccessPublic,
		AllowedOrigins: []string{"https://news.test"}}); err != nil {
		t.Fatal(err)
	}
	if status, got := titles(list + "?origin=https://news.test"); status != http.StatusOK || len(got) != 3 {
		t.Errorf("playlist from an allowed origin: %d %q", status, got)
	}
	for name, path := range map[string]string{
		"no audio of the category": list + "?category=weather&origin=https://news.test",
		"foreign origin":           list + "?origin=https://evil.test",
		"signed project":           fmt.Sprintf("/embed/%d/playlist", signed.ID),
		"signed project, a token":  fmt.Sprintf("/embed/%d/playlist?token=%s", signed.ID, token),
		"no such project":          "/embed/99999/playlist",
	} {
		sameAs(t, name, b.visit(t, path, ""), missing)
	}
}

// TestDownloadButton checks that the player offers the MP3 for download
// only in a project that turned its download button on.
func TestDownloadButton(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.audio(t, "dl", "")
	b.finish(t, a, "t-dl")
	page := fmt.Sprintf("/embed/%d?external_id=dl", b.project.ID)
	const button = `class="np-btn np-download" href="https://media.test/media/`
	if res := b.get(t, page); res.StatusCode != http.StatusOK || strings.Contains(res.body, button) {
		t.Errorf("by default: %d, download button %v; want 200 without", res.StatusCode, strings.Contains(res.body, button))
	}
	if err := b.store.SetProjectAccess(t.Context(), &narrator.ProjectAccess{ProjectID: b.project.ID, Mode: narrator.AccessPublic,
		DownloadButton: true}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{page, fmt.Sprintf("/embed/%d/playlist", b.project.ID)} {
		if res := b.get(t, path); !strings.Contains(res.body, button) {
			t.Errorf("%s with the button on: %d, no download button", path, res.StatusCode)
		}
	}
}
