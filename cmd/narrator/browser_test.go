//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/narrator/narrator/internal/proctest"
)

// chromiumPath finds the Debian chromium. Without it the browser tests
// skip, unless NARRATOR_TEST_FULL=1 (scripts/test.sh), where they fail.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	proctest.Missing(t, "chromium", "apt-get install chromium")
	return ""
}

// newBrowser starts a headless chromium with a fresh profile and returns a
// context for one tab.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	// Not t.TempDir: chromium's helper processes may still write into the
	// profile for a moment after the browser is gone, which fails the
	// test's own clean-up ("directory not empty"). This clean-up runs
	// after the browser's (below) and tries again for a few seconds.
	profile, err := os.MkdirTemp("", "narrator-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("chromium's profile %s is left behind", profile)
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// screenshotDir is artifacts/screenshots at the repository root, which CI
// keeps.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "artifacts", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browse runs chromedp actions with a deadline and fails the test with the
// step's name.
func browse(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action) {
	t.Helper()
	// A guard against a hang, longer than any waitJS a step holds (the
	// longest waits 90 s for a synthesis on a loaded machine).
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Run(c, actions...); err != nil {
		var loc string
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = chromedp.Run(lctx, chromedp.Location(&loc))
		t.Fatalf("%s: %v (page %s)", step, err, loc)
	}
}

// waitJS polls a JavaScript expression until it is truthy.
func waitJS(expr string, timeout time.Duration) chromedp.Action {
	var ok bool
	return chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond))
}

// shoot saves a full-page PNG screenshot.
func shoot(t *testing.T, dir, name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var buf []byte
		if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
			return fmt.Errorf("screenshot %s: %w", name, err)
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	})
}

// apiStatus GETs an API path with a key and returns the status.
func apiStatus(t *testing.T, base, key string) int {
	t.Helper()
	res, _ := send(t, nil, "GET", base+"/api/v3/projects", nil, "Authorization", "Bearer "+key)
	return res.StatusCode
}

// signInSteps fills in and submits the sign-in form the page shows.
func signInSteps(email, password string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.WaitVisible("#signin-form"),
		chromedp.SendKeys("#email", email),
		chromedp.SendKeys("#password", password),
		chromedp.Submit("#signin-form"),
	}
}

