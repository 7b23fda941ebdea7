package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestSpeechPage(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c := b.browser(t)
	c.mustSignIn("ed@acme.test")
	page := fmt.Sprintf("/projects/%d/speech", b.project.ID)
	if res := c.get(fmt.Sprintf("/projects/%d", b.project.ID)); !strings.Contains(res.body, `href="`+page+`"`) {
		t.Error("the project page does not link to its speech settings")
	}
	res := c.get(page)
	wantStatus(t, res, http.StatusOK)
	if !strings.Contains(res.body, "applies to new renderings only") {
		t.Error("the page does not say that a new rate renders nothing again")
	}
	form := mustBrowserForm(t, res.body, "speech-form")
	if got := form.Get("speech_rate"); got != "1" {
		t.Errorf("rate field %q, want 1", got)
	}
	form.Set("speech_rate", "1,25") // a decimal comma, as some keyboards type it
	wantStatus(t, c.post(page, form), http.StatusSeeOther)
	p, err := b.store.FindProject(t.Context(), b.project.AccountID, b.project.ID)
	if err != nil || p.SpeechRate != 1.25 {
		t.Fatalf("stored project %+v, %v; want rate 1.25", p, err)
	}
	if res := c.get(page); !strings.Contains(res.body, "Audios keep their speech") || mustBrowserForm(t, res.body, "speech-form").Get("speech_rate") != "1.25" {
		t.Error("after saving, the page does not show the notice and the new rate")
	}
	for _, bad := range []string{"3", "fast", "0.1"} {
		form.Set("speech_rate", bad)
		res = c.post(page, form)
		wantStatus(t, res, http.StatusBadRequest)
		if !strings.Contains(res.body, "from 0.5 to 2.0") {
			t.Errorf("rate %q: the refusal does not give the range", bad)
		}
	}
	if p, _ := b.store.FindProject(t.Context(), b.project.AccountID, b.project.ID); p.SpeechRate != 1.25 {
		t.Errorf("a refused rate changed the project to %g", p.SpeechRate)
	}

	// The create form takes a rate too.
	create := mustBrowserForm(t, c.get("/projects").body, "project-form")
	create.Set("title", "Fast news")
	create.Set("language", "en_US")
	create.Set("speech_rate", "1.5")
	wantStatus(t, c.post("/projects", create), http.StatusSeeOther)
	ps, err := b.store.ListProjects(t.Context(), b.project.AccountID)
	if err != nil || ps[len(ps)-1].Title != "Fast news" || ps[len(ps)-1].SpeechRate != 1.5 {
		t.Errorf("projects %+v, %v; want the new one at rate 1.5", ps[len(ps)-1], err)
	}
	create.Set("speech_rate", "2.5")
	res = c.post("/projects", create)
	wantStatus(t, res, http.StatusBadRequest)
	if !strings.Contains(res.body, "Speaking rate must be") {
		t.Error("a create at rate 2.5 is not refused in the form's words")
	}
}
