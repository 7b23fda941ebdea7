package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/web"
)

// loopbackArtwork checks images served on loopback with
// narrator.CheckArtwork, counting the checks.
type loopbackArtwork struct{ checks atomic.Int32 }

func (a *loopbackArtwork) CheckArtwork(ctx context.Context, url string) error {
	a.checks.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return narrator.CheckArtwork(data)
}

// TestFeedArtwork: saving a feed checks its image when it changes, and a
// misfit image is a 400 that says why; the owner is saved with it.
func TestFeedArtwork(t *testing.T) {
	t.Parallel()
	images := map[string][]byte{}
	for name, size := range map[string][2]int{"good.png": {1400, 1400}, "small.png": {600, 600}, "wide.png": {2000, 1400}} {
		var buf bytes.Buffer
		if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, size[0], size[1]))); err != nil {
			t.Fatal(err)
		}
		images["/"+name] = buf.Bytes()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(images[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	art := &loopbackArtwork{}
	b := setup(t, func(d *web.Deps) { d.FeedURL, d.Artwork = feedURLOf, art })
	c, _ := b.signedIn(t)
	page := fmt.Sprintf("/projects/%d/feed", b.project.ID)
	form := mustBrowserForm(t, c.get(page).body, "feed-form")
	for _, tc := range []struct{ image, says string }{{"small.png", "1400 to 3000 pixels"}, {"wide.png", "must be square"}} {
		form.Set("image_url", srv.URL+"/"+tc.image)
		res := c.post(page, form)
		wantStatus(t, res, http.StatusBadRequest)
		if !strings.Contains(res.body, tc.says) {
			t.Errorf("%s: the page does not say %q", tc.image, tc.says)
		}
	}
	form.Set("image_url", srv.URL+"/good.png")
	form.Set("owner_name", "Acme Audio")
	form.Set("owner_email", "podcasts@acme.test")
	wantStatus(t, c.post(page, form), http.StatusSeeOther)
	f := mustFindFeed(t, b)
	if f.ImageURL != srv.URL+"/good.png" || f.OwnerName != "Acme Audio" || f.OwnerEmail != "podcasts@acme.test" {
		t.Errorf("stored feed %+v", f)
	}
	// Saving other settings does not fetch the image again.
	n := art.checks.Load()
	form.Set("title", "Weekly")
	wantStatus(t, c.post(page, form), http.StatusSeeOther)
	if art.checks.Load() != n || mustFindFeed(t, b).Title != "Weekly" {
		t.Errorf("checks %d after %d; title %q", art.checks.Load(), n, mustFindFeed(t, b).Title)
	}
}
