//go:build e2e

package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/narrator/narrator/internal/proctest"
)

// wpSite is a real WordPress for the plugin's end-to-end test: a copy of
// Debian's wordpress package served by `php -S` on loopback, on a throwaway
// MariaDB, installed by wp_install() (the parts tests/wordpress/run.sh
// uses). DISABLE_WP_CRON is set: the test requests wp-cron.php itself, as
// a system cron would.
type wpSite struct {
	base   string       // http://127.0.0.1:PORT
	plugin string       // integrations/wordpress in the checkout
	env    []string     // what tests/wordpress/config.php reads
	log    string       // WordPress's debug log
	admin  *http.Client // signed in as admin, with a cookie jar
	nonce  string       // the admin's REST nonce
}

// wpParts finds what the site needs, failing under NARRATOR_TEST_FULL=1
// when a part is missing.
func wpParts(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/share/wordpress/wp-settings.php"); err != nil {
		proctest.Missing(t, "WordPress", "apt-get install wordpress")
	}
	for _, p := range []string{"php", "mariadb-install-db", "mariadbd", "mariadb"} {
		proctest.NeedProgram(t, p, "apt-get install php-cli php-mysql mariadb-server")
	}
	if exec.Command("php", "-r", `exit(extension_loaded("mysqli") ? 0 : 1);`).Run() != nil {
		proctest.Missing(t, "PHP's mysqli", "apt-get install php-mysql")
	}
}

// startWordPress starts MariaDB and WordPress and installs the site with
// the plugin from the checkout activated.
func startWordPress(t *testing.T) *wpSite {
	t.Helper()
	wpParts(t)
	tmp, err := os.MkdirTemp("", "narrator-wp-") // short: MariaDB's socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	plugin, err := filepath.Abs("../../integrations/wordpress")
	if err != nil {
		t.Fatal(err)
	}
	sock := startMariaDB(t, tmp)

	// The site: a copy of WordPress (Debian's own wp-config.php reads
	// /etc/wordpress), its content folder holding the plugin's checkout.
	root := filepath.Join(tmp, "www")
	content := filepath.Join(root, "wp-content")
	mustRun(t, "", nil, "cp", "-a", "/usr/share/wordpress", root)
	for _, p := range []string{".htaccess", "wp-config.php", "wp-content"} {
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf("<?php\nrequire %q;\nrequire_once ABSPATH . 'wp-settings.php';\n", filepath.Join(plugin, "tests/wordpress/config.php"))
	for _, err := range []error{
		os.WriteFile(filepath.Join(root, "wp-config.php"), []byte(config), 0o644),
		os.MkdirAll(filepath.Join(content, "plugins"), 0o755),
		os.MkdirAll(filepath.Join(content, "uploads"), 0o755),
		os.Symlink("/usr/share/wordpress/wp-content/themes", filepath.Join(content, "themes")),
		os.Symlink(plugin, filepath.Join(content, "plugins", "narrator")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	w := &wpSite{base: "http://" + addr, plugin: plugin, log: filepath.Join(tmp, "debug.log")}
	w.env = append(os.Environ(), "NARRATOR_WP_SOCKET="+sock, "NARRATOR_WP_CONTENT="+content,
		"NARRATOR_WP_ROOT="+root+"/", "NARRATOR_WP_HOME="+w.base, "NARRATOR_WP_LOG="+w.log,
		"PHP_CLI_SERVER_WORKERS=16") // webhooks and a browser's parallel connections
	mustRun(t, plugin, w.env, "php", "tests/wordpress/install.php")

	logs := &logBuffer{}
	php := exec.Command("php", "-S", addr, "-t", root, "tests/wordpress/router.php")
	php.Dir, php.Env, php.Stdout, php.Stderr = plugin, w.env, logs, logs
	php.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its workers are stopped with it
	if err := php.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-php.Process.Pid, syscall.SIGTERM)
		php.Wait()
		if t.Failed() {
			raw, _ := os.ReadFile(w.log)
			t.Logf("php -S log:\n%s\nWordPress debug log:\n%s", lastLines(logs.String(), 40), lastLines(string(raw), 40))
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if res, err := http.Get(w.base + "/wp-login.php"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("WordPress not answering within 30 s:\n%s", logs.String())
		}
	}
	return w
}

// startMariaDB starts a MariaDB in dir, on a socket only, with the
// database and user tests/wordpress/config.php names.
func startMariaDB(t *testing.T, dir string) string {
	t.Helper()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	data, sock, init := filepath.Join(dir, "db"), filepath.Join(dir, "mysql.sock"), filepath.Join(dir, "init.sql")
	mustRun(t, "", nil, "mariadb-install-db", "--no-defaults", "--user="+me.Username, "--datadir="+data,
		"--skip-test-db", "--auth-root-authentication-method=normal")
	sql := "CREATE DATABASE IF NOT EXISTS wordpress;\nCREATE USER IF NOT EXISTS 'wp'@'localhost' IDENTIFIED BY 'wp';\nGRANT ALL ON wordpress.* TO 'wp'@'localhost';\n"
	if err := os.WriteFile(init, []byte(sql), 0o600); err != nil {
		t.Fatal(err)
	}
	db := exec.Command("mariadbd", "--no-defaults", "--user="+me.Username, "--datadir="+data, "--socket="+sock,
		"--skip-networking", "--pid-file="+filepath.Join(dir, "mysql.pid"), "--init-file="+init,
		"--innodb-buffer-pool-size=32M", "--log-error="+filepath.Join(dir, "mysql.err"))
	if err := db.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Process.Signal(syscall.SIGTERM)
		db.Wait()
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if exec.Command("mariadb", "--no-defaults", "-S", sock, "-uwp", "-pwp", "-e", "select 1", "wordpress").Run() == nil {
			return sock
		}
		if time.Now().After(deadline) {
			raw, _ := os.ReadFile(filepath.Join(dir, "mysql.err"))
			t.Fatalf("MariaDB not ready within 60 s:\n%s", raw)
		}
	}
}

// mustRun runs a command and fails the test with its output.
func mustRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// do sends a request as the admin (or anonymously with client nil) and
// returns the final status and body.
func (w *wpSite) do(t *testing.T, c *http.Client, method, path string, body io.Reader, header ...string) (int, string) {
	t.Helper()
	res, raw := send(t, c, method, w.base+path, body, header...)
	return res.StatusCode, string(raw)
}

// form posts a form as the admin and returns the final page.
func (w *wpSite) form(t *testing.T, path string, v url.Values) string {
	t.Helper()
	status, page := w.do(t, w.admin, "POST", path, strings.NewReader(v.Encode()), "Content-Type", "application/x-www-form-urlencoded")
	if status != 200 {
		t.Fatalf("POST %s: %d\n%s", path, status, lastLines(page, 20))
	}
	return page
}

// login signs the admin in through wp-login.php and fetches a REST nonce.
func (w *wpSite) login(t *testing.T) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	w.admin = &http.Client{Jar: jar}
	w.do(t, w.admin, "GET", "/wp-login.php", nil) // the test cookie
	page := w.form(t, "/wp-login.php", url.Values{"log": {"admin"}, "pwd": {"admin-password"}, "testcookie": {"1"}, "redirect_to": {w.base + "/wp-admin/"}})
	if !strings.Contains(page, "wp-admin-bar-my-account") {
		t.Fatalf("not signed in:\n%s", lastLines(page, 20))
	}
	status, nonce := w.do(t, w.admin, "GET", "/wp-admin/admin-ajax.php?action=rest-nonce", nil)
	if status != 200 || !regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(nonce) {
		t.Fatalf("REST nonce: %d %q", status, nonce)
	}
	w.nonce = nonce
}

