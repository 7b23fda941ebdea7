package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/source"
	"github.com/narrator/narrator/internal/web"
)

func TestSourcesPage(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) {
		d.Sources = source.New(d.Store.(source.Store), source.Options{Client: fetch.New(fetch.Options{AllowPrivate: true})})
	})
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, `<rss version="2.0"><channel><item><guid>1</guid><title>One</title><description>One.</description></item></channel></rss>`)
	}))
	t.Cleanup(feed.Close)
	p := &narrator.Project{AccountID: b.account.ID, Title: "Wire", Type: narrator.ProjectTypeRSS, Language: "en_US", TitleVoice: "Richard", BodyVoice: "Sally"}
	if err := b.store.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	c, tok := b.signedIn(t)
	page := c.projectPage(p.ID, "sources")
	if res := c.get(fmt.Sprintf("/projects/%d", b.project.ID)); strings.Contains(res.body, "/sources") {
		t.Error("an api project's page links to feeds")
	}

	// Bad input gets the form back with a message, not a 500.
	for _, form := range []url.Values{
		{"url": {"ftp://x.example/"}},
		{"url": {feed.URL}, "interval_minutes": {"0"}},
		{"url": {feed.URL}, "backfill_items": {"many"}},
	} {
		form.Set("csrf_token", tok)
		res := c.post(page, form)
		wantStatus(t, res, http.StatusBadRequest)
		if !strings.Contains(res.body, `class="alert"`) || !strings.Contains(res.body, `id="source-form"`) {
			t.Errorf("bad form %v: %s", form, res.body)
		}
	}
	// Without the CSRF token, nothing is added.
	wantStatus(t, c.post(page, url.Values{"url": {feed.URL}}), http.StatusForbidden)

	res := c.post(page, url.Values{"csrf_token": {tok}, "url": {feed.URL}, "backfill_items": {"5"}, "interval_minutes": {"1"}})
	wantStatus(t, res, http.StatusSeeOther)
	list, err := b.store.ListSources(t.Context(), p.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("feeds = %v, %v", list, err)
	}
	src := list[0]
	poll := fmt.Sprintf("%s/%d/poll", page, src.ID)
	wantStatus(t, c.post(poll, url.Values{}), http.StatusForbidden)
	wantStatus(t, c.post(poll, url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	res = c.get(page)
	wantStatus(t, res, http.StatusOK)
	for _, want := range []string{"<h1>Sources</h1>", `data-status="ok"`, "The feed was read.", "<dt>Audios created</dt><dd>1</dd>", "<dt>Items seen</dt><dd>1</dd>", "Poll now", "<span>Every minute</span>"} {
		if !strings.Contains(res.body, want) {
			t.Errorf("the sources page after a poll lacks %q:\n%s", want, res.body)
		}
	}
	// Another project's feed is not found through this one.
	wantStatus(t, c.post(fmt.Sprintf("/projects/%d/sources/%d/poll", b.project.ID, src.ID), url.Values{"csrf_token": {tok}}), http.StatusNotFound)
}

func TestCreateRSSProject(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	if res := c.get("/projects"); !strings.Contains(res.body, `<option value="rss"`) {
		t.Error("the new-project form offers no rss type")
	}
	wantStatus(t, c.post("/projects", url.Values{"csrf_token": {tok}, "title": {"Wire"}, "type": {"rss"}, "language": {"en_US"}}), http.StatusSeeOther)
	res := c.post("/projects", url.Values{"csrf_token": {tok}, "title": {"Odd"}, "type": {"wordpress"}, "language": {"en_US"}})
	wantStatus(t, res, http.StatusBadRequest)
	ps, err := b.store.ListProjects(t.Context(), b.account.ID)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range ps {
		types = append(types, p.Title+":"+p.Type)
	}
	if got := strings.Join(types, ","); got != "Daily:api,Wire:rss" {
		t.Errorf("projects %s; want Daily:api,Wire:rss", got)
	}
}
