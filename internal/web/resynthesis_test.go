package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
	"github.com/narrator/narrator/internal/web"
)

// TestSpeechResynthesize: the Speech page's button queues the
// resynthesis of every audio of the project and says so; while it is
// under way, another press shows the refusal, 409; another account's
// project is a 404.
func TestSpeechResynthesize(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, body := range []string{"One.", "Two."} {
		if _, err := b.store.CreateAudio(t.Context(), &narrator.Audio{ProjectID: b.project.ID, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	c := b.browser(t)
	c.mustSignIn("ed@acme.test")
	page := fmt.Sprintf("/projects/%d/speech", b.project.ID)
	res := c.get(page)
	wantStatus(t, res, http.StatusOK)
	if !strings.Contains(res.body, "the 2 audios already made") {
		t.Error("the page does not say how many audios the button resynthesizes")
	}
	form := mustBrowserForm(t, res.body, "resynthesize-form")
	action := fmt.Sprintf("/projects/%d/resynthesize", b.project.ID)
	res = c.post(action, form)
	wantStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != page {
		t.Errorf("redirected to %q, want %q", loc, page)
	}
	if res := c.get(page); !strings.Contains(res.body, "Resynthesis queued. The project&#39;s audios (2)") {
		t.Errorf("after the press, the page does not say it is queued:\n%s", res.body)
	}
	if queued := sqlitetest.QueuedResyntheses(t, b.store.DB()); len(queued) != 1 || queued[0] != (narrator.ResynthesisJob{ProjectID: b.project.ID, All: true}) {
		t.Errorf("queued resyntheses %+v, want one of every audio of project %d", queued, b.project.ID)
	}

	// The job is still queued (no worker here): another press is refused
	// on the page itself.
	res = c.post(action, form)
	wantStatus(t, res, http.StatusConflict)
	if !strings.Contains(res.body, `role="alert">A resynthesis of this project is already under way.`) {
		t.Errorf("the refusal is not shown as an alert:\n%s", res.body)
	}
	mustBrowserForm(t, res.body, "speech-form") // the rest of the page is there

	b.newUser(t, "Other", "other@acme.test")
	other := b.browser(t)
	tok := other.mustSignIn("other@acme.test")
	wantStatus(t, other.post(action, url.Values{"csrf_token": {tok}}), http.StatusNotFound)
}

// TestSpeechResynthesizeOff: without a queue, the page offers no button
// and its route is a 404.
func TestSpeechResynthesizeOff(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) { d.Resynthesis = nil })
	c, tok := b.signedIn(t)
	if res := c.get(fmt.Sprintf("/projects/%d/speech", b.project.ID)); strings.Contains(res.body, "resynthesize-form") {
		t.Error("the page offers a resynthesis this server cannot queue")
	}
	wantStatus(t, c.post(fmt.Sprintf("/projects/%d/resynthesize", b.project.ID), url.Values{"csrf_token": {tok}}), http.StatusNotFound)
}
