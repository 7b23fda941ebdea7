package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
	"github.com/narrator/narrator/internal/web"
)

const testPassword = "correct horse battery"

// fakePreviewer stands in for the job queue and a worker node: asked for a
// preview, it stores a fixed, MP3-looking payload in the media store a
// moment later, as a worker would, and counts the requests. With never
// set, it makes nothing.
type fakePreviewer struct {
	media *localfs.Store
	calls atomic.Int32
	never bool
}

func (f *fakePreviewer) RequestPreview(ctx context.Context, job narrator.PreviewJob) error {
	f.calls.Add(1)
	if f.never {
		return nil
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		f.media.Put(context.Background(), job.Key, strings.NewReader(fmt.Sprintf("ID3 preview of %s: %s", job.Voice, job.Text)))
	}()
	return nil
}

// testBundle is the dashboard on a real SQLite store, with River's queue
// for enqueueing (not started).
type testBundle struct {
	store    *sqlite.Store
	srv      *httptest.Server
	account  *narrator.Account
	project  *narrator.Project
	previews *fakePreviewer
	dir      string
	deps     web.Deps
}

// twin starts a second dashboard node on the same store, as a second node
// behind a load balancer, and returns its base URL. A browser's cookies
// reach both: cookies ignore the port.
func (b *testBundle) twin(t *testing.T) string {
	t.Helper()
	d := b.deps
	d.Limiter = nil // each node has its own, on the shared store
	h, err := web.New(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func setup(t *testing.T, mod func(*web.Deps)) *testBundle {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	st, queue := sqlitetest.OpenPath(t, filepath.Join(dir, "test.db"), sqlite.Options{
		EventBody: func(e *narrator.Event) ([]byte, error) { return []byte(`{"action_type":"` + e.Type + `"}`), nil },
	}, jobs.Config{})
	media, err := localfs.New(filepath.Join(dir, "media"))
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{store: st, previews: &fakePreviewer{media: media}, dir: dir}
	d := web.Deps{
		Store:    st,
		MediaURL: func(key string) string { return "https://media.test/media/" + key },
		Previews: b.previews,
		Media:    media,
		Queue:    queue,
		// Resynthesis jobs are inserted and left alone.
		Resynthesis: queue,
		NotFound: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			io.WriteString(w, `{"code":30,"message":"Object not found"}`)
		}),
	}
	if mod != nil {
		mod(&d)
	}
	b.deps = d
	h, err := web.New(d)
	if err != nil {
		t.Fatal(err)
	}
	b.srv = httptest.NewServer(h)
	t.Cleanup(b.srv.Close)
	b.account = b.newUser(t, "Acme", "ed@acme.test")
	b.project = &narrator.Project{AccountID: b.account.ID, Title: "Daily", Type: narrator.ProjectTypeAPI,
		Language: "en_US", TitleVoice: "Richard", BodyVoice: "Sally"}
	if err := st.CreateProject(ctx, b.project); err != nil {
		t.Fatal(err)
	}
	return b
}

