package web_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/logtest"
	"github.com/narrator/narrator/internal/web"
)

// mustBrowserForm parses the form with the given id out of a page and
// returns what a browser submits for it unchanged: the values of its named
// inputs, with line breaks dropped as browsers do for text inputs, and of
// its text areas, whose line breaks browsers send as CRLF.
func mustBrowserForm(tb testing.TB, page, id string) url.Values {
	tb.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		tb.Fatal(err)
	}
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	var form *html.Node
	var find func(*html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "form" {
			if v, _ := attr(n, "id"); v == id {
				form = n
			}
		}
		for c := n.FirstChild; c != nil && form == nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if form == nil {
		tb.Fatalf("no form #%s on the page", id)
	}
	vals := url.Values{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			name, named := attr(n, "name")
			switch {
			case n.Data == "input" && named:
				v, _ := attr(n, "value")
				if typ, _ := attr(n, "type"); typ != "hidden" {
					v = strings.NewReplacer("\r", "", "\n", "").Replace(v)
				}
				vals.Add(name, v)
			case n.Data == "textarea" && named:
				var b strings.Builder
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					b.WriteString(c.Data)
				}
				vals.Add(name, strings.ReplaceAll(b.String(), "\n", "\r\n"))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(form)
	return vals
}

func TestEditKeepsMetadataExactly(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	meta := map[string]string{"a: b": "c", "multi": "l1\nl2", " sp ": " v ", "cr": "x\r\ny", "lead": "\nfirst line blank"}
	a := &narrator.Audio{ProjectID: b.project.ID, Title: "Original", Body: "Some text.", Metadata: meta}
	b.mustAudios(t, a)
	c, _ := b.signedIn(t)
	path := fmt.Sprintf("/projects/%d/audios/%d", b.project.ID, a.ID)
	edit := c.get(path + "/edit")
	wantStatus(t, edit, 200)
	if strings.Contains(edit.body, "Reusing one updates that audio") {
		t.Error("the edit form says reusing an external ID updates that audio; it is refused")
	}

	// Saved unchanged but for the title, the metadata stays byte for byte.
	form := mustBrowserForm(t, edit.body, "audio-form")
	form.Set("title", "Changed")
	wantStatus(t, c.post(path, form), http.StatusSeeOther)
	got, err := b.store.FindAudio(t.Context(), b.project.ID, fmt.Sprint(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Changed" {
		t.Errorf("title %q", got.Title)
	}
	if diff := cmp.Diff(meta, got.Metadata); diff != "" {
		t.Errorf("metadata after saving the form unchanged (-want +got):\n%s", diff)
	}

	tests := []struct {
		name   string
		edit   func(url.Values)
		status int
		want   map[string]string
		msg    string
	}{
		{
			name: "new entry in a blank row, empty key dropped",
			edit: func(f url.Values) {
				keys, values := f["metadata_key"], f["metadata_value"]
				n := len(meta)
				keys[n], values[n] = " new key ", "two\r\nlines "
				values[n+1] = "value without a key"
			},
			status: http.StatusSeeOther,
			want:   map[string]string{"a: b": "c", "multi": "l1\nl2", " sp ": " v ", "cr": "x\r\ny", "lead": "\nfirst line blank", " new key ": "two\nlines "},
		},
		{
			name: "emptied key removes the entry",
			edit: func(f url.Values) {
				for i, k := range f["metadata_key"] {
					if k == "multi" {
						f["metadata_key"][i] = ""
					}
				}
			},
			status: http.StatusSeeOther,
			want:   map[string]string{"a: b": "c", " sp ": " v ", "cr": "x\r\ny", "lead": "\nfirst line blank"},
		},
		{
			name:   "duplicate key",
			edit:   func(f url.Values) { f["metadata_key"][len(meta)] = "a: b" },
			status: http.StatusBadRequest,
			msg:    `Metadata key &#34;a: b&#34; is given twice`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case starts from a fresh copy of the original audio.
			a := &narrator.Audio{ProjectID: b.project.ID, Title: "Original", Body: "Some text.", Metadata: meta}
			b.mustAudios(t, a)
			path := fmt.Sprintf("/projects/%d/audios/%d", b.project.ID, a.ID)
			form := mustBrowserForm(t, c.get(path+"/edit").body, "audio-form")
			tt.edit(form)
			res := c.post(path, form)
			wantStatus(t, res, tt.status)
			if tt.msg != "" && !strings.Contains(res.body, tt.msg) {
				t.Errorf("page lacks %q:\n%s", tt.msg, res.body)
			}
			got, err := b.store.FindAudio(t.Context(), b.project.ID, fmt.Sprint(a.ID))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == nil {
				want = meta
			}
			if diff := cmp.Diff(want, got.Metadata); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if tt.status == http.StatusBadRequest {
				// The refused form comes back with the rows as typed.
				again := mustBrowserForm(t, res.body, "audio-form")
				if n := len(again["metadata_key"]); n != len(meta)+1+3 {
					t.Errorf("refused form has %d rows, want %d", n, len(meta)+1+3)
				}
			}
		})
	}
}

func TestFormErrorsUseLabels(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	other := &narrator.Audio{ProjectID: b.project.ID, Body: "Other.", ExternalID: "taken"}
	mine := &narrator.Audio{ProjectID: b.project.ID, Body: "Mine."}
	b.mustAudios(t, other, mine)
	project := func(kv ...string) url.Values {
		v := url.Values{"csrf_token": {tok}, "title": {"News"}, "language": {"en_US"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	tests := []struct {
		name, path string
		form       url.Values
		want       string
	}{
		{"language", "/projects", project("language", "xx_XX"), `Language &#34;xx_XX&#34; is not supported.`},
		{"website", "/projects", project("url", "ftp://x"), "Website must be an absolute http or https URL."},
		{"title voice", "/projects", project("title_voice", "Nobody"), `Title voice &#34;Nobody&#34; is not a voice of language en_US.`},
		{"body voice", "/projects", project("body_voice", "Nobody"), `Body voice &#34;Nobody&#34; is not a voice`},
		{"project title", "/projects", project("title", " "), "Title is required."},
		{"article URL", base + "/audios", url.Values{"csrf_token": {tok}, "body": {"x"}, "article_url": {"javascript:alert(1)"}}, "Article URL must be an absolute http or https URL."},
		{"text", base + "/audios", url.Values{"csrf_token": {tok}, "body": {" "}}, "Text is required and must not be blank."},
		{"external ID on edit", fmt.Sprintf("%s/audios/%d", base, mine.ID), url.Values{"csrf_token": {tok}, "body": {"Mine."}, "external_id": {"taken"}}, `External ID &#34;taken&#34; is already used`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.post(tt.path, tt.form)
			wantStatus(t, res, http.StatusBadRequest)
			if !strings.Contains(res.body, tt.want) {
				t.Errorf("page lacks %q:\n%s", tt.want, alertOf(res.body))
			}
			for _, bad := range []string{"narrator voices", "_voice", "External_id", "Article_url", "Url"} {
				if strings.Contains(alertOf(res.body), bad) {
					t.Errorf("message %q shows %q", alertOf(res.body), bad)
				}
			}
		})
	}
}

// alertOf returns the page's alert paragraph.
func alertOf(page string) string {
	_, rest, ok := strings.Cut(page, `class="alert" role="alert">`)
	if !ok {
		return ""
	}
	msg, _, _ := strings.Cut(rest, "</p>")
	return msg
}

func TestSignInLimitCountsFailuresOnly(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	var logs logtest.Buffer
	b := setup(t, func(d *web.Deps) {
		d.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		d.Limiter = web.NewLimiter(web.LimiterConfig{Store: d.Store, PerPair: 3, PerIP: 4, Window: time.Minute,
			Now: func() time.Time { return *clock.Load() }})
	})
	// Many successful sign-ins from one IP are never limited.
	for range 10 {
		wantStatus(t, b.browser(t).signIn("ed@acme.test", testPassword), http.StatusSeeOther)
	}
	// A success forgets the email's failures (the IP's stay).
	c := b.browser(t)
	wantStatus(t, c.signIn("ed@acme.test", "wrong 1"), http.StatusUnauthorized)
	wantStatus(t, c.signIn("ed@acme.test", "wrong 2"), http.StatusUnauthorized)
	wantStatus(t, c.signIn("ed@acme.test", testPassword), http.StatusSeeOther)
	c = b.browser(t)
	wantStatus(t, c.signIn("ed@acme.test", "wrong 3"), http.StatusUnauthorized)
	wantStatus(t, c.signIn("ed@acme.test", "wrong 4"), http.StatusUnauthorized)
	// Four failures fill the IP's limit: everyone from it waits.
	const secret = "wrong but secret"
	for range 3 {
		wantStatus(t, c.signIn("ed@acme.test", secret), http.StatusTooManyRequests)
	}
	out := logs.String()
	if n := strings.Count(out, "rate limit"); n != 1 {
		t.Errorf("%d rate-limit log lines, want 1 per lockout:\n%s", n, out)
	}
	if !strings.Contains(out, `"email_domain":"acme.test"`) || strings.Contains(out, "ed@acme.test") || strings.Contains(out, secret) {
		t.Errorf("rate-limit log shows the email or password, or lacks the domain:\n%s", out)
	}
	later := now.Add(time.Minute)
	clock.Store(&later)
	wantStatus(t, c.signIn("ed@acme.test", testPassword), http.StatusSeeOther)
}

func TestPageDetails(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c := b.browser(t)

	// After a wrong password, the password field has the focus.
	res := c.signIn("ed@acme.test", "wrong")
	if !strings.Contains(res.body, `autocomplete="current-password" required maxlength="72" autofocus`) ||
		strings.Contains(res.body, `value="ed@acme.test" autofocus`) {
		t.Errorf("wrong-password page does not focus the password field:\n%s", res.body)
	}
	if res := c.get("/signin"); !strings.Contains(res.body, `value="" autofocus`) {
		t.Errorf("sign-in page does not focus the email field")
	}
	c.mustSignIn("ed@acme.test")

	// "New project" leads to the form's first field, which takes the focus.
	if res := c.get("/projects"); !strings.Contains(res.body, `href="#p-title"`) || !strings.Contains(res.body, `id="p-title"`) {
		t.Error(`"New project" does not link to the title field`)
	}

	a := &narrator.Audio{ProjectID: b.project.ID, Title: "Bell\x07 and\ttab", Body: "Text.", ExternalID: "weird-/20189-a-rather-long-external-id"}
	b.mustAudios(t, a)
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	audioPath := fmt.Sprintf("%s/audios/%d", base, a.ID)
	for _, path := range []string{base, audioPath} {
		res := c.get(path)
		if !strings.Contains(res.body, ">Unprocessed</span>") || strings.Contains(res.body, "Processing<") {
			t.Errorf("%s does not label the state as the API does", path)
		}
		if !strings.Contains(res.body, "Bell and tab") || strings.Contains(res.body, "\x07") {
			t.Errorf("%s shows control characters of the title", path)
		}
	}
	if res := c.get(base); !strings.Contains(res.body, `<code class="ext-id" title="weird-/20189-a-rather-long-external-id">`) {
		t.Error("the external ID cell has no title for its full text")
	}

	// Durations read as players show them: 10.55 s is 0:10.
	if err := b.store.FinishAudio(t.Context(), a.ID, 1, narrator.Rendering{Keys: map[string]string{"mp3": "k/a.mp3", "m3u8": "k/a.m3u8"}, Bytes: map[string]int64{"mp3": 1000, "m3u8": 100}, Duration: 10_550 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if res := c.get(audioPath); !strings.Contains(res.body, "<span>0:10</span>") {
		t.Error("10.55 s is not shown as 0:10")
	}
}

// TestFormRefusesTooLong: an article whose audio would pass the duration
// cap is refused on the form, on create and on edit, and nothing changes.
func TestFormRefusesTooLong(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	mine := &narrator.Audio{ProjectID: b.project.ID, Body: "Mine.", ExternalID: "mine"}
	b.mustAudios(t, mine)
	long := "<speak>" + strings.Repeat(`a<break time="10s"/>`, 4_900) + "</speak>"
	for _, path := range []string{base + "/audios", fmt.Sprintf("%s/audios/%d", base, mine.ID)} {
		res := c.post(path, url.Values{"csrf_token": {tok}, "body": {long}, "external_id": {"long"}})
		wantStatus(t, res, http.StatusBadRequest)
		if msg := alertOf(res.body); !strings.Contains(msg, "Text would make") || !strings.Contains(msg, "at most 3 h") {
			t.Errorf("%s: alert %q", path, msg)
		}
	}
	got, err := b.store.FindAudio(t.Context(), b.project.ID, "mine")
	if err != nil {
		t.Fatal(err)
	}
	if got.Body != "Mine." {
		t.Errorf("refused edit stored body %.40q", got.Body)
	}
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, "long"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("refused create stored: %v", err)
	}
}
