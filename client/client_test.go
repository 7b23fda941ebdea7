package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator/client"
)

func mustClient(t *testing.T, key string) *client.Client {
	t.Helper()
	c, err := client.New(serverURL, key, client.WithHTTPClient(checkedHTTPClient(t)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEveryMethod calls every method on the real server, through an HTTP
// client that checks each exchange against the OpenAPI document.
func TestEveryMethod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := mustClient(t, apiKey)

	projects, err := c.ListProjects(ctx)
	if err != nil || len(projects) != 1 || projects[0].ID != projectID || projects[0].Language != "en_US" {
		t.Fatalf("ListProjects = %+v, %v", projects, err)
	}
	a, err := c.CreateAudio(ctx, projectID, client.NewAudio{Title: "Methods", Body: "Every method is called.", Author: "Ann",
		ArticleURL: "https://news.test/methods", ExternalID: "methods", Metadata: map[string]string{"k": "v"}})
	if err != nil || a.State != client.StateUnprocessed || a.ExternalID != "methods" || len(a.Media) != 2 {
		t.Fatalf("CreateAudio = %+v, %v", a, err)
	}
	if p, err := c.Progress(ctx, projectID, "methods"); err != nil || p.AudioID != a.ID {
		t.Errorf("Progress = %+v, %v", p, err)
	}
	if a, err = c.WaitProcessed(ctx, projectID, "methods", client.WaitOptions{}); err != nil || a.MediaURL(client.ContentTypeM3U8) == "" {
		t.Fatalf("WaitProcessed = %+v, %v", a, err)
	}
	if p, err := c.Progress(ctx, projectID, "methods"); err != nil || p.State != client.StateProcessed || p.Share != 1 {
		t.Errorf("Progress when processed = %+v, %v", p, err)
	}
	if tr, err := c.Transcript(ctx, projectID, "methods"); err != nil || tr.AudioID != a.ID || len(tr.Sentences) == 0 {
		t.Errorf("Transcript = %+v, %v", tr, err)
	}
	u, err := c.UpdateAudio(ctx, projectID, "methods", client.AudioUpdate{Metadata: map[string]string{}, ArticleURL: client.String("https://news.test/m")})
	if err != nil || u.State != client.StateProcessed || len(u.Metadata) != 0 {
		t.Errorf("UpdateAudio = %+v, %v", u, err)
	}
	// The server does not allow private addresses: an import from a
	// loopback page is refused, and says so.
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><article><p>An article on loopback, which the server must not fetch.</p></article></body></html>")
	}))
	defer page.Close()
	var ie *client.Error
	if _, err := c.ImportAudio(ctx, projectID, client.PageImport{URL: page.URL + "/story"}); !errors.As(err, &ie) || ie.StatusCode != 422 || !strings.Contains(ie.Message, "loopback") {
		t.Errorf("ImportAudio from loopback = %v; want a 422 naming loopback", err)
	}
	list, err := c.ListAudios(ctx, projectID, client.ListOptions{Period: "daily", Page: 1})
	if err != nil || len(list) == 0 {
		t.Errorf("ListAudios = %+v, %v", list, err)
	}
	if page, err := c.ListAudios(ctx, projectID, client.ListOptions{Page: 1000}); err != nil || len(page) != 0 {
		t.Errorf("ListAudios past the end = %+v, %v", page, err)
	}
	if v, err := c.ListVoices(ctx, ""); err != nil || len(v) == 0 {
		t.Errorf("ListVoices = %+v, %v", v, err)
	}

	rule, err := c.SetPronunciation(ctx, projectID, "methods", "meth odds", true)
	if err != nil || rule.Say != "meth odds" || rule.Resynthesis != "queued" {
		t.Errorf("SetPronunciation = %+v, %v", rule, err)
	}
	if rules, err := c.ListPronunciations(ctx, projectID); err != nil || len(rules) != 1 {
		t.Errorf("ListPronunciations = %+v, %v", rules, err)
	}
	if _, err := c.RemovePronunciation(ctx, projectID, rule.ID, false); err != nil {
		t.Errorf("RemovePronunciation: %v", err)
	}

	h, err := c.CreateWebhook(ctx, projectID, "https://hooks.example.com/narrator", []string{client.EventAudioProcessed})
	if err != nil || !strings.HasPrefix(h.Secret, "whsec_") || !h.Enabled {
		t.Fatalf("CreateWebhook = %+v, %v", h, err)
	}
	if hs, err := c.ListWebhooks(ctx, projectID); err != nil || len(hs) != 1 || hs[0].Secret != "" {
		t.Errorf("ListWebhooks = %+v, %v", hs, err)
	}
	if g, err := c.GetWebhook(ctx, projectID, h.ID); err != nil || g.URL != h.URL {
		t.Errorf("GetWebhook = %+v, %v", g, err)
	}
	if r, err := c.RotateWebhookSecret(ctx, projectID, h.ID); err != nil || r.Secret == h.Secret || r.Secret == "" {
		t.Errorf("RotateWebhookSecret = %+v, %v", r, err)
	}
	if e, err := c.EnableWebhook(ctx, projectID, h.ID); err != nil || !e.Enabled {
		t.Errorf("EnableWebhook = %+v, %v", e, err)
	}
	d, err := c.TestWebhook(ctx, projectID, h.ID)
	if err != nil || d.Event != "webhook.test" || d.AudioID != 0 {
		t.Fatalf("TestWebhook = %+v, %v", d, err)
	}
	if ds, err := c.ListDeliveries(ctx, projectID, h.ID, 10); err != nil || len(ds) == 0 {
		t.Errorf("ListDeliveries = %+v, %v", ds, err)
	}
	if r, err := c.ResendDelivery(ctx, projectID, h.ID, d.ID); err != nil || r.MessageID != d.MessageID {
		t.Errorf("ResendDelivery = %+v, %v", r, err)
	}
	if _, err := c.DeleteWebhook(ctx, projectID, h.ID); err != nil {
		t.Errorf("DeleteWebhook: %v", err)
	}

	if gone, err := c.DeleteAudio(ctx, projectID, "methods"); err != nil || !gone.Deleted {
		t.Errorf("DeleteAudio = %+v, %v", gone, err)
	}
	if _, err := c.GetAudio(ctx, projectID, "methods"); !client.IsNotFound(err) {
		t.Errorf("GetAudio after delete: %v", err)
	}
}

