package web_test

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/extract"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/web"
)

const importedPage = `<!doctype html><html lang="en"><head><title>Library reopens</title><meta name="author" content="Sophie Laurent"></head>
<body><nav><a href="/">Home</a></nav><article><h1>Library reopens</h1>
<p>The Jean Moulin library reopened on Saturday morning after two years of building work, to a queue that reached the market square.</p>
<p>It now opens on Sunday afternoons and until eight on Thursdays, as families and students of the neighbourhood had long asked.</p>
<div class="comments"><p>Finally! My children have waited so long.</p></div>
</article></body></html>`

func TestImportFromURL(t *testing.T) {
	t.Parallel()
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/library":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, importedPage)
		case "/home":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><nav><a href="/">Home</a></nav></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(pages.Close)
	b := setup(t, func(d *web.Deps) { d.Pages = extract.NewReader(fetch.New(fetch.Options{AllowPrivate: true})) })
	c, tok := b.signedIn(t)
	base := fmt.Sprintf("/projects/%d", b.project.ID)

	res := c.get(base)
	wantStatus(t, res, http.StatusOK)
	if !strings.Contains(res.body, `action="`+base+`/audios/import"`) || !strings.Contains(res.body, "Import from URL") {
		t.Error("the project page has no Import from URL form")
	}
	wantStatus(t, c.get(base+"/audios/import"), http.StatusOK)

	// Without the CSRF token: refused, nothing fetched or created.
	wantStatus(t, c.post(base+"/audios/import", url.Values{"url": {pages.URL + "/library"}}), http.StatusForbidden)

	res = c.post(base+"/audios/import", url.Values{"csrf_token": {tok}, "url": {pages.URL + "/library"}})
	wantStatus(t, res, http.StatusSeeOther)
	a, err := b.store.FindAudio(t.Context(), b.project.ID, pages.URL+"/library")
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Get("Location") != fmt.Sprintf("%s/audios/%d", base, a.ID) || a.Title != "Library reopens" || a.Author != "Sophie Laurent" ||
		!strings.Contains(a.Body, "Jean Moulin library") || strings.Contains(a.Body, "Finally") {
		t.Errorf("audio %q by %q, redirect %q, body:\n%s", a.Title, a.Author, res.Header.Get("Location"), a.Body)
	}

	for _, tc := range []struct {
		form   url.Values
		status int
		want   string
	}{
		{url.Values{"url": {pages.URL + "/home"}}, http.StatusUnprocessableEntity, "The page could not be imported: no article was found on it."},
		{url.Values{"url": {pages.URL + "/gone"}}, http.StatusUnprocessableEntity, "The page could not be imported: the page answered 404 Not Found."},
		{url.Values{"url": {"javascript:alert(1)"}}, http.StatusBadRequest, "Page URL must be an absolute http or https URL."},
		{url.Values{"url": {""}}, http.StatusBadRequest, "Page URL is required."},
	} {
		tc.form.Set("csrf_token", tok)
		res := c.post(base+"/audios/import", tc.form)
		if res.StatusCode != tc.status || !strings.Contains(html.UnescapeString(res.body), tc.want) {
			t.Errorf("import %v: %d; want %d with %q", tc.form.Get("url"), res.StatusCode, tc.status, tc.want)
		}
	}
}

func TestImportOffWithoutReader(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, _ := b.signedIn(t)
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	if res := c.get(base); strings.Contains(res.body, "/audios/import") {
		t.Error("the project page shows the import form without a reader")
	}
	wantStatus(t, c.get(base+"/audios/import", "Accept", "text/html"), http.StatusNotFound)
}