var wpNonce = regexp.MustCompile(`name="_wpnonce" value="([0-9a-f]+)"`)

// settings saves Settings → Narrator as an admin would in the form.
func (w *wpSite) settings(t *testing.T, fields url.Values) string {
	t.Helper()
	_, page := w.do(t, w.admin, "GET", "/wp-admin/options-general.php?page=narrator", nil)
	m := wpNonce.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no nonce on the settings page:\n%s", lastLines(page, 30))
	}
	v := url.Values{"option_page": {"narrator"}, "action": {"update"}, "_wpnonce": {m[1]},
		"_wp_http_referer": {"/wp-admin/options-general.php?page=narrator"}}
	for k, vs := range fields {
		v[k] = vs
	}
	page = w.form(t, "/wp-admin/options.php", v)
	if !strings.Contains(page, "Settings saved.") {
		t.Fatalf("settings not saved:\n%s", lastLines(page, 30))
	}
	return page
}

// rest calls the WordPress REST API as the admin, as the block editor does.
func (w *wpSite) rest(t *testing.T, method, route string, body any) map[string]any {
	t.Helper()
	route, query, _ := strings.Cut(route, "?")
	path := "/?rest_route=" + url.QueryEscape(route)
	if query != "" {
		path += "&" + query
	}
	status, raw := w.do(t, w.admin, method, path, jsonBody(t, body), "Content-Type", "application/json", "X-WP-Nonce", w.nonce)
	if status != 200 && status != 201 {
		t.Fatalf("%s %s: %d %s", method, route, status, raw)
	}
	return mustJSON[map[string]any](t, raw)
}

// post creates a post through the REST API and returns its ID.
func (w *wpSite) post(t *testing.T, fields map[string]any) int {
	t.Helper()
	p := map[string]any{"title": "A post", "content": wpArticle, "status": "publish"}
	for k, v := range fields {
		p[k] = v
	}
	return int(w.rest(t, "POST", "/wp/v2/posts", p)["id"].(float64))
}

// cron requests wp-cron.php, which runs the events due, as a system cron.
func (w *wpSite) cron(t *testing.T) {
	t.Helper()
	if status, body := w.do(t, nil, "GET", "/wp-cron.php", nil); status != 200 {
		t.Fatalf("wp-cron.php: %d %s", status, body)
	}
}

// later moves the plugin's events due within the seconds given to now
// (backoffs, the minute's tick) and runs wp-cron.php: time passing,
// without the test waiting for it.
func (w *wpSite) later(t *testing.T, seconds int) {
	t.Helper()
	mustRun(t, w.plugin, w.env, "php", "tests/wordpress/advance.php", fmt.Sprint(seconds))
	w.cron(t)
}