// TestDashboardInBrowser drives the dashboard in headless chromium against
// a real `narrator serve` with the real engines, as a publisher would.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	start := time.Now()
	data := t.TempDir()
	acct := mustJSON[accountOut](t, mustCLI(t, "accounts", "create", "--data", data, "--name", "Acme News"))
	const email, password = "editor@acme.test", "correct horse battery"
	out := createUser(t, data, acct.ID, email, password)
	if strings.Contains(out, password) {
		t.Errorf("users create printed the password it was given: %s", out)
	}
	wire := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Wire", "--language", "en_US", "--type", "rss"))
	s := startServer(t, data, freeAddr(t))
	shots := screenshotDir(t)
	ctx := newBrowser(t, chromium)
	var text, loc string

	// Signed out: every page leads to the sign-in form.
	browse(t, ctx, "signed-out redirect",
		chromedp.Navigate(s.base+"/keys"),
		chromedp.WaitVisible("#signin-form"),
		chromedp.Location(&loc),
		shoot(t, shots, "signin"),
	)
	if !strings.Contains(loc, "/signin?next=%2Fkeys") {
		t.Errorf("signed-out /keys went to %s, want /signin?next=/keys", loc)
	}

	// A wrong password is refused; the right one signs in and goes back.
	browse(t, ctx, "wrong password",
		signInSteps(email, "not the password"),
		chromedp.WaitVisible(".alert"),
		chromedp.Text(".alert", &text),
	)
	if !strings.Contains(text, "not right") {
		t.Errorf("wrong password: alert %q", text)
	}
	browse(t, ctx, "focus after wrong password", chromedp.Evaluate(`document.activeElement.id`, &text))
	if text != "password" {
		t.Errorf("after a wrong password the focus is on %q, want the password field", text)
	}
	browse(t, ctx, "sign in",
		chromedp.SendKeys("#password", password), // the form comes back with the password empty
		chromedp.Submit("#signin-form"),
		chromedp.WaitVisible("#new-key-form"),
		chromedp.Location(&loc),
	)
	if !strings.HasSuffix(loc, "/keys") {
		t.Errorf("after sign-in at %s, want /keys", loc)
	}

	// "New project" moves the focus to the form's first field.
	browse(t, ctx, "new project link",
		chromedp.Navigate(s.base+"/projects"),
		chromedp.WaitVisible("#project-form"),
		chromedp.Click("#new-project-link"),
		waitJS(`document.activeElement && document.activeElement.id === 'p-title'`, 5*time.Second),
	)

	// Create a project from the form. The voice pickers follow the language.
	var visibleGerman, visibleOther int
	browse(t, ctx, "voice pickers",
		chromedp.Navigate(s.base+"/projects"),
		chromedp.WaitVisible("#project-form"),
		chromedp.SetValue("#p-language", "de_DE"),
		chromedp.Evaluate(`document.querySelector('#p-language').dispatchEvent(new Event('change')); 0`, nil),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('#p-title-voice optgroup:not([disabled]) option')).filter(o => o.dataset.language === 'de_DE').length`, &visibleGerman),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('#p-title-voice optgroup:not([disabled]) option')).filter(o => o.dataset.language !== 'de_DE').length`, &visibleOther),
		chromedp.Value("#p-title-voice", &text),
	)
	if visibleGerman != 2 || visibleOther != 0 || text != "Lukas" {
		t.Errorf("German pickers: %d German and %d other voices offered, default %q; want 2, 0, Lukas", visibleGerman, visibleOther, text)
	}
	var preview string
	browse(t, ctx, "project form",
		chromedp.SetValue("#p-language", "en_US"),
		chromedp.Evaluate(`document.querySelector('#p-language').dispatchEvent(new Event('change')); 0`, nil),
		chromedp.SendKeys("#p-title", "Morning news"),
		chromedp.SetValue("#p-title-voice", "Kevin"),
		chromedp.SetValue("#p-body-voice", "Susan"),
		// The preview of the picked voice is real speech from the engine.
		chromedp.Click(`[data-preview="p-body-voice"]`),
		chromedp.Evaluate(`fetch('/voices/en_US/Susan/preview.mp3').then(async r => r.status + ' ' + r.headers.get('Content-Type') + ' ' + ((await r.arrayBuffer()).byteLength > 4000))`, &preview, awaitPromise),
		shoot(t, shots, "new-project"),
		chromedp.Submit("#project-form"),
		chromedp.WaitVisible(`a[href$="/audios/new"]`),
		chromedp.Location(&loc),
	)
	if preview != "200 audio/mpeg true" {
		t.Errorf("voice preview: %s", preview)
	}
	projectURL := loc
	browse(t, ctx, "projects list",
		chromedp.Navigate(s.base+"/projects"),
		chromedp.WaitVisible("#projects"),
		chromedp.Text("#projects", &text),
		shoot(t, shots, "projects"),
	)
	if !strings.Contains(text, "Morning news") || !strings.Contains(text, "Kevin (Male)") || !strings.Contains(text, "Susan (Female)") {
		t.Errorf("projects list: %q", text)
	}

	// Create an audio from the form, with a title that tries to run a script.
	const xssTitle = `<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">Council approves library`
	// Distinct sentences, so that synthesis takes a few seconds and the
	// project page sees the row before it is processed.
	var body strings.Builder
	body.WriteString("<p>The city council voted on Tuesday to build a new public library on Main Street. The building will cost about $3.5 million and open in 2028.</p>\n")
	for i := range 14 {
		fmt.Fprintf(&body, "<p>Speaker number %d said that the %d reading rooms would open at %d o'clock, and that %d volunteers had offered to help with the move of %d boxes.</p>\n", i+1, i+3, i%12+1, 20+i*7, 100+i*13)
	}
	browse(t, ctx, "new audio form",
		chromedp.Navigate(projectURL),
		chromedp.Click(`a[href$="/audios/new"]`),
		chromedp.WaitVisible("#audio-form"),
		chromedp.SendKeys("#a-title", xssTitle),
		chromedp.SetValue("#a-body", body.String()),
		chromedp.SendKeys("#a-author", "Jane Doe"),
		chromedp.SendKeys("#a-url", "https://news.example/library"),
		chromedp.SendKeys("#a-external", "lib-1"),
		shoot(t, shots, "new-audio"),
		chromedp.Submit("#audio-form"),
		chromedp.WaitVisible("#audio-title"),
	)

	// The project page shows the row; it turns processed without a reload.
	var initial string
	browse(t, ctx, "row turns processed",
		chromedp.Navigate(projectURL),
		chromedp.WaitVisible("#audios"),
		chromedp.Evaluate(`window.__sameDocument = true; document.querySelector('#audios tbody tr').dataset.state`, &initial),
		shoot(t, shots, "project-processing"),
		waitJS(`document.querySelector('#audios tbody tr').dataset.state === 'processed'`, 90*time.Second),
		chromedp.Evaluate(`window.__sameDocument === true && document.querySelector('#audios tbody tr [data-field="state"]').textContent === 'Processed'`, new(bool)),
	)
	var same bool
	browse(t, ctx, "no reload", chromedp.Evaluate(`window.__sameDocument === true`, &same))
	if initial != "unprocessed" || !same {
		t.Errorf("row started %q and the page was reloaded: %v; want unprocessed, updated in place", initial, !same)
	}
	var xss any
	browse(t, ctx, "inert script title",
		chromedp.Text(`#audios tbody tr a`, &text),
		chromedp.Evaluate(`window.__xss === undefined ? null : window.__xss`, &xss),
		shoot(t, shots, "project"),
	)
	if xss != nil || !strings.Contains(text, "<script>window.__xss = 1</script>") {
		t.Errorf("script title: window.__xss = %v, row text %q; want inert, shown as text", xss, text)
	}

	// The audio page plays the audio: currentTime advances.
	var src string
	browse(t, ctx, "play audio",
		chromedp.Click(`#audios tbody tr a`),
		chromedp.WaitVisible("#np .np-play"),
		chromedp.Evaluate(`window.__xss === undefined`, &same),
		chromedp.Text("#audio-title", &text),
		chromedp.Evaluate(`(async () => { const a = document.querySelector('#player'); a.muted = true; await a.play(); return a.currentSrc; })()`, &src, awaitPromise),
		waitJS(`document.querySelector('#player').currentTime > 1`, 30*time.Second),
		chromedp.Evaluate(`document.querySelector('#player').pause(); 0`, nil),
		chromedp.WaitVisible("#url-mp3"),
		chromedp.Text("#spoken", &preview),
		shoot(t, shots, "audio"),
	)
	if !same || !strings.HasPrefix(text, "<script>") {
		t.Errorf("audio page title %q; script ran: %v", text, !same)
	}
	if !strings.Contains(preview, "three point five million dollars") {
		t.Errorf("text as read does not show the normalised text: %q", preview)
	}
	t.Logf("player source: %s", src)

	// Short external IDs are not broken across lines.
	var oneLine bool
	browse(t, ctx, "external ID on one line",
		chromedp.Navigate(projectURL),
		chromedp.WaitVisible("#audios"),
		chromedp.Evaluate(oneLineJS(`#audios code.ext-id`), &oneLine),
	)
	if !oneLine {
		t.Error("an external ID wraps across lines at 1280 px")
	}

	// Phone-sized screenshots of the project and audio pages.
	browse(t, ctx, "phone",
		chromedp.Navigate(projectURL),
		chromedp.WaitVisible("#audios"),
		chromedp.Click(`#audios tbody tr a`),
		chromedp.WaitVisible("#np .np-play"),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Reload(),
		chromedp.WaitVisible("#np .np-play"),
		shoot(t, shots, "audio-phone"),
		chromedp.Navigate(projectURL),
		chromedp.WaitVisible("#audios"),
		shoot(t, shots, "project-phone"),
		chromedp.Navigate(s.base+"/projects"),
		chromedp.WaitVisible("#projects"),
		// The "Title" and "Body" labels of the voices stay whole.
		chromedp.Evaluate(oneLineJS(`#projects .voice-role`), &oneLine),
		shoot(t, shots, "projects-phone"),
		chromedp.EmulateViewport(1280, 900),
	)
	if !oneLine {
		t.Error("on a phone the voice labels of the projects list break across lines")
	}

	// API keys: create one (shown once), use it, revoke it, see the API refuse it.
	var key, prefix string
	browse(t, ctx, "create key",
		chromedp.Navigate(s.base+"/keys"),
		chromedp.Submit("#new-key-form"),
		chromedp.WaitVisible("#new-key"),
		chromedp.Value("#new-key", &key),
		shoot(t, shots, "keys"),
	)
	if !strings.HasPrefix(key, "nk_") {
		t.Fatalf("new key %q", key)
	}
	prefix = key[:11]
	if got := apiStatus(t, s.base, key); got != 200 {
		t.Fatalf("API with the new key: %d, want 200", got)
	}
	// Reloading the page that showed the key neither shows it again nor
	// makes another key.
	var rows, rowsBefore int
	browse(t, ctx, "reload keys",
		chromedp.Evaluate(`document.querySelectorAll('#keys tbody tr').length`, &rowsBefore),
		chromedp.Reload(),
		chromedp.WaitVisible("#keys"),
		chromedp.Evaluate(`document.querySelector('#new-key') === null`, &same),
		chromedp.Evaluate(`document.querySelectorAll('#keys tbody tr').length`, &rows),
	)
	if !same || rows != rowsBefore {
		t.Errorf("after a reload: key shown again %v, %d keys before and %d after", !same, rowsBefore, rows)
	}

	// Metadata made with the API survives an edit of the title in the form.
	projectID := projectURL[strings.LastIndex(projectURL, "/")+1:]
	meta := map[string]string{"a: b": "c", "multi": "l1\nl2", " sp ": " v "}
	status, raw := s.call(t, "POST", "/api/v3/projects/"+projectID+"/audio", map[string]any{
		"api_key": key, "title": "Metadata", "body": "Short.", "metadata": meta})
	if status != 200 {
		t.Fatalf("create audio with metadata: %d %s", status, raw)
	}
	withMeta := mustJSON[audioOut](t, string(raw))
	audioPath := fmt.Sprintf("%s/audios/%d", projectURL, withMeta.ID)
	browse(t, ctx, "edit title only",
		chromedp.Navigate(audioPath+"/edit"),
		chromedp.WaitVisible("#audio-form"),
		chromedp.SetValue("#a-title", "Metadata, edited"),
		shoot(t, shots, "audio-edit"),
		chromedp.Submit("#audio-form"),
		chromedp.WaitVisible("#audio-title"),
		chromedp.Text("#audio-title", &text),
	)
	status, raw = s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%s/audio/%d?api_key=%s", projectID, withMeta.ID, key), nil)
	if got := mustJSON[audioOut](t, string(raw)); status != 200 || text != "Metadata, edited" || fmt.Sprint(got.Metadata) != fmt.Sprint(meta) {
		t.Errorf("after editing the title in the browser: %d, title %q, metadata %q; want metadata %q", status, text, got.Metadata, meta)
	}

	// Polling stops when an audio is deleted while its row or page waits.
	var long strings.Builder
	for i := range 80 {
		fmt.Fprintf(&long, "Paragraph %d tells how the %d rooms of the old library will hold %d books by %d.\n\n", i+1, i+2, 1000+i*37, 2030+i)
	}
	pendingAudio := func(title string) int64 {
		status, raw := s.call(t, "POST", "/api/v3/projects/"+projectID+"/audio", map[string]any{
			"api_key": key, "title": title, "body": long.String()})
		if status != 200 {
			t.Fatalf("create %s: %d %s", title, status, raw)
		}
		return mustJSON[audioOut](t, string(raw)).ID
	}
	deleteAudio := func(id int64) {
		if status, raw := s.call(t, "DELETE", fmt.Sprintf("/api/v3/projects/%s/audio/%d", projectID, id), map[string]any{"api_key": key}); status != 200 {
			t.Fatalf("delete audio %d: %d %s", id, status, raw)
		}
	}
	rowGone, pageGone := pendingAudio("Row to delete"), pendingAudio("Page to delete")
	countFetches := chromedp.Evaluate(`window.__fetches = 0; const f = window.fetch; window.fetch = function () { window.__fetches++; return f.apply(this, arguments); }; 0`, nil)
	var fetches int
	browse(t, ctx, "row of a deleted audio",
		chromedp.Navigate(projectURL),
		chromedp.WaitVisible(fmt.Sprintf(`tr[data-audio-id="%d"][data-state="unprocessed"]`, rowGone)),
		countFetches,
		chromedp.ActionFunc(func(context.Context) error { deleteAudio(rowGone); return nil }),
		waitJS(fmt.Sprintf(`document.querySelector('tr[data-audio-id="%d"]').dataset.state === 'deleted'`, rowGone), 20*time.Second),
		chromedp.Text(fmt.Sprintf(`tr[data-audio-id="%d"] [data-field="state"]`, rowGone), &text),
	)
	if text != "Deleted" {
		t.Errorf("deleted row's state %q, want Deleted", text)
	}
	browse(t, ctx, "page of a deleted audio",
		chromedp.Navigate(fmt.Sprintf("%s/audios/%d", projectURL, pageGone)),
		chromedp.WaitVisible("#pending"),
		countFetches,
		chromedp.ActionFunc(func(context.Context) error { deleteAudio(pageGone); return nil }),
		waitJS(`document.querySelector('#pending').dataset.state === 'deleted'`, 20*time.Second),
		chromedp.Evaluate(`window.__fetches`, &fetches),
		chromedp.Sleep(4*time.Second),
		chromedp.Evaluate(`window.__fetches`, &rows),
		chromedp.Text("#pending", &text),
	)
	if rows != fetches || !strings.Contains(text, "deleted") {
		t.Errorf("deleted audio's page: %q, %d status requests after it said so; want deleted, none", text, rows-fetches)
	}

	// Revoking asks first, naming the key.
	var label string
	browse(t, ctx, "revoke key",
		chromedp.Navigate(s.base+"/keys"),
		chromedp.WaitVisible(fmt.Sprintf(`tr[data-prefix=%q]`, prefix)),
		chromedp.Evaluate(`document.querySelector('#new-key') === null`, &same),
		chromedp.AttributeValue(fmt.Sprintf(`tr[data-prefix=%q] a`, prefix), "aria-label", &label, nil),
		chromedp.Click(fmt.Sprintf(`tr[data-prefix=%q] a`, prefix)),
		chromedp.WaitVisible("#revoke-form"),
		shoot(t, shots, "key-revoke"),
		chromedp.Submit("#revoke-form"),
		chromedp.WaitVisible(".flash"),
		chromedp.Text(fmt.Sprintf(`tr[data-prefix=%q]`, prefix), &text),
	)
	if label != "Revoke key "+prefix {
		t.Errorf("revoke button's name %q, want %q", label, "Revoke key "+prefix)
	}
	if !same {
		t.Error("the keys page shows a key again after it was created")
	}
	if !strings.Contains(text, "Revoked") {
		t.Errorf("revoked key row: %q", text)
	}
	if got := apiStatus(t, s.base, key); got != 401 {
		t.Errorf("API with the revoked key: %d, want 401", got)
	}

	// A form posted without its CSRF token is refused.
	browse(t, ctx, "csrf",
		chromedp.Evaluate(`document.querySelector('#new-key-form input[name=csrf_token]').remove(); 0`, nil),
		chromedp.Submit("#new-key-form"),
		chromedp.WaitVisible("#error-title"),
		chromedp.Text("main", &text),
		shoot(t, shots, "csrf-refused"),
	)
	if !strings.Contains(strings.ToLower(text), "error 403") || !strings.Contains(text, "Request refused") {
		t.Errorf("post without CSRF token: page %q", text)
	}

	// The feeds form's "full text" checkbox sits at the start of its
	// label's line, the label's words beside it, on a laptop and a phone.
	sources := fmt.Sprintf("%s/projects/%d/sources", s.base, wire.ID)
	var laptopBeside, phoneBeside bool
	browse(t, ctx, "feeds form",
		chromedp.Navigate(sources),
		chromedp.WaitVisible("#source-form"),
		chromedp.Evaluate(besideLabelJS(`#source-form input[name=full_text]`), &laptopBeside),
		shoot(t, shots, "feeds"),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Reload(),
		chromedp.WaitVisible("#source-form"),
		chromedp.Evaluate(besideLabelJS(`#source-form input[name=full_text]`), &phoneBeside),
		shoot(t, shots, "feeds-phone"),
		chromedp.EmulateViewport(1280, 900),
	)
	if !laptopBeside || !phoneBeside {
		t.Errorf("the feeds form's full-text checkbox is not beside its label (laptop %t, phone %t)", laptopBeside, phoneBeside)
	}

	// Sign out: the dashboard sends the browser back to sign-in.
	browse(t, ctx, "sign out",
		chromedp.Navigate(s.base+"/projects"),
		chromedp.Click(`form[action="/signout"] button`),
		chromedp.WaitVisible("#signin-form"),
		chromedp.Navigate(projectURL),
		chromedp.WaitVisible("#signin-form"),
		chromedp.Location(&loc),
	)
	if !strings.Contains(loc, "/signin") {
		t.Errorf("signed-out project page went to %s", loc)
	}
	t.Logf("browser test took %s; screenshots in %s", time.Since(start).Round(time.Millisecond), shots)
}

// oneLineJS is an expression that is true if the text of every element
// that selector matches lies on one line.
func oneLineJS(selector string) string {
	return fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).every(e => {
		const r = document.createRange(); r.selectNodeContents(e);
		return new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top))).size === 1;
	}) && document.querySelectorAll(%q).length > 0`, selector, selector)
}

// besideLabelJS is an expression that is true if the checkbox that
// selector matches starts its label's box, and the label's first words
// follow it on the same line.
func besideLabelJS(selector string) string {
	return fmt.Sprintf(`(() => {
		const box = document.querySelector(%q), label = box && box.closest('label');
		if (!label) return false;
		const b = box.getBoundingClientRect(), l = label.getBoundingClientRect();
		const r = document.createRange(); r.setStartAfter(box); r.setEnd(label, label.childNodes.length);
		const words = Array.from(r.getClientRects()).filter(x => x.width > 0)[0];
		return !!words && b.left - l.left < 2 && words.left >= b.right && words.top < b.bottom && words.bottom > b.top;
	})()`, selector)
}

// awaitPromise makes Evaluate wait for a returned promise.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams {
	return p.WithAwaitPromise(true)
}
