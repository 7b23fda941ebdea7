package web_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/web"
)

// feedURLOf is the FeedURL the feed tests give the dashboard.
func feedURLOf(token string) string { return "https://pub.test" + narrator.FeedPath(token) }

func mustFindFeed(t *testing.T, b *testBundle) *narrator.Feed {
	t.Helper()
	f, err := b.store.FindFeed(t.Context(), b.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// shownFeedURL returns the feed URL the page shows, or "".
func shownFeedURL(page string) string {
	_, rest, ok := strings.Cut(page, `id="feed-url" readonly value="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return html.UnescapeString(v)
}

func TestFeedSettings(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) { d.FeedURL = feedURLOf })
	c, _ := b.signedIn(t)
	page := c.projectPage(b.project.ID, "feed")

	// A project without a feed: the form is prefilled from the project.
	res := c.get(page)
	wantStatus(t, res, http.StatusOK)
	form := mustBrowserForm(t, res.body, "feed-form")
	if form.Get("title") != "Daily" || form.Get("language") != "en-US" || shownFeedURL(res.body) != "" {
		t.Fatalf("new feed form: title %q language %q, URL %q", form.Get("title"), form.Get("language"), shownFeedURL(res.body))
	}
	if !strings.Contains(res.body, "Turn on feed") {
		t.Error("no button turns the feed on")
	}

	// Turning it on.
	form.Set("description", "Read aloud.\r\nEvery day.")
	form.Set("author", "Acme & Co")
	form.Set("category", "News > Tech News")
	form.Set("explicit", "1")
	res = c.post(page, form)
	wantStatus(t, res, http.StatusSeeOther)
	f := mustFindFeed(t, b)
	want := narrator.Feed{ProjectID: b.project.ID, Enabled: true, Title: "Daily", Description: "Read aloud.\r\nEvery day.",
		Author: "Acme & Co", Language: "en-US", Category: "News > Tech News", Explicit: true,
		Token: f.Token, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
	if diff := cmp.Diff(want, *f); diff != "" {
		t.Errorf("stored feed (-want +got):\n%s", diff)
	}
	if narrator.ValidateFeedToken(f.Token) != nil {
		t.Fatalf("stored token %q", f.Token)
	}
	res = c.get(page)
	if got := shownFeedURL(res.body); got != feedURLOf(f.Token) {
		t.Fatalf("page shows feed URL %q, want %q", got, feedURLOf(f.Token))
	}
	for _, s := range []string{`data-copy="feed-url"`, `<option value="News &gt; Tech News" selected>`, `value="1" checked`, "Save changes"} {
		if !strings.Contains(res.body, s) {
			t.Errorf("page lacks %s", s)
		}
	}

	// Editing keeps the token.
	form = mustBrowserForm(t, res.body, "feed-form")
	form.Del("explicit") // unchecked
	form.Set("category", "Technology")
	form.Set("title", "Daily, read")
	wantStatus(t, c.post(page, form), http.StatusSeeOther)
	edited := mustFindFeed(t, b)
	if edited.Token != f.Token || edited.Title != "Daily, read" || edited.Category != "Technology" || edited.Explicit ||
		edited.Description != f.Description {
		t.Errorf("edited feed = %+v", edited)
	}

	// A new URL: the old token is gone.
	tok := c.csrf(page)
	wantStatus(t, c.post(page+"/rotate", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	rotated := mustFindFeed(t, b)
	if rotated.Token == f.Token || narrator.ValidateFeedToken(rotated.Token) != nil {
		t.Fatalf("rotated token %q (was %q)", rotated.Token, f.Token)
	}
	res = c.get(page)
	if got := shownFeedURL(res.body); got != feedURLOf(rotated.Token) || strings.Contains(res.body, f.Token) {
		t.Errorf("after rotation the page shows %q", got)
	}

	// Off, then on again at the same URL.
	wantStatus(t, c.post(page+"/off", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	off := mustFindFeed(t, b)
	if off.Enabled || off.Token != rotated.Token || off.Title != "Daily, read" {
		t.Errorf("feed turned off = %+v", off)
	}
	res = c.get(page)
	if shownFeedURL(res.body) != "" || !strings.Contains(res.body, `id="feed-off"`) || !strings.Contains(res.body, "Turn on feed") {
		t.Errorf("page of a feed turned off shows URL %q", shownFeedURL(res.body))
	}
	wantStatus(t, c.post(page, mustBrowserForm(t, res.body, "feed-form")), http.StatusSeeOther)
	if on := mustFindFeed(t, b); !on.Enabled || on.Token != rotated.Token {
		t.Errorf("feed turned on again = %+v", on)
	}

	// Without the CSRF token nothing changes.
	wantStatus(t, c.post(page+"/rotate", url.Values{}), http.StatusForbidden)
	wantStatus(t, c.post(page+"/off", url.Values{"csrf_token": {"forged"}}), http.StatusForbidden)
	if now := mustFindFeed(t, b); now.Token != rotated.Token || !now.Enabled {
		t.Errorf("a forged post changed the feed: %+v", now)
	}
}

func TestFeedFormErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	page := fmt.Sprintf("/projects/%d/feed", b.project.ID)
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf_token": {tok}, "title": {"Daily"}, "language": {"en"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, tt := range []struct {
		name string
		form url.Values
		want string
	}{
		{"title", form("title", " "), "Title is required."},
		{"category", form("category", "Cooking"), "Category &#34;Cooking&#34; is not an Apple Podcasts category."},
		{"subcategory elsewhere", form("category", "Arts > Tech News"), "Category &#34;Arts &gt; Tech News&#34; is not an Apple Podcasts category."},
		{"image", form("image_url", "ftp://x/a.png"), "Image URL must be an absolute http or https URL."},
		{"language", form("language", "en_US"), "Language must be a language tag such as en or en-US."},
		{"description", form("description", strings.Repeat("x", narrator.MaxFeedDescriptionChars+1)), "Description is 4001 characters long"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := c.post(page, tt.form)
			wantStatus(t, res, http.StatusBadRequest)
			if !strings.Contains(alertOf(res.body), tt.want) {
				t.Errorf("alert %q, want %q", alertOf(res.body), tt.want)
			}
			// What was typed is shown again.
			if got := mustBrowserForm(t, res.body, "feed-form"); got.Get("language") != tt.form.Get("language") {
				t.Errorf("form shows language %q, posted %q", got.Get("language"), tt.form.Get("language"))
			}
		})
	}
	if _, err := b.store.FindFeed(t.Context(), b.project.ID); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("a refused form stored a feed: %v", err)
	}
	// Actions on a feed that does not exist are a 404 page.
	wantStatus(t, c.post(page+"/rotate", url.Values{"csrf_token": {tok}}), http.StatusNotFound)
	wantStatus(t, c.post(page+"/off", url.Values{"csrf_token": {tok}}), http.StatusNotFound)
	// Without FeedURL, the page shows the feed's path.
	wantStatus(t, c.post(page, form()), http.StatusSeeOther)
	if got, want := shownFeedURL(c.get(page).body), narrator.FeedPath(mustFindFeed(t, b).Token); got != want {
		t.Errorf("feed URL %q, want %q", got, want)
	}
}

func TestFeedOfOtherAccount(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := narrator.NewFeedSettings(b.project)
	f.Token = strings.Repeat("a", 42) + "A"
	if err := b.store.SaveFeed(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	b.newUser(t, "Other", "other@acme.test")
	c := b.browser(t)
	tok := c.mustSignIn("other@acme.test")
	page := fmt.Sprintf("/projects/%d/feed", b.project.ID)
	wantStatus(t, c.get(page), http.StatusNotFound)
	for _, path := range []string{page, page + "/rotate", page + "/off"} {
		wantStatus(t, c.post(path, url.Values{"csrf_token": {tok}, "title": {"Mine"}, "language": {"en"}}), http.StatusNotFound)
	}
	if got := mustFindFeed(t, b); got.Token != f.Token || !got.Enabled || got.Title != "Daily" {
		t.Errorf("another account changed the feed: %+v", got)
	}
}