// wpArticle is the text of the test's posts, as the block editor saves it.
const wpArticle = "<!-- wp:paragraph -->\n<p>The city council voted on Tuesday to build a new public library on Main Street.</p>\n<!-- /wp:paragraph -->\n\n" +
	"<!-- wp:paragraph -->\n<p>It will open in the spring, with a children's corner and quiet rooms for reading.</p>\n<!-- /wp:paragraph -->\n\n" +
	"<!-- wp:paragraph -->\n<p>Work starts next month.</p>\n<!-- /wp:paragraph -->"

// processedCount counts the distinct audio.processed deliveries of an
// audio that the receiver accepted.
func processedCount(rec *hookReceiver, id int64, action string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, e := range rec.events {
		if e.ID == id && e.Action == action {
			n++
		}
	}
	return n
}

// wpNarrator is the Narrator side of the test: the server (restarted once),
// the project, and a webhook receiver counting what was narrated.
type wpNarrator struct {
	s      *node
	data   string
	addr   string
	flags  []string
	key    string
	proj   int64
	rec    *hookReceiver
	prefix string // the external_id of a post is prefix + post ID
}

// audio returns an audio by external_id, or the status when there is none.
func (n *wpNarrator) audio(t *testing.T, xid string) (int, audioOut) {
	t.Helper()
	status, raw := n.s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s?api_key=%s", n.proj, xid, n.key), nil)
	if status != 200 {
		return status, audioOut{}
	}
	return status, mustJSON[audioOut](t, string(raw))
}

// publication returns an audio's publication state and publish_at.
func (n *wpNarrator) publication(t *testing.T, post int) (string, string) {
	t.Helper()
	status, raw := n.s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s/publication?api_key=%s", n.proj, n.xid(post), n.key), nil)
	if status != 200 {
		t.Fatalf("publication of post %d: %d %s", post, status, raw)
	}
	p := mustJSON[struct {
		State     string  `json:"state"`
		PublishAt *string `json:"publish_at"`
	}](t, string(raw))
	if p.PublishAt == nil {
		return p.State, ""
	}
	return p.State, *p.PublishAt
}

// site is the Narrator URL the plugin is given: localhost, so that the
// player's frame is of another site than the page (127.0.0.1), as it is
// on a publisher's site, and chromium gives it its own target.
func (n *wpNarrator) site() string { return strings.Replace(n.s.base, "127.0.0.1", "localhost", 1) }

// settings are the plugin's settings once set up, with auto-generation on
// or off.
func (n *wpNarrator) settings(auto bool) url.Values {
	v := url.Values{"narrator_settings[url]": {n.site()}, "narrator_settings[project_id]": {fmt.Sprint(n.proj)},
		"narrator_settings[post_types][]": {"post"}, "narrator_settings[placement]": {"after"}, "narrator_settings[signed]": {"1"},
		"narrator_settings[download]": {"1"}}
	if auto {
		v.Set("narrator_settings[auto]", "1")
	}
	return v
}

func (n *wpNarrator) xid(post int) string { return fmt.Sprintf("%s%d", n.prefix, post) }

// anonymous is the status a player gets for the post's audio, with the
// token given (or none).
func (n *wpNarrator) anonymous(t *testing.T, post int, token string) int {
	t.Helper()
	path := fmt.Sprintf("/embed/%d/status?external_id=%s", n.proj, n.xid(post))
	if token != "" {
		path += "&token=" + url.QueryEscape(token)
	}
	status, _ := n.s.call(t, "GET", path, nil)
	return status
}

// narratedOnce waits for a post's audio to be processed and its
// audio.processed delivery, then checks that it was made `times` times.
func (n *wpNarrator) narrated(t *testing.T, post, times int) audioOut {
	t.Helper()
	a := n.s.waitProcessed(t, n.proj, n.xid(post), n.key, 90*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for processedCount(n.rec, a.ID, "audio.processed") < times && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := processedCount(n.rec, a.ID, "audio.processed"); got != times {
		t.Errorf("post %d was narrated %d times, want %d", post, got, times)
	}
	return a
}

// TestWordPressPlugin runs the plugin in a real WordPress against a real
// Narrator: set-up through wp-admin, posts through the REST API the block
// editor uses, WP-Cron through wp-cron.php, and Narrator's state read
// through the v3 API and counted by a webhook receiver.
func TestWordPressPlugin(t *testing.T) {
	t.Parallel()
	wpParts(t)
	data, acct, proj := fixture(t)
	n := &wpNarrator{data: data, addr: freeAddr(t), key: acct.APIKey, proj: proj.ID,
		flags: []string{"--engine-standin", "20ms", "--webhooks-allow-private"}}
	n.s = startServer(t, n.data, n.addr, n.flags...)
	n.rec = &hookReceiver{events: map[string]hookEvent{}, copies: map[string]int{}}
	receiver := httptest.NewServer(n.rec)
	t.Cleanup(receiver.Close)
	status, raw := n.s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/webhooks", proj.ID),
		map[string]any{"api_key": acct.APIKey, "url": receiver.URL + "/count"})
	if status != 201 {
		t.Fatalf("create webhook: %d %s", status, raw)
	}
	n.rec.secret = mustJSON[struct {
		Secret string `json:"secret"`
	}](t, string(raw)).Secret
	w := startWordPress(t)
	w.login(t)
	// The site owner's browser: wp-admin, then a signed-in reader's pages.
	chromium := chromiumPath(t)
	admin := newBrowser(t, chromium)

	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	step("configure", func(t *testing.T) { wpConfigure(t, w, n, admin) })
	posts := map[string]int{}
	step("publish and edit", func(t *testing.T) { wpPublishEdit(t, w, n, posts) })
	step("schedule, private, password", func(t *testing.T) { wpRestricted(t, w, n, posts) })
	step("trash and delete", func(t *testing.T) { wpTrashDelete(t, w, n, posts) })
	step("bulk generation", func(t *testing.T) { wpBulk(t, w, n) })
	step("browser", func(t *testing.T) { wpBrowser(t, w, n, posts, chromium, admin) })
	// Last: the Narrator it restarts lives as long as this step.
	step("Narrator stopped while posts are published", func(t *testing.T) { wpOutage(t, w, n) })
	step("no PHP notice from the plugin", func(t *testing.T) {
		raw, _ := os.ReadFile(w.log)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, "/plugins/narrator/") {
				t.Errorf("WordPress's debug log: %s", line)
			}
		}
	})
}