// newUser creates an account with a user whose password is testPassword.
func (b *testBundle) newUser(t *testing.T, account, email string) *narrator.Account {
	t.Helper()
	a := &narrator.Account{Name: account}
	if err := b.store.CreateAccount(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	// The lowest cost keeps the tests fast, under the race detector too.
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.CreateUser(t.Context(), &narrator.User{AccountID: a.ID, Email: email, PasswordHash: hash}); err != nil {
		t.Fatal(err)
	}
	return a
}

// projectPage returns the path of the dashboard page sub ("feed", "webhooks"…) of project
// projectID, failing the test unless the project's own page links to it.
func (c *browser) projectPage(projectID int64, sub string) string {
	c.t.Helper()
	page := fmt.Sprintf("/projects/%d/%s", projectID, sub)
	if res := c.get(fmt.Sprintf("/projects/%d", projectID)); !strings.Contains(res.body, `href="`+page+`"`) {
		c.t.Errorf("the page of project %d does not link to %s", projectID, page)
	}
	return page
}

// mustAudios stores audios in the bundle's store.
func (b *testBundle) mustAudios(t *testing.T, audios ...*narrator.Audio) {
	t.Helper()
	for _, a := range audios {
		if _, err := b.store.CreateAudio(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
}

// browser is an HTTP client with cookies that does not follow redirects.
type browser struct {
	t      *testing.T
	base   string
	client *http.Client
}

func (b *testBundle) browser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: b.srv.URL, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// response is a finished response with its body read.
type response struct {
	*http.Response
	body string
}

func (c *browser) do(req *http.Request) response {
	c.t.Helper()
	res, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{res, string(raw)}
}

func (c *browser) get(path string, header ...string) response {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), "GET", c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.do(req)
}

func (c *browser) post(path string, form url.Values) response {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), "POST", c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf returns the CSRF token of the forms on a page.
func (c *browser) csrf(path string) string {
	c.t.Helper()
	res := c.get(path)
	m := csrfRE.FindStringSubmatch(res.body)
	if m == nil {
		c.t.Fatalf("no CSRF token on %s (%d)", path, res.StatusCode)
	}
	return m[1]
}

// signIn signs in and returns the session's CSRF token.
func (c *browser) signIn(email, password string) response {
	c.t.Helper()
	tok := c.csrf("/signin")
	return c.post("/signin", url.Values{"csrf_token": {tok}, "email": {email}, "password": {password}})
}

// signedIn returns a browser signed in as ed@acme.test, of b's account, and its CSRF token.
func (b *testBundle) signedIn(t *testing.T) (*browser, string) {
	t.Helper()
	c := b.browser(t)
	return c, c.mustSignIn("ed@acme.test")
}

func (c *browser) mustSignIn(email string) string {
	c.t.Helper()
	if res := c.signIn(email, testPassword); res.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("sign in: %d %s", res.StatusCode, res.body)
	}
	return c.csrf("/projects")
}

func wantStatus(t *testing.T, res response, status int) {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d\n%s", res.Request.Method, res.Request.URL.Path, res.StatusCode, status, res.body)
	}
}

