//go:build e2e

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
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
	if os.Getenv("NARRATOR_TEST_FULL") == "1" {
		t.Fatal("chromium is not installed (apt-get install chromium); the browser tests cannot run")
	}
	t.Skip("chromium is not installed; set NARRATOR_TEST_FULL=1 to make this a failure")
	return ""
}

// newBrowser starts a headless chromium with a fresh profile and returns a
// context for one tab.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
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
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Run(c, actions...); err != nil {
		var loc string
		_ = chromedp.Run(ctx, chromedp.Location(&loc))
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
	req, err := http.NewRequestWithContext(t.Context(), "GET", base+"/api/v3/projects", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestDashboardInBrowser drives the dashboard in headless chromium against
// a real `narrator serve` with the real engines, as a publisher would.
func TestDashboardInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	start := time.Now()
	data := t.TempDir()
	acct := mustJSON[accountOut](t, mustCLI(t, "accounts", "create", "--data", data, "--name", "Acme News"))
	const email, password = "editor@acme.test", "correct horse battery"
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"users", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--email", email},
		func(string) string { return "" }, strings.NewReader(password+"\n"), &out, &errOut); err != nil {
		t.Fatalf("users create: %v\n%s", err, errOut.String())
	}
	if strings.Contains(out.String(), password) {
		t.Errorf("users create printed the password it was given: %s", out.String())
	}
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
		chromedp.SendKeys("#email", email),
		chromedp.SendKeys("#password", "not the password"),
		chromedp.Submit("#signin-form"),
		chromedp.WaitVisible(".alert"),
		chromedp.Text(".alert", &text),
	)
	if !strings.Contains(text, "not right") {
		t.Errorf("wrong password: alert %q", text)
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
		chromedp.WaitVisible("#player"),
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

	// Phone-sized screenshots of the project and audio pages.
	browse(t, ctx, "phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Reload(),
		chromedp.WaitVisible("#player"),
		shoot(t, shots, "audio-phone"),
		chromedp.Navigate(projectURL),
		chromedp.WaitVisible("#audios"),
		shoot(t, shots, "project-phone"),
		chromedp.EmulateViewport(1280, 900),
	)

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
	browse(t, ctx, "revoke key",
		chromedp.Navigate(s.base+"/keys"),
		chromedp.WaitVisible(fmt.Sprintf(`tr[data-prefix=%q]`, prefix)),
		chromedp.Evaluate(`document.querySelector('#new-key') === null`, &same),
		chromedp.Submit(fmt.Sprintf(`tr[data-prefix=%q] form`, prefix)),
		chromedp.WaitVisible(".flash"),
		chromedp.Text(fmt.Sprintf(`tr[data-prefix=%q]`, prefix), &text),
	)
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

// awaitPromise makes Evaluate wait for a returned promise.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams {
	return p.WithAwaitPromise(true)
}
