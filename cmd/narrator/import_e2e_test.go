//go:build e2e

package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/client"
)

// TestImportFromPage imports a news page served on loopback (allowed by
// --webhooks-allow-private) through the Go client: the audio gets the
// page's title, author and canonical URL (on the page's own site: a
// canonical elsewhere is not trusted), and is narrated without the
// page's menus, captions, adverts, related links or comments. A page
// without an article answers 422 and creates nothing.
func TestImportFromPage(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	page, err := os.ReadFile("../../internal/extract/testdata/written/harbour-wall/source.html")
	if err != nil {
		t.Fatal(err)
	}
	// The page names its canonical URL on the site that serves it.
	const canonical = "https://www.coastalcourier.example/news/2024/03/harbour-sea-wall-vote"
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /members/\n"))
		case "/news/sea-wall", "/members/sea-wall":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(bytes.ReplaceAll(page, []byte(canonical), []byte(site.URL+"/news/2024/03/harbour-sea-wall-vote")))
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body><nav><a href=/>Home</a></nav></body></html>"))
		}
	}))
	t.Cleanup(site.Close)
	s := startServer(t, data, freeAddr(t), "--engine-standin", "10ms", "--webhooks-allow-private")
	c := s.client(t, acct.APIKey)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	a, err := c.ImportAudio(ctx, proj.ID, client.PageImport{URL: site.URL + "/news/sea-wall"})
	if err != nil {
		t.Fatal(err)
	}
	if want := site.URL + "/news/2024/03/harbour-sea-wall-vote"; a.ExternalID != want || a.Metadata["language"] != "en-GB" {
		t.Errorf("imported audio: external ID %q, metadata %v; want the canonical URL and en-GB", a.ExternalID, a.Metadata)
	}
	ref := strconv.FormatInt(a.ID, 10)
	if _, err := c.WaitProcessed(ctx, proj.ID, ref, client.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := c.Transcript(ctx, proj.ID, ref)
	if err != nil {
		t.Fatal(err)
	}
	var spoken strings.Builder
	for _, st := range tr.Sentences {
		spoken.WriteString(st.Text + "\n")
	}
	for _, want := range []string{"Harbour town votes to rebuild its storm-battered sea wall", "Residents of Port Ellery voted", "What the money buys", "A decision is expected in the summer."} {
		if !strings.Contains(spoken.String(), want) {
			t.Errorf("the narration lacks %q:\n%s", want, spoken.String())
		}
	}
	for _, unwanted := range []string{"Accept all", "Share on Facebook", "Photograph", "Advertisement", "Related stories", "seadog77", "cellar", "Sign up", "All rights reserved"} {
		if strings.Contains(spoken.String(), unwanted) {
			t.Errorf("the narration reads %q:\n%s", unwanted, spoken.String())
		}
	}

	for path, want := range map[string]string{
		"/home":             "no article was found",
		"/members/sea-wall": "robots.txt asks Narrator not to fetch",
	} {
		var ce *client.Error
		if _, err := c.ImportAudio(ctx, proj.ID, client.PageImport{URL: site.URL + path}); !errors.As(err, &ce) || ce.StatusCode != 422 || !strings.Contains(ce.Message, want) {
			t.Errorf("import %s = %v; want 422 saying %q", path, err, want)
		}
	}
	list, err := c.ListAudios(ctx, proj.ID, client.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Errorf("audios after the imports: %d (%v); want the one imported", len(list), err)
	}
}