// wpLoaded waits until the page holds an element that sel finds and has
// loaded whole. It asks by script, not by DOM node: once loaded, wp-admin's
// script moves the notices to the top of the page, and a node that a query
// found there is gone from under it ("Could not find node with given id"),
// or a button about to be clicked moves. A script run while the page is
// being left fails, and is run again.
func wpLoaded(sel string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		expr := fmt.Sprintf(`document.readyState === 'complete' && document.querySelector(%s) !== null`, jsString(sel))
		for {
			var ok bool
			if err := chromedp.Evaluate(expr, &ok).Do(ctx); err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("wait for %s: %w", sel, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// wpConfigure sets the plugin up in chromium as the README says: sign
// in, Settings → Narrator, URL and key, Signed access and Download, save,
// pick the project, save, Test connection.
func wpConfigure(t *testing.T, w *wpSite, n *wpNarrator, admin context.Context) {
	var html string
	browse(t, admin, "sign in", chromedp.Navigate(w.base+"/wp-login.php"),
		chromedp.WaitVisible("#user_login", chromedp.ByQuery),
		chromedp.SendKeys("#user_login", "admin", chromedp.ByQuery),
		chromedp.SendKeys("#user_pass", "admin-password", chromedp.ByQuery),
		chromedp.Click("#wp-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#wpadminbar", chromedp.ByQuery))
	browse(t, admin, "URL and key", chromedp.Navigate(w.base+"/wp-admin/options-general.php?page=narrator"),
		chromedp.WaitVisible("#narrator-url", chromedp.ByQuery),
		chromedp.SendKeys("#narrator-url", n.site(), chromedp.ByQuery),
		chromedp.SendKeys("#narrator-key", n.key, chromedp.ByQuery),
		chromedp.Click(`input[name="narrator_settings[signed]"]`, chromedp.ByQuery),
		chromedp.Click(`input[name="narrator_settings[download]"]`, chromedp.ByQuery),
		chromedp.Click("#submit", chromedp.ByQuery),
		// The notice is only on the page the form's POST leads to, so
		// what follows reads that page, not the one being left.
		wpLoaded("#setting-error-settings_updated"),
		chromedp.WaitReady(fmt.Sprintf(`select#narrator-project option[value="%d"]`, n.proj), chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.outerHTML`, &html))
	if !strings.Contains(html, "Settings saved.") || strings.Contains(html, n.key) {
		t.Errorf("after saving URL and key the page does not say Settings saved., or prints the key:\n%s", lastLines(html, 40))
	}
	project := fmt.Sprintf(`select#narrator-project option[value="%d"][selected]`, n.proj)
	browse(t, admin, "project", chromedp.SetValue("#narrator-project", fmt.Sprint(n.proj), chromedp.ByQuery),
		chromedp.Click("#submit", chromedp.ByQuery), wpLoaded(project),
		chromedp.Click("#narrator-test", chromedp.ByQuery), wpLoaded("#narrator-test-result"),
		chromedp.Evaluate(`document.documentElement.outerHTML`, &html))
	if want := fmt.Sprintf(`Connected: project "Daily" (%d).`, n.proj); !strings.Contains(html, strings.ReplaceAll(want, `"`, "&quot;")) && !strings.Contains(html, want) {
		t.Errorf("Test connection does not say %q:\n%s", want, lastLines(html, 40))
	}
	if strings.Contains(html, "notice-warning") || strings.Contains(html, n.key) {
		t.Errorf("the set-up left a warning or printed the key:\n%s", lastLines(html, 40))
	}
	status, raw := n.s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/access?api_key=%s", n.proj, n.key), nil)
	if status != 200 || !strings.Contains(string(raw), `"mode":"signed"`) || !strings.Contains(string(raw), `"draft_new_audios":true`) ||
		!strings.Contains(string(raw), `"download_button":true`) {
		t.Errorf("project access after saving: %d %s", status, raw)
	}
	status, raw = n.s.call(t, "GET", fmt.Sprintf("/api/v3/projects/%d/webhooks?api_key=%s", n.proj, n.key), nil)
	if status != 200 || !strings.Contains(string(raw), strings.ReplaceAll(w.base+"/wp-json/narrator/v1/webhook", "/", `\/`)) &&
		!strings.Contains(string(raw), w.base+"/wp-json/narrator/v1/webhook") {
		t.Errorf("the site's webhook endpoint is not the project's: %d %s", status, raw)
	}
}

var wpExternalID = regexp.MustCompile(`data-external-id="(wp-[a-z0-9]{8}-1-)([0-9]+)"`)

// wpPublishEdit publishes a post, edits its text (one resynthesis) and
// saves it without a change of text (none).
func wpPublishEdit(t *testing.T, w *wpSite, n *wpNarrator, posts map[string]int) {
	id := w.post(t, map[string]any{"title": "Library approved"})
	posts["public"] = id
	if status, _ := w.do(t, nil, "GET", fmt.Sprintf("/?p=%d", id), nil); status != 200 {
		t.Fatalf("the post's page: %d", status)
	}
	w.cron(t)
	_, page := w.do(t, nil, "GET", fmt.Sprintf("/?p=%d", id), nil)
	m := wpExternalID.FindStringSubmatch(page)
	if m == nil || m[2] != fmt.Sprint(id) {
		t.Fatalf("the public post's page has no player for post %d:\n%s", id, lastLines(page, 40))
	}
	n.prefix = m[1]
	if state, _ := n.publication(t, id); state != "published" {
		t.Errorf("a published post's audio is %s", state)
	}
	first := n.narrated(t, id, 1)

	w.rest(t, "POST", fmt.Sprintf("/wp/v2/posts/%d", id), map[string]any{"content": wpArticle + "\n\n<!-- wp:paragraph -->\n<p>The vote was unanimous.</p>\n<!-- /wp:paragraph -->"})
	w.cron(t)
	a := n.narrated(t, id, 2)
	if a.ID != first.ID {
		t.Errorf("an edit made audio %d beside %d", a.ID, first.ID)
	}
	if got := processedCount(n.rec, a.ID, "audio.updated"); got != 1 {
		t.Errorf("one edit: %d audio.updated, want 1", got)
	}
	w.rest(t, "POST", fmt.Sprintf("/wp/v2/posts/%d", id), map[string]any{"excerpt": "Only the excerpt changed."})
	w.cron(t)
	if _, a := n.audio(t, n.xid(id)); a.State != "processed" || processedCount(n.rec, a.ID, "audio.updated") != 1 {
		t.Errorf("saving without a change of text resynthesised: %+v", a)
	}
}

// wpRestricted schedules a post, makes one private and protects one with a
// password, in the signed project.
func wpRestricted(t *testing.T, w *wpSite, n *wpNarrator, posts map[string]int) {
	when := time.Now().UTC().Add(365 * 24 * time.Hour).Truncate(time.Second)
	posts["scheduled"] = w.post(t, map[string]any{"title": "Next year", "status": "future", "date_gmt": when.Format("2006-01-02T15:04:05")})
	posts["private"] = w.post(t, map[string]any{"title": "Members' briefing", "status": "private"})
	posts["password"] = w.post(t, map[string]any{"title": "Sealed letter", "password": "open sesame"})
	w.cron(t)
	for name, want := range map[string]string{"scheduled": "scheduled", "private": "published", "password": "published"} {
		state, at := n.publication(t, posts[name])
		if state != want {
			t.Errorf("%s post: audio %s, want %s", name, state, want)
		}
		if name == "scheduled" && at != when.Format(time.RFC3339) {
			t.Errorf("scheduled post: publish_at %s, want %s", at, when.Format(time.RFC3339))
		}
		n.narrated(t, posts[name], 1)
		if status := n.anonymous(t, posts[name], ""); status != http.StatusNotFound {
			t.Errorf("%s post: a player without a token finds its audio (%d)", name, status)
		}
	}
	_, page := w.do(t, nil, "GET", fmt.Sprintf("/?p=%d", posts["password"]), nil)
	if !strings.Contains(page, "post-password-form") || strings.Contains(page, "narrator-player") {
		t.Errorf("a visitor's page of the password-protected post:\n%s", lastLines(page, 30))
	}
	// The public post's page carries a token the server accepts.
	_, page = w.do(t, nil, "GET", fmt.Sprintf("/?p=%d", posts["public"]), nil)
	m := regexp.MustCompile(`data-token="([0-9]+\.[A-Za-z0-9_-]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the public post's player has no token:\n%s", lastLines(page, 30))
	}
	if status := n.anonymous(t, posts["public"], m[1]); status != 200 {
		t.Errorf("the public post's audio with its page's token: %d", status)
	}
}

// wpTrashDelete trashes the public post (its audio is taken back), then
// deletes it (its audio is deleted).
func wpTrashDelete(t *testing.T, w *wpSite, n *wpNarrator, posts map[string]int) {
	id := posts["public"]
	w.rest(t, "DELETE", fmt.Sprintf("/wp/v2/posts/%d", id), nil)
	w.cron(t)
	if state, _ := n.publication(t, id); state != "draft" {
		t.Errorf("a trashed post's audio is %s, want draft", state)
	}
	if status := n.anonymous(t, id, ""); status != http.StatusNotFound {
		t.Errorf("a trashed post's audio: %d for a visitor", status)
	}
	w.rest(t, "DELETE", fmt.Sprintf("/wp/v2/posts/%d?force=true", id), nil)
	w.cron(t)
	if status, a := n.audio(t, n.xid(id)); status != http.StatusNotFound {
		t.Errorf("a deleted post's audio: %d %+v", status, a)
	}
	delete(posts, "public")
}

// wpBulk generates the audio of 20 existing posts with the posts list's
// bulk action: sent a batch at a time, each narrated once.
func wpBulk(t *testing.T, w *wpSite, n *wpNarrator) {
	w.settings(t, n.settings(false))
	ids := make([]int, 20)
	for i := range ids {
		ids[i] = w.post(t, map[string]any{"title": fmt.Sprintf("From the archive, part %d", i+1)})
	}
	w.later(t, 120)
	for _, id := range ids {
		if status, _ := n.audio(t, n.xid(id)); status != http.StatusNotFound {
			t.Fatalf("auto-generation off, yet post %d was sent (%d)", id, status)
		}
	}
	_, page := w.do(t, w.admin, "GET", "/wp-admin/edit.php", nil)
	m := wpNonce.FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, `value="narrator_generate"`) {
		t.Fatalf("the posts list has no Generate audio action:\n%s", lastLines(page, 30))
	}
	v := url.Values{"action": {"narrator_generate"}, "_wpnonce": {m[1]}, "post_type": {"post"}}
	for _, id := range ids {
		v.Add("post[]", fmt.Sprint(id))
	}
	if _, page := w.do(t, w.admin, "GET", "/wp-admin/edit.php?"+v.Encode(), nil); !strings.Contains(page, "20 posts queued for audio") {
		t.Errorf("the bulk action's notice is missing:\n%s", lastLines(page, 30))
	}
	sent := 0
	for round := 0; sent < len(ids) && round < 20; round++ {
		w.later(t, 120) // a minute passes: the tick, and the batch it spread
		now := 0
		for _, id := range ids {
			if status, _ := n.audio(t, n.xid(id)); status == 200 {
				now++
			}
		}
		if now-sent > 10 {
			t.Errorf("%d posts sent in one minute; a batch is at most 10", now-sent)
		}
		sent = now
	}
	if sent != len(ids) {
		t.Fatalf("%d of %d posts sent", sent, len(ids))
	}
	for _, id := range ids {
		n.narrated(t, id, 1)
	}
}

var wpRowState = regexp.MustCompile(`narrator-state-([a-z]+)`)

// wpListState is a post's state in the posts list's Audio column.
func wpListState(t *testing.T, w *wpSite, id int) string {
	t.Helper()
	_, page := w.do(t, w.admin, "GET", "/wp-admin/edit.php", nil)
	_, row, ok := strings.Cut(page, fmt.Sprintf(`<tr id="post-%d"`, id))
	row, _, _ = strings.Cut(row, "</tr>")
	if m := wpRowState.FindStringSubmatch(row); ok && m != nil {
		return m[1]
	}
	t.Fatalf("post %d has no Audio column in the posts list", id)
	return ""
}

// wpOutage publishes five posts while Narrator is stopped; once it is back,
// each is narrated exactly once, and WordPress learns of it.
func wpOutage(t *testing.T, w *wpSite, n *wpNarrator) {
	w.settings(t, n.settings(true))
	n.s.stop(t, syscall.SIGTERM)
	ids := make([]int, 5)
	for i := range ids {
		ids[i] = w.post(t, map[string]any{"title": fmt.Sprintf("Published in the dark, part %d", i+1)})
	}
	w.cron(t)
	for _, id := range ids {
		if state := wpListState(t, w, id); state != "retrying" {
			t.Errorf("post %d while Narrator is down: %s, want retrying", id, state)
		}
	}
	n.s = startServer(t, n.data, n.addr, n.flags...)
	w.later(t, 3600) // the backoff's wait
	for _, id := range ids {
		n.narrated(t, id, 1)
	}
	w.later(t, 3600) // nothing is left to send again
	for _, id := range ids {
		_, a := n.audio(t, n.xid(id))
		if a.State != "processed" || processedCount(n.rec, a.ID, "audio.updated") != 0 || processedCount(n.rec, a.ID, "audio.processed") != 1 {
			t.Errorf("post %d after the outage: %+v, %d updates, %d syntheses", id, a,
				processedCount(n.rec, a.ID, "audio.updated"), processedCount(n.rec, a.ID, "audio.processed"))
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for state := wpListState(t, w, id); state != "processed"; state = wpListState(t, w, id) {
			if time.Now().After(deadline) {
				t.Fatalf("post %d is %s in the posts list, want processed", id, state)
			}
			w.later(t, 120) // the tick polls what webhooks did not bring
		}
	}
}

// wpBrowser checks the player in chromium: on a public post, reading
// along in the post's own paragraphs with the featured image on the lock
// screen; not for a visitor of a private or password-protected post; for
// a signed-in reader and a visitor who gave the password.
func wpBrowser(t *testing.T, w *wpSite, n *wpNarrator, posts map[string]int, chromium string, admin context.Context) {
	w.settings(t, n.settings(true))
	cover := w.upload(t, "cover.png", tinyPNG(t))
	public := w.post(t, map[string]any{"title": "Open to all", "featured_media": cover.ID})
	w.cron(t)
	n.narrated(t, public, 1)
	// Each visitor in a browser of their own: a tab whose player played
	// does not navigate reliably.
	const frames = `document.querySelectorAll('iframe.narrator-player, script[data-external-id]').length`
	// A signed project: every page's player carries a token.
	player := func(t *testing.T, ctx context.Context, post int) context.Context {
		t.Helper()
		browse(t, ctx, "the player's frame", waitJS(`document.querySelectorAll('iframe.narrator-player').length === 1`, 20*time.Second))
		frame := frameContext(t, ctx, "external_id="+n.xid(post)+"&token=")
		// In view first: the frame's own scrolling reaches the page late.
		browse(t, ctx, "to the player", chromedp.Evaluate(`document.querySelector('iframe.narrator-player').scrollIntoView({block: 'center'}); 0`, nil))
		clickUntil(t, ctx, frame, "iframe.narrator-player", ".np-play", frame, `!document.querySelector('#player').paused`)
		c, cancel := context.WithTimeout(frame, 30*time.Second)
		defer cancel()
		if err := chromedp.Run(c, waitJS(`document.querySelector('#player').currentTime > 0.2`, 30*time.Second)); err != nil {
			var state string
			browse(t, frame, "state", chromedp.Evaluate(`(a => JSON.stringify({paused: a.paused, t: a.currentTime, ready: a.readyState,
				network: a.networkState, error: a.error && a.error.message, src: a.currentSrc}))(document.querySelector('#player'))`, &state))
			browse(t, ctx, "screenshot", shoot(t, screenshotDir(t), "wordpress-post-player"))
			t.Fatalf("the player does not play: %v; audio %s", err, state)
		}
		return frame
	}
	t.Run("a public post has a player that reads along in the page", func(t *testing.T) {
		ctx := newBrowser(t, chromium)
		browse(t, ctx, "public post", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(fmt.Sprintf("%s/?p=%d", w.base, public)),
			waitJS(`document.querySelectorAll('.entry-content .narrator-s').length > 0`, 30*time.Second))
		frame := player(t, ctx, public)
		wpReadAlong(t, ctx, frame)
		wpLockScreen(t, w, ctx, frame, cover.SourceURL)
		// Scrolled past, the player becomes the mini-player, fixed in the
		// window; room below the post makes sure it can be scrolled past.
		browse(t, ctx, "mini-player",
			chromedp.Evaluate(`document.body.appendChild(Object.assign(document.createElement('div'), {style: 'height: 3000px'}));
				window.scrollTo(0, document.documentElement.scrollHeight); 0`, nil),
			waitJS(`document.querySelector('iframe.narrator-player').classList.contains('narrator-mini')`, 10*time.Second))
	})
	t.Run("a visitor gets no player on a private or password-protected post", func(t *testing.T) {
		ctx := newBrowser(t, chromium)
		for _, name := range []string{"private", "password"} {
			var count int
			browse(t, ctx, name+" post", chromedp.Navigate(fmt.Sprintf("%s/?p=%d", w.base, posts[name])),
				waitJS(`document.readyState === 'complete'`, 20*time.Second), chromedp.Evaluate(frames, &count))
			if count != 0 {
				t.Errorf("a visitor of the %s post gets %d player elements", name, count)
			}
		}
	})
	t.Run("a visitor who gave the password gets a player", func(t *testing.T) {
		ctx := newBrowser(t, chromium)
		id := posts["password"]
		browse(t, ctx, "password form", chromedp.Navigate(fmt.Sprintf("%s/?p=%d", w.base, id)),
			chromedp.SendKeys(fmt.Sprintf("#pwbox-%d", id), "open sesame", chromedp.ByQuery),
			chromedp.Submit(fmt.Sprintf("#pwbox-%d", id), chromedp.ByQuery),
			chromedp.WaitVisible("iframe.narrator-player", chromedp.ByQuery)) // a query outlives the navigation; a poll does not
		player(t, ctx, id)
	})
	t.Run("a signed-in reader gets a player on a private post", func(t *testing.T) {
		// The site owner's browser, signed in since the set-up.
		browse(t, admin, "private post", chromedp.Navigate(fmt.Sprintf("%s/?p=%d", w.base, posts["private"])))
		player(t, admin, posts["private"])
	})
}

// wpMedia is an uploaded file of the media library.
type wpMedia struct {
	ID        int    `json:"id"`
	SourceURL string `json:"source_url"`
}

// upload adds a file to the media library as the admin, as the block
// editor does.
func (w *wpSite) upload(t *testing.T, name string, raw []byte) wpMedia {
	t.Helper()
	status, body := w.do(t, w.admin, "POST", "/?rest_route="+url.QueryEscape("/wp/v2/media"), bytes.NewReader(raw),
		"Content-Type", "image/png", "Content-Disposition", `attachment; filename="`+name+`"`, "X-WP-Nonce", w.nonce)
	if status != 201 {
		t.Fatalf("upload %s: %d %s", name, status, body)
	}
	return mustJSON[wpMedia](t, body)
}

// tinyPNG returns a 64×64 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wpReadAlong checks the read-along in the post page while its audio
// plays: each sentence of the post is marked in its paragraph of the
// post's content, the sentence lit follows the audio within one
// sentence, the keyboard reaches "Play from here", and axe-core finds
// nothing wrong with the marked page or the player.
func wpReadAlong(t *testing.T, ctx, frame context.Context) {
	var tr transcriptJSON
	browse(t, frame, "transcript", chromedp.Evaluate(`fetch(document.querySelector('.np').dataset.transcript).then(r => r.json())`, &tr, awaitPromise))
	paragraph := map[int]int{} // sentence → paragraph of wpArticle
	for i, sen := range tr.Sentences {
		for j, p := range []string{"The city council voted", "It will open", "Work starts"} {
			if strings.HasPrefix(sen.Text, p) {
				paragraph[i] = j
			}
		}
	}
	if len(paragraph) != 3 {
		t.Fatalf("the transcript's sentences %+v do not hold the post's three paragraphs", tr.Sentences)
	}
	var marked map[string]int
	browse(t, ctx, "marks", chromedp.Evaluate(`(() => {
		const ps = Array.from(document.querySelectorAll('.entry-content p')), m = {};
		for (const s of document.querySelectorAll('.narrator-s')) m[s.dataset.narratorS] = ps.indexOf(s.closest('p'));
		return m;
	})()`, &marked))
	for i, want := range paragraph {
		if got, ok := marked[fmt.Sprint(i)]; !ok || got != want {
			t.Errorf("sentence %d %q is marked in paragraph %d of the post's content (marked: %v), want %d", i, tr.Sentences[i].Text, got, ok, want)
		}
	}
	if len(marked) != len(paragraph) {
		t.Errorf("marked sentences %v, want only the post's %v", marked, paragraph)
	}

	const audio = `document.querySelector('#player')`
	for k := range tr.Sentences {
		if _, ok := paragraph[k]; !ok {
			continue
		}
		n := wantLitWithAudio(t, ctx, frame, audio, tr, k)
		var in int
		browse(t, ctx, "lit paragraph", chromedp.Evaluate(`Array.from(document.querySelectorAll('.entry-content p')).indexOf(document.querySelector('.narrator-on').closest('p'))`, &in))
		if want, ok := paragraph[n]; ok && in != want {
			t.Errorf("sentence %d is lit in paragraph %d, want %d", n, in, want)
		}
	}

	// The keyboard: from the title, Tab to the first paragraph's "Play
	// from here", Enter.
	browse(t, frame, "pause at the end", chromedp.Evaluate(audio+`.pause(); `+audio+`.currentTime = `+audio+`.duration - 0.2; 0`, nil),
		waitJS(audio+`.paused && !`+audio+`.seeking`, 10*time.Second))
	// A click on the title puts the start of the keyboard's path there.
	browse(t, ctx, "title", chromedp.Click("h1", chromedp.ByQuery))
	var focused string
	for range 60 {
		browse(t, ctx, "tab", chromedp.KeyEvent(kb.Tab), chromedp.Evaluate(`document.activeElement.className`, &focused))
		if focused == "narrator-go" {
			break
		}
	}
	var box struct{ W, H float64 }
	browse(t, ctx, "focused button", chromedp.Evaluate(`(r => ({W: r.width, H: r.height}))(document.activeElement.getBoundingClientRect())`, &box))
	if focused != "narrator-go" || box.W < 20 || box.H < 10 {
		t.Fatalf("Tab reaches %q (%+v), not a visible Play from here", focused, box)
	}
	axeClean(t, ctx, axeSource(t), "post page reading along, Play from here focused")
	browse(t, ctx, "enter", chromedp.KeyEvent(kb.Enter))
	var at float64
	first := tr.Sentences[indexOf(paragraph, 0)]
	browse(t, frame, "playing from the first paragraph",
		waitJS(`!`+audio+`.paused && !`+audio+`.seeking && `+audio+`.currentTime < `+fmt.Sprint(first.End), 20*time.Second),
		chromedp.Evaluate(audio+`.currentTime`, &at))
	if at < first.Start-0.1 || at > first.End {
		t.Errorf("Enter on the first paragraph's Play from here plays from %.2f s, not in %.2f–%.2f s", at, first.Start, first.End)
	}
	axeClean(t, frame, axeSource(t), "player on the post page")
}

// wpLockScreen checks the Media Session metadata (the post's title, its
// author, the site, the featured image) of the player and of the post
// page, and the player's download button (the Download setting).
func wpLockScreen(t *testing.T, w *wpSite, page, frame context.Context, image string) {
	author, _ := w.rest(t, "GET", "/wp/v2/users/me", nil)["name"].(string)
	want := struct{ Title, Artist, Album, Artwork string }{"Open to all", author, "127.0.0.1", image}
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"the player", frame}, {"the post page", page}} {
		var meta struct{ Title, Artist, Album, Artwork string }
		browse(t, c.ctx, "media session", waitJS(`!!navigator.mediaSession.metadata`, 10*time.Second),
			chromedp.Evaluate(`(m => ({Title: m.title, Artist: m.artist, Album: m.album,
				Artwork: m.artwork.length ? m.artwork[0].src : ''}))(navigator.mediaSession.metadata)`, &meta))
		if meta != want || author == "" {
			t.Errorf("the Media Session of %s shows %+v, want %+v", c.name, meta, want)
		}
	}
	var dl struct {
		Download bool
		Width    float64
		Status   int
		Type     string
	}
	browse(t, frame, "download button", chromedp.Evaluate(`(async () => {
		const a = document.querySelector('.np-download');
		if (!a) return {};
		const r = await fetch(a.href, {method: 'HEAD'});
		return {Download: a.hasAttribute('download'), Width: a.getBoundingClientRect().width, Status: r.status, Type: r.headers.get('Content-Type')};
	})()`, &dl, awaitPromise))
	if !dl.Download || dl.Width < 20 || dl.Status != 200 || dl.Type != "audio/mpeg" {
		t.Errorf("the download button: %+v, want a visible link with download to an MP3", dl)
	}
}
