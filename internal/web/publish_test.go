package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

func TestPublicationForm(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	a := &narrator.Audio{ProjectID: b.project.ID, Title: "Budget", Body: "The council voted."}
	b.mustAudios(t, a)
	c, _ := b.signedIn(t)
	page := fmt.Sprintf("/projects/%d/audios/%d", b.project.ID, a.ID)
	pub := func() narrator.Publication {
		t.Helper()
		p, err := b.store.AudioPublication(t.Context(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	res := c.get(page)
	if !strings.Contains(res.body, `id="publication-state"`) || !strings.Contains(res.body, "Published") {
		t.Fatal("the audio page does not show its publication")
	}
	wantStatus(t, c.post(page+"/publication", mustBrowserForm(t, res.body, "unpublish-form")), http.StatusSeeOther)
	if got := pub().State; got != narrator.PublicationDraft {
		t.Errorf("after Unpublish: %q, want draft", got)
	}
	res = c.get(page)
	if !strings.Contains(res.body, "Draft") {
		t.Error("the page does not say the audio is a draft")
	}
	form := mustBrowserForm(t, res.body, "schedule-form")
	form.Set("publish_at", "2999-12-01T08:30")
	wantStatus(t, c.post(page+"/publication", form), http.StatusSeeOther)
	if got, want := pub(), time.Date(2999, 12, 1, 8, 30, 0, 0, time.UTC); got.State != narrator.PublicationScheduled || !got.PublishAt.Equal(want) {
		t.Errorf("after Schedule: %+v, want scheduled at %v", got, want)
	}
	form.Set("publish_at", "soon")
	wantStatus(t, c.post(page+"/publication", form), http.StatusBadRequest)
	res = c.get(page)
	wantStatus(t, c.post(page+"/publication", mustBrowserForm(t, res.body, "publish-form")), http.StatusSeeOther)
	if got := pub().State; got != narrator.PublicationPublished {
		t.Errorf("after Publish: %q, want published", got)
	}
	// Without the CSRF token, nothing changes.
	wantStatus(t, c.post(page+"/publication", url.Values{"state": {"draft"}}), http.StatusForbidden)
	if got := pub().State; got != narrator.PublicationPublished {
		t.Errorf("a post without CSRF token changed the publication to %q", got)
	}
}

func TestAccessPage(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, _ := b.signedIn(t)
	page := c.projectPage(b.project.ID, "access")
	res := c.get(page)
	wantStatus(t, res, http.StatusOK)
	if !strings.Contains(res.body, `id="mode-signed" type="radio" name="mode" value="signed" disabled`) {
		t.Error("signed can be chosen before a secret exists")
	}

	// A secret is shown once, in the answer that makes it.
	res = c.post(page+"/rotate", mustBrowserForm(t, res.body, "rotate-secret-form"))
	wantStatus(t, res, http.StatusOK)
	access, err := b.store.ProjectAccess(t.Context(), b.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if access.SigningSecret == "" || !strings.Contains(res.body, access.SigningSecret) {
		t.Fatal("the new secret is not shown")
	}
	if strings.Contains(c.get(page).body, access.SigningSecret) {
		t.Error("the secret is shown again")
	}

	form := mustBrowserForm(t, c.get(page).body, "access-form")
	form.Set("mode", "signed")
	form.Set("allowed_origins", "https://News.Example\r\nhttp://localhost:8080")
	form.Set("draft_new_audios", "1")
	wantStatus(t, c.post(page, form), http.StatusSeeOther)
	got, err := b.store.ProjectAccess(t.Context(), b.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != narrator.AccessSigned || !got.DraftNewAudios || strings.Join(got.AllowedOrigins, " ") != "https://news.example http://localhost:8080" ||
		got.SigningSecret != access.SigningSecret {
		t.Errorf("stored access = %+v", got)
	}
	form.Set("allowed_origins", "news.example/path")
	res = c.post(page, form)
	wantStatus(t, res, http.StatusBadRequest)
	if !strings.Contains(res.body, "is not an origin") {
		t.Error("a bad origin is not explained")
	}
}