func TestSignedOutRedirects(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c := b.browser(t)
	for _, path := range []string{"/", "/projects", "/projects/1", "/keys", "/projects/1/audios/1", "/voices/en_US/Sally/preview.mp3"} {
		res := c.get(path)
		wantStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/signin") {
			t.Errorf("GET %s redirects to %q", path, loc)
		}
	}
	res := c.get("/keys")
	if loc := res.Header.Get("Location"); loc != "/signin?next=%2Fkeys" {
		t.Errorf("GET /keys redirects to %q", loc)
	}
	res = c.post("/keys", url.Values{"csrf_token": {"x"}})
	wantStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/signin" {
		t.Errorf("POST /keys redirects to %q", loc)
	}
	// Static assets need no session.
	wantStatus(t, c.get("/static/app.css"), 200)
	wantStatus(t, c.get("/static/app.js"), 200)
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c := b.browser(t)

	// The form's double-submit token is required.
	res := c.post("/signin", url.Values{"email": {"ed@acme.test"}, "password": {testPassword}})
	wantStatus(t, res, http.StatusForbidden)

	// A sign-in posted from another site is refused.
	tok := c.csrf("/signin")
	req, _ := http.NewRequestWithContext(t.Context(), "POST", b.srv.URL+"/signin",
		strings.NewReader(url.Values{"csrf_token": {tok}, "email": {"ed@acme.test"}, "password": {testPassword}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.test")
	wantStatus(t, c.do(req), http.StatusForbidden)

	res = c.signIn("ed@acme.test", "wrong password")
	wantStatus(t, res, http.StatusUnauthorized)
	if !strings.Contains(res.body, "not right") || !strings.Contains(res.body, `value="ed@acme.test"`) {
		t.Errorf("wrong password page:\n%s", res.body)
	}
	res = c.signIn("nobody@acme.test", testPassword)
	wantStatus(t, res, http.StatusUnauthorized)

	res = c.signIn(" ED@acme.test ", testPassword)
	wantStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/projects" {
		t.Errorf("after sign-in: Location %q", loc)
	}
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "narrator_session" {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure || session.MaxAge <= 0 {
		t.Fatalf("session cookie %+v", session)
	}
	wantStatus(t, c.get("/projects"), 200)

	// The stored session is a hash: the cookie's token is not in the database.
	raw, err := os.ReadFile(filepath.Join(b.dir, "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(filepath.Join(b.dir, "test.db-wal"))
	if strings.Contains(string(raw)+string(wal), session.Value) {
		t.Error("the session token is stored in clear")
	}

	// Sign out ends the session on the server, not only in the cookie.
	tok = c.csrf("/projects")
	wantStatus(t, c.post("/signout", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	wantStatus(t, c.get("/projects"), http.StatusSeeOther)
	replay := b.browser(t)
	u, _ := url.Parse(b.srv.URL)
	replay.client.Jar.SetCookies(u, []*http.Cookie{{Name: "narrator_session", Value: session.Value}})
	wantStatus(t, replay.get("/projects"), http.StatusSeeOther)

	// Redirects after sign-in stay on this site.
	for next, want := range map[string]string{
		"/keys": "/keys", "//evil.test/": "/projects", "https://evil.test/": "/projects", "/\\evil.test": "/projects",
	} {
		c := b.browser(t)
		tok := c.csrf("/signin?next=" + url.QueryEscape(next))
		res := c.post("/signin", url.Values{"csrf_token": {tok}, "email": {"ed@acme.test"}, "password": {testPassword}, "next": {next}})
		if loc := res.Header.Get("Location"); loc != want {
			t.Errorf("next=%q: Location %q, want %q", next, loc, want)
		}
	}
}

func TestSecureCookies(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) { d.SecureCookies = true })
	c := b.browser(t)
	res := c.get("/signin")
	for _, ck := range res.Cookies() {
		if !ck.Secure {
			t.Errorf("cookie %s is not Secure", ck.Name)
		}
	}
}

func TestSignInRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	nowFunc := func() time.Time { return *clock.Load() }
	b := setup(t, func(d *web.Deps) {
		d.Limiter = web.NewLimiter(web.LimiterConfig{Store: d.Store, PerPair: 3, PerIP: 5, Window: time.Minute, Now: nowFunc})
	})
	c := b.browser(t)
	for i := range 3 {
		wantStatus(t, c.signIn("ed@acme.test", fmt.Sprintf("wrong %d", i)), http.StatusUnauthorized)
	}
	// The email is locked, even with the right password.
	res := c.signIn("ed@acme.test", testPassword)
	wantStatus(t, res, http.StatusTooManyRequests)
	if !strings.Contains(res.body, "Too many sign-in attempts") || res.Header.Get("Retry-After") == "" {
		t.Errorf("rate-limited page: %v\n%s", res.Header, res.body)
	}
	// Other emails from this IP still get through, up to the IP's limit.
	b.newUser(t, "Other", "other@acme.test")
	wantStatus(t, b.browser(t).signIn("other@acme.test", testPassword), http.StatusSeeOther)
	// Only failures count against the IP: 3 for ed, then 2 more make 5.
	wantStatus(t, c.signIn("other@acme.test", "wrong"), http.StatusUnauthorized)
	wantStatus(t, c.signIn("nobody@acme.test", "wrong"), http.StatusUnauthorized)
	wantStatus(t, c.signIn("other@acme.test", testPassword), http.StatusTooManyRequests)
	// After the window, the right password works again.
	later := now.Add(time.Minute)
	clock.Store(&later)
	wantStatus(t, c.signIn("ed@acme.test", testPassword), http.StatusSeeOther)
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	other := b.browser(t)
	otherTok := other.mustSignIn("ed@acme.test")
	if tok == otherTok {
		t.Fatal("two sessions share a CSRF token")
	}
	paths := []string{"/keys", "/projects", "/signout", fmt.Sprintf("/projects/%d/audios", b.project.ID), "/keys/1/revoke"}
	for _, path := range paths {
		for name, form := range map[string]url.Values{
			"missing":       {"title": {"x"}},
			"wrong":         {"csrf_token": {"nope"}},
			"other session": {"csrf_token": {otherTok}},
		} {
			res := c.post(path, form)
			wantStatus(t, res, http.StatusForbidden)
			if !strings.Contains(res.body, "Request refused") {
				t.Errorf("POST %s with %s token: page lacks an explanation", path, name)
			}
		}
	}
	keys, err := b.store.ListAPIKeys(t.Context(), b.account.ID)
	if err != nil || len(keys) != 0 {
		t.Errorf("refused posts created keys: %v %v", keys, err)
	}
	wantStatus(t, c.post("/keys", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
}

func TestProjectsAndAudios(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)

	// Projects page and project creation.
	res := c.get("/projects")
	wantStatus(t, res, 200)
	for _, want := range []string{"Daily", "English (US)", "Richard (Male)", "Sally (Female)", `data-language="de_DE"`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("projects page lacks %q", want)
		}
	}
	res = c.post("/projects", url.Values{"csrf_token": {tok}, "title": {"Nachrichten"}, "language": {"de_DE"}, "title_voice": {"Sally"}, "body_voice": {"anna"}})
	wantStatus(t, res, http.StatusBadRequest)
	if !strings.Contains(res.body, "not a voice of language de_DE") || !strings.Contains(res.body, `value="Nachrichten"`) {
		t.Errorf("invalid project form:\n%s", res.body)
	}
	res = c.post("/projects", url.Values{"csrf_token": {tok}, "title": {"Nachrichten"}, "language": {"de_DE"}, "title_voice": {"lukas"}, "body_voice": {"Anna (Female)"}})
	wantStatus(t, res, http.StatusSeeOther)
	ps, err := b.store.ListProjects(t.Context(), b.account.ID)
	if err != nil || len(ps) != 2 || ps[1].TitleVoice != "Lukas" || ps[1].BodyVoice != "Anna" {
		t.Fatalf("projects after create: %+v %v", ps, err)
	}

	// A new audio through the same path as the API, with a hostile title.
	const hostile = `<script>alert("x")</script>`
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	res = c.post(base+"/audios", url.Values{"csrf_token": {tok}, "title": {hostile}, "body": {"   "}})
	wantStatus(t, res, http.StatusBadRequest)
	res = c.post(base+"/audios", url.Values{"csrf_token": {tok}, "title": {hostile}, "body": {"<p>It costs $5.</p>"},
		"author": {"Jane"}, "article_url": {"https://news.test/a"}, "external_id": {"ext-1"}})
	wantStatus(t, res, http.StatusSeeOther)
	audioPath := res.Header.Get("Location")
	a, err := b.store.FindAudio(t.Context(), b.project.ID, "ext-1")
	if err != nil || a.Title != hostile || a.State != narrator.StateUnprocessed {
		t.Fatalf("stored audio %+v %v", a, err)
	}
	if audioPath != fmt.Sprintf("%s/audios/%d", base, a.ID) {
		t.Errorf("redirect to %q", audioPath)
	}
	for _, path := range []string{base, audioPath, audioPath + "/edit", audioPath + "/delete"} {
		res = c.get(path)
		wantStatus(t, res, 200)
		if strings.Contains(res.body, hostile) || !strings.Contains(res.body, "&lt;script&gt;") {
			t.Errorf("%s does not escape the title", path)
		}
	}
	res = c.get(audioPath)
	if !strings.Contains(res.body, "five dollars") || !strings.Contains(res.body, `data-status-url`) {
		t.Errorf("audio page lacks the text as read or the pending poll:\n%s", res.body)
	}

	// The status endpoint reports states for the polling rows.
	res = c.get(fmt.Sprintf("%s/status?ids=%d,999", base, a.ID))
	wantStatus(t, res, 200)
	var st []struct {
		ID    int64
		State string
	}
	if err := json.Unmarshal([]byte(res.body), &st); err != nil || len(st) != 2 || st[0].State != "unprocessed" || st[1].State != "deleted" {
		t.Errorf("status = %s (%v)", res.body, err)
	}

	// A failed audio shows why, on its row and its page.
	if err := b.store.FailAudio(t.Context(), a.ID, 1, "The speech engine <b>stopped</b>."); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{base, audioPath} {
		if res := c.get(path); !strings.Contains(res.body, "The speech engine &lt;b&gt;stopped&lt;/b&gt;.") {
			t.Errorf("%s does not show the failure", path)
		}
	}

	// A processed audio shows its player and media URLs.
	if err := b.store.FinishAudio(t.Context(), a.ID, 1, narrator.Rendering{Keys: map[string]string{"mp3": "tok/audio.mp3", "m3u8": "tok/audio.m3u8"}, Bytes: map[string]int64{"mp3": 1000, "m3u8": 100}, Duration: 61_500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	res = c.get(audioPath)
	for _, want := range []string{`id="player"`, "https://media.test/media/tok/audio.mp3", "https://media.test/media/tok/audio.m3u8", "1:01", "download"} {
		if !strings.Contains(res.body, want) {
			t.Errorf("processed audio page lacks %q", want)
		}
	}

	// Edit: metadata rows, and a title change resynthesises.
	res = c.post(audioPath, url.Values{"csrf_token": {tok}, "title": {"Fixed"}, "body": {a.Body},
		"metadata_key": {"dup", "dup"}, "metadata_value": {"1", "2"}})
	wantStatus(t, res, http.StatusBadRequest)
	res = c.post(audioPath, url.Values{"csrf_token": {tok}, "title": {"Fixed"}, "body": {a.Body}, "author": {"Jane"},
		"article_url": {"https://news.test/a"}, "external_id": {"ext-1"},
		"metadata_key": {"section", "", "kind"}, "metadata_value": {"local", "", "news"}})
	wantStatus(t, res, http.StatusSeeOther)
	a2, err := b.store.FindAudio(t.Context(), b.project.ID, "ext-1")
	if err != nil || a2.Title != "Fixed" || a2.Revision != 2 || a2.Metadata["section"] != "local" || a2.Metadata["kind"] != "news" {
		t.Fatalf("after edit %+v %v", a2, err)
	}

	// Resynthesize bumps the revision even though nothing changed.
	wantStatus(t, c.post(audioPath+"/resynthesize", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	a3, err := b.store.FindAudio(t.Context(), b.project.ID, "ext-1")
	if err != nil || a3.Revision != 3 || a3.State != narrator.StateUnprocessed {
		t.Fatalf("after resynthesize %+v %v", a3, err)
	}
	// regenerate is the old name, a deprecated alias that does the same.
	wantStatus(t, c.post(audioPath+"/regenerate", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	if a4, err := b.store.FindAudio(t.Context(), b.project.ID, "ext-1"); err != nil || a4.Revision != 4 {
		t.Fatalf("after regenerate %+v %v", a4, err)
	}

	// Search and period filters.
	res = c.get(base + "?q=fixed&period=daily")
	if !strings.Contains(res.body, "Fixed") {
		t.Error("search by title does not find the audio")
	}
	res = c.get(base + "?q=nothing-like-this")
	if strings.Contains(res.body, `data-audio-id`) || !strings.Contains(res.body, "No audios match") {
		t.Error("search for nothing shows rows")
	}

	// Delete, after the confirmation page.
	wantStatus(t, c.post(audioPath+"/delete", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	wantStatus(t, c.get(audioPath), http.StatusNotFound)
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, "ext-1"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("deleted audio still found: %v", err)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	res := c.post("/keys", url.Values{"csrf_token": {tok}})
	// POST, redirect, GET: the secret is not in the URL, and the page that
	// shows it can be reloaded without making another key.
	wantStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/keys" {
		t.Errorf("create key redirects to %q, want /keys", loc)
	}
	res = c.get("/keys")
	wantStatus(t, res, 200)
	m := regexp.MustCompile(`id="new-key" readonly value="(nk_[0-9a-f]+)"`).FindStringSubmatch(res.body)
	if m == nil {
		t.Fatalf("no new key on the page:\n%s", res.body)
	}
	acct, err := b.store.AuthenticateAPIKey(t.Context(), narrator.HashAPIKey(m[1]))
	if err != nil || acct != b.account.ID {
		t.Fatalf("new key authenticates as %d, %v", acct, err)
	}
	res = c.get("/keys")
	if strings.Contains(res.body, m[1]) || !strings.Contains(res.body, m[1][:11]+"…") {
		t.Error("the keys page shows the secret again, or not the prefix")
	}
	keys, _ := b.store.ListAPIKeys(t.Context(), b.account.ID)
	if len(keys) != 1 {
		t.Fatalf("%d keys after one create and two GETs, want 1", len(keys))
	}
	// Revoking asks first; the row's link names the key.
	if want := fmt.Sprintf(`href="/keys/%d/revoke" aria-label="Revoke key %s"`, keys[0].ID, keys[0].Prefix); !strings.Contains(res.body, want) {
		t.Errorf("keys page lacks %s", want)
	}
	res = c.get(fmt.Sprintf("/keys/%d/revoke", keys[0].ID))
	wantStatus(t, res, 200)
	if !strings.Contains(res.body, `id="revoke-form"`) || !strings.Contains(res.body, "Revoke key "+keys[0].Prefix) {
		t.Errorf("revoke confirmation page:\n%s", res.body)
	}
	if _, err := b.store.AuthenticateAPIKey(t.Context(), narrator.HashAPIKey(m[1])); err != nil {
		t.Errorf("the confirmation page revoked the key: %v", err)
	}
	wantStatus(t, c.post(fmt.Sprintf("/keys/%d/revoke", keys[0].ID), url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	if _, err := b.store.AuthenticateAPIKey(t.Context(), narrator.HashAPIKey(m[1])); narrator.ErrorCode(err) != narrator.EUNAUTHORIZED {
		t.Errorf("revoked key still authenticates: %v", err)
	}

	// Another account's key cannot be revoked from here.
	otherAcct := b.newUser(t, "Other", "other@acme.test")
	_, prefix, hash, _ := narrator.NewAPIKey()
	k, err := b.store.CreateAPIKey(t.Context(), otherAcct.ID, hash, prefix)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, c.post(fmt.Sprintf("/keys/%d/revoke", k.ID), url.Values{"csrf_token": {tok}}), http.StatusNotFound)
	wantStatus(t, c.get(fmt.Sprintf("/keys/%d/revoke", k.ID)), http.StatusNotFound)
}

func TestOtherAccountsAreNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	a := &narrator.Audio{ProjectID: b.project.ID, Title: "Secret", Body: "Secret text"}
	b.mustAudios(t, a)
	b.newUser(t, "Other", "other@acme.test")
	c := b.browser(t)
	tok := c.mustSignIn("other@acme.test")
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	for _, path := range []string{base, base + "/audios/new", fmt.Sprintf("%s/audios/%d", base, a.ID), base + "/status?ids=1"} {
		wantStatus(t, c.get(path), http.StatusNotFound)
	}
	wantStatus(t, c.post(fmt.Sprintf("%s/audios/%d/delete", base, a.ID), url.Values{"csrf_token": {tok}}), http.StatusNotFound)
	if res := c.get("/projects"); strings.Contains(res.body, "Daily") {
		t.Error("another account's project is listed")
	}
}

func TestBadInputNeverFails(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	gets := []string{
		"/projects/abc", "/projects/-1", "/projects/99999999999999999999", base + "?page=0", base + "?page=abc",
		base + "?page=99999999999", base + "?period=yearly", base + "?q=" + strings.Repeat("x", 600),
		base + "/status?ids=a,b", base + "/status?ids=" + strings.Repeat("1,", 300), base + "/audios/999",
		base + "/audios/%00", base + "/audios/999/edit", "/keys/abc/revoke", "/keys/999/revoke", "/voices/xx_XX/Nobody/preview.mp3", "/voices/en_US/..%2f..%2fetc/preview.mp3",
		"/nothing/here",
	}
	for _, path := range gets {
		res := c.get(path, "Accept", "text/html")
		if res.StatusCode >= 500 || res.StatusCode < 400 {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
	}
	posts := []struct {
		path string
		form url.Values
	}{
		{base + "/audios", url.Values{"csrf_token": {tok}}},
		{base + "/audios", url.Values{"csrf_token": {tok}, "body": {strings.Repeat("a", narrator.MaxBodyChars+1)}}},
		{base + "/audios", url.Values{"csrf_token": {tok}, "body": {"x"}, "article_url": {"javascript:alert(1)"}}},
		{base + "/audios", url.Values{"csrf_token": {tok}, "body": {"x"}, "external_id": {strings.Repeat("e", 300)}}},
		{"/projects", url.Values{"csrf_token": {tok}, "title": {""}, "language": {"en_US"}}},
		{"/projects", url.Values{"csrf_token": {tok}, "title": {"x"}, "language": {"xx_XX"}}},
		{"/projects", url.Values{"csrf_token": {tok}, "title": {"x"}, "language": {"en_US"}, "url": {"ftp://x"}}},
		{"/keys/abc/revoke", url.Values{"csrf_token": {tok}}},
		{base + "/audios/999/resynthesize", url.Values{"csrf_token": {tok}}},
		{base + "/audios/999/regenerate", url.Values{"csrf_token": {tok}}},
		{base + "/audios/999/delete", url.Values{"csrf_token": {tok}}},
	}
	for _, p := range posts {
		res := c.post(p.path, p.form)
		if res.StatusCode >= 500 || res.StatusCode < 400 {
			t.Errorf("POST %s: %d", p.path, res.StatusCode)
		}
	}
	// A body over the form limit is refused without a 500.
	res := c.post(base+"/audios", url.Values{"csrf_token": {tok}, "body": {strings.Repeat("é", 3<<20)}})
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("huge form: %d", res.StatusCode)
	}
	// API clients asking for unknown paths get the API's JSON 404.
	res = c.get("/v3/nothing", "Accept", "application/json")
	if res.StatusCode != 404 || !strings.Contains(res.body, `"code":30`) {
		t.Errorf("unknown path for an API client: %d %s", res.StatusCode, res.body)
	}
}

func TestVoicePreview(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, _ := b.signedIn(t)
	for range 2 {
		res := c.get("/voices/de_DE/Anna/preview.mp3")
		wantStatus(t, res, 200)
		if ct := res.Header.Get("Content-Type"); ct != "audio/mpeg" || !strings.Contains(res.body, "Anna") || !strings.Contains(res.body, "Hallo") {
			t.Errorf("preview: %s %q", ct, res.body)
		}
	}
	if n := b.previews.calls.Load(); n != 1 {
		t.Errorf("preview requested %d times, want 1 (then it is in the media store)", n)
	}
	// Another node serves the same preview without asking again.
	c.base = b.twin(t)
	wantStatus(t, c.get("/voices/de_DE/Anna/preview.mp3"), 200)
	if n := b.previews.calls.Load(); n != 1 {
		t.Errorf("preview requested %d times after the other node served it, want 1", n)
	}
	wantStatus(t, c.get("/voices/de_DE/Sally/preview.mp3"), http.StatusNotFound)
}

func TestVoicePreviewTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) { d.PreviewTimeout = 300 * time.Millisecond })
	b.previews.never = true
	c, _ := b.signedIn(t)
	res := c.get("/voices/en_US/Sally/preview.mp3")
	wantStatus(t, res, http.StatusServiceUnavailable)
	if !strings.Contains(res.body, "not ready yet") {
		t.Errorf("timeout page: %s", res.body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	res := b.browser(t).get("/signin")
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
	if res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", res.Header)
	}
}

// TestAnyNode checks what a user sees does not depend on which node
// answers: a key created through one node is shown once by another, and
// sign-in failures count across nodes.
func TestAnyNode(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	other := b.twin(t)
	c, tok := b.signedIn(t)
	wantStatus(t, c.post("/keys", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)

	// A browser of another session gets nothing from the cookie.
	thief := b.browser(t)
	thief.mustSignIn("ed@acme.test")
	u, _ := url.Parse(b.srv.URL + "/keys")
	for _, ck := range c.client.Jar.Cookies(u) {
		if ck.Name == "narrator_new_key" {
			thief.client.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/keys"}})
		}
	}

	c.base = other
	res := c.get("/keys")
	wantStatus(t, res, 200)
	m := regexp.MustCompile(`id="new-key" readonly value="(nk_[0-9a-f]+)"`).FindStringSubmatch(res.body)
	if m == nil {
		t.Fatalf("the other node does not show the new key:\n%s", res.body)
	}
	c.base = b.srv.URL
	if res := c.get("/keys"); strings.Contains(res.body, m[1]) {
		t.Error("the first node shows the key a second time")
	}
	if res := thief.get("/keys"); strings.Contains(res.body, m[1]) {
		t.Error("another session's browser read the new key from the cookie")
	}

	// Failures on one node count on the other: the default limit is 5 per email.
	for i := range 5 {
		n := b.browser(t)
		if i%2 == 1 {
			n.base = other
		}
		wantStatus(t, n.signIn("ed@acme.test", fmt.Sprintf("wrong %d", i)), http.StatusUnauthorized)
	}
	n := b.browser(t)
	n.base = other
	wantStatus(t, n.signIn("ed@acme.test", testPassword), http.StatusTooManyRequests)
}

func TestNewKeyCookieTampered(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	wantStatus(t, c.post("/keys", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	u, _ := url.Parse(b.srv.URL + "/keys")
	for _, ck := range c.client.Jar.Cookies(u) {
		if ck.Name == "narrator_new_key" {
			v := []byte(ck.Value)
			v[len(v)/2] ^= 1
			c.client.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: string(v), Path: "/keys"}})
		}
	}
	res := c.get("/keys")
	wantStatus(t, res, 200)
	if strings.Contains(res.body, `id="new-key"`) {
		t.Error("a tampered cookie showed a key")
	}
}