// TestReservedCharactersInReferences finds audios by external IDs that
// hold characters with a meaning in URLs.
func TestReservedCharactersInReferences(t *testing.T) {
	t.Parallel()
	c := mustClient(t, apiKey)
	for _, ref := range []string{"a b", "news/2026/11/lib", "q?x=1#frag", "100%", "ünïcødé"} {
		a, err := c.CreateAudio(t.Context(), projectID, client.NewAudio{Body: "Reserved characters.", ExternalID: ref})
		if err != nil {
			t.Fatalf("create %q: %v", ref, err)
		}
		got, err := c.GetAudio(t.Context(), projectID, ref)
		if err != nil || got.ID != a.ID || got.ExternalID != ref {
			t.Errorf("get %q = %+v, %v; want audio %d", ref, got, err, a.ID)
		}
		if _, err := c.DeleteAudio(t.Context(), projectID, ref); err != nil {
			t.Errorf("delete %q: %v", ref, err)
		}
	}
}

// TestErrors checks that error answers become *Error with their status and
// v3 code.
func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, err := mustClient(t, "nk_wrong").ListProjects(ctx)
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != 401 || e.Code != client.CodeUnauthorized || !client.IsUnauthorized(err) {
		t.Errorf("wrong key: %v", err)
	}
	c := mustClient(t, apiKey)
	_, err = c.CreateAudio(ctx, projectID, client.NewAudio{Body: " "})
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != client.CodeInvalid || !strings.Contains(e.Message, "body") {
		t.Errorf("blank body: %v", err)
	}
	if _, err := c.ListAudios(ctx, 999999, client.ListOptions{}); !client.IsNotFound(err) {
		t.Errorf("unknown project: %v", err)
	}
	for _, base := range []string{"", "ftp://x", "http://", "::"} {
		if _, err := client.New(base, apiKey); err == nil {
			t.Errorf("New(%q) accepted", base)
		}
	}
	if _, err := client.New(serverURL, ""); err == nil {
		t.Error("New accepted an empty key")
	}
}

// fakeAudio serves one audio whose state is given by state(n) on the n-th
// poll, to test WaitProcessed's loop without waiting for an engine.
func fakeAudio(t *testing.T, state func(n int32) string) (*client.Client, *atomic.Int32) {
	t.Helper()
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := polls.Add(1)
		s := state(n)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": 7, "external_id": nil, "state": s, "media": []any{},
			"deleted": false, "metadata": map[string]string{}, "error": map[bool]string{true: "no speech"}[s == client.StateFailed]})
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "nk_test")
	if err != nil {
		t.Fatal(err)
	}
	return c, &polls
}

func TestWaitProcessed(t *testing.T) {
	t.Parallel()
	fast := client.WaitOptions{Initial: 1, Max: 4}
	t.Run("polls until processed", func(t *testing.T) {
		t.Parallel()
		c, polls := fakeAudio(t, func(n int32) string {
			if n < 5 {
				return client.StateUnprocessed
			}
			return client.StateProcessed
		})
		a, err := c.WaitProcessed(t.Context(), 1, "7", fast)
		if err != nil || a.State != client.StateProcessed || polls.Load() != 5 {
			t.Errorf("WaitProcessed = %+v, %v after %d polls", a, err, polls.Load())
		}
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		c, _ := fakeAudio(t, func(int32) string { return client.StateFailed })
		a, err := c.WaitProcessed(t.Context(), 1, "7", fast)
		if !errors.Is(err, client.ErrAudioFailed) || !strings.Contains(err.Error(), "no speech") || a == nil || a.State != client.StateFailed {
			t.Errorf("WaitProcessed = %+v, %v", a, err)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		c, _ := fakeAudio(t, func(n int32) string {
			if n == 3 {
				cancel()
			}
			return client.StateUnprocessed
		})
		a, err := c.WaitProcessed(ctx, 1, "7", fast)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("WaitProcessed = %+v, %v", a, err)
		}
	})
}

// TestResynthesizeProject queues the resynthesis of every audio of a
// project of its own: no other test's resynthesis holds it off.
func TestResynthesizeProject(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := mustClient(t, resynthKey)
	if _, err := c.CreateAudio(ctx, resynthProject, client.NewAudio{Body: "Said again.", ExternalID: "again"}); err != nil {
		t.Fatal(err)
	}
	r, err := c.ResynthesizeProject(ctx, resynthProject)
	if err != nil || r.ProjectID != resynthProject || r.Resynthesis != "queued" || r.AudioCount != 1 {
		t.Errorf("ResynthesizeProject = %+v, %v; want queued, of 1 audio", r, err)
	}
	if _, err := c.ResynthesizeProject(ctx, projectID); !client.IsNotFound(err) {
		t.Errorf("ResynthesizeProject of another account's project: %v, want a 404", err)
	}
}
