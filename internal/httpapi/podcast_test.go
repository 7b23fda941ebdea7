package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

// testHub is the WebSub hub the tests' server names.
const testHub = "https://hub.test/"

// smallArtwork refuses images whose URL says "small", as the artwork check
// refuses an image under 1400 px, without fetching anything.
type smallArtwork struct{}

func (smallArtwork) CheckArtwork(_ context.Context, u string) error {
	if strings.Contains(u, "small") {
		return narrator.Errorf(narrator.EINVALID, "the image is 300 × 300 px; directories want 1400 to 3000 px")
	}
	return nil
}

func TestPodcastSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path := fmt.Sprintf("/api/v3/projects/%d/podcast", b.project.ID)
	auth := []string{"Authorization", "Bearer " + b.key}
	// settings returns the answer's settings, without its URL and time.
	settings := func(r response) map[string]any {
		t.Helper()
		if r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
		o := r.object(t)
		delete(o, "updated_at")
		delete(o, "feed_url")
		return o
	}
	fresh := map[string]any{"project_id": float64(b.project.ID), "enabled": false, "title": "News", "description": "",
		"author": "", "image_url": "", "language": "en-US", "category": "", "explicit": false, "owner_name": "",
		"owner_email": "", "websub_hub": testHub}
	r := b.do(t, "GET", path, nil, auth...)
	if o := r.object(t); o["feed_url"] != nil || o["updated_at"] != nil {
		t.Errorf("a feed never saved has feed_url %v, updated_at %v; want null", o["feed_url"], o["updated_at"])
	}
	if diff := cmp.Diff(fresh, settings(r)); diff != "" {
		t.Errorf("settings of a project without a feed (-want +got):\n%s", diff)
	}

	// The first save turns the feed on; later saves keep what they leave out.
	r = b.do(t, "PUT", path, map[string]any{"owner_name": "Acme Audio", "owner_email": "podcasts@acme.test",
		"image_url": "https://acme.test/cover.png", "category": "News > Tech News"}, auth...)
	want := maps(fresh, map[string]any{"enabled": true, "owner_name": "Acme Audio", "owner_email": "podcasts@acme.test",
		"image_url": "https://acme.test/cover.png", "category": "News > Tech News"})
	if diff := cmp.Diff(want, settings(r)); diff != "" {
		t.Errorf("after the first save (-want +got):\n%s", diff)
	}
	f, err := b.store.FindFeed(t.Context(), b.project.ID)
	if err != nil || !f.Enabled || f.OwnerEmail != "podcasts@acme.test" {
		t.Fatalf("stored feed %+v, %v", f, err)
	}
	if got := r.object(t)["feed_url"]; got != "https://audio.test"+narrator.FeedPath(f.Token) {
		t.Errorf("feed_url %v", got)
	}
	r = b.do(t, "PUT", path, url.Values{"title": {"Acme, read aloud"}, "explicit": {"true"}}, auth...)
	want = maps(want, map[string]any{"title": "Acme, read aloud", "explicit": true})
	if diff := cmp.Diff(want, settings(r)); diff != "" {
		t.Errorf("after a form save (-want +got):\n%s", diff)
	}

	// A new token: the old URL is gone.
	r = b.do(t, "POST", path+"/rotate-token", nil, auth...)
	if got := r.object(t)["feed_url"]; r.status != http.StatusOK || got == nil || got == "https://audio.test"+narrator.FeedPath(f.Token) {
		t.Errorf("rotate-token: %d, feed_url %v", r.status, got)
	}
	r = b.do(t, "PUT", path, map[string]any{"enabled": false}, auth...)
	if o := r.object(t); o["enabled"] != false || o["feed_url"] != nil {
		t.Errorf("turned off: %v", o)
	}

	for _, tc := range []struct {
		body any
		msg  string
	}{
		{map[string]any{"title": " "}, "title is required"},
		{map[string]any{"owner_name": "", "owner_email": "podcasts@acme.test"}, "owner name is required"},
		{map[string]any{"owner_email": "nobody"}, "owner email must be an email address"},
		{map[string]any{"image_url": "ftp://acme.test/c.png"}, "image URL"},
		{map[string]any{"image_url": "https://acme.test/small.png"}, "1400 to 3000 px"},
		{map[string]any{"category": "Cooking"}, "not an Apple Podcasts category"},
		{map[string]any{"language": "English!"}, "language must be a language tag"},
		{map[string]any{"explicit": "yes"}, "explicit must be true or false"},
		{map[string]any{"title": 7}, "title must be a string"},
	} {
		wantError(t, b.do(t, "PUT", path, tc.body, auth...), http.StatusBadRequest, 10, tc.msg)
	}
	if diff := cmp.Diff(maps(want, map[string]any{"enabled": false}), settings(b.do(t, "GET", path, nil, auth...))); diff != "" {
		t.Errorf("settings after refused changes (-want +got):\n%s", diff)
	}
	wantError(t, b.do(t, "GET", path, nil), http.StatusUnauthorized, 20, "")
	_, otherKey := b.newAccount(t, "Other")
	wantError(t, b.do(t, "PUT", path, map[string]any{"title": "Mine"}, "Authorization", "Bearer "+otherKey), http.StatusNotFound, 30, "")
	other := b.newProject(t, b.account)
	wantError(t, b.do(t, "POST", fmt.Sprintf("/api/v3/projects/%d/podcast/rotate-token", other.ID), nil, auth...), http.StatusNotFound, 30, "")
}

// maps returns a copy of a with b's entries set.
func maps(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
