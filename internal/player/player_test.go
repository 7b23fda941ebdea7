package player_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/listens"
	"github.com/narrator/narrator/internal/player"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// testBundle is the player on a real SQLite store, served over loopback.
// Its listening events are counted by a listens.Counter whose interval
// never comes in a test: they reach the store only when it closes.
type testBundle struct {
	store   *sqlite.Store
	writes  *countingStore
	listens *listens.Counter
	srv     *httptest.Server
	project *narrator.Project
	now     time.Time
}

// countingStore counts the writes of listening counts.
type countingStore struct {
	*sqlite.Store
	n atomic.Int64
}

func (s *countingStore) RecordListens(ctx context.Context, tallies []narrator.ListenTally) error {
	s.n.Add(1)
	return s.Store.RecordListens(ctx, tallies)
}

// perClient is the bundle's budget of listening events per client.
const perClient = 40

func setup(t testing.TB) *testBundle {
	t.Helper()
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	b := &testBundle{store: st, writes: &countingStore{Store: st}, now: time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)}
	b.listens = listens.New(listens.Config{Store: b.writes, Interval: 24 * time.Hour, PerClient: perClient,
		Now: func() time.Time { return b.now }})
	t.Cleanup(b.listens.Close)
	h, err := player.New(player.Deps{
		Store:       st,
		Listens:     b.listens,
		ClientKey:   func(r *http.Request) string { return r.Header.Get("X-Test-Client") },
		MediaURL:    func(key string) string { return "https://media.test/media/" + key },
		MediaOrigin: "https://media.test",
		Now:         func() time.Time { return b.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	b.srv = httptest.NewServer(h)
	t.Cleanup(b.srv.Close)
	b.project = b.newProject(t)
	return b
}

func (b *testBundle) newProject(t testing.TB) *narrator.Project {
	t.Helper()
	acct := &narrator.Account{Name: "Acme"}
	if err := b.store.CreateAccount(t.Context(), acct); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: acct.ID, Title: "Daily", Type: narrator.ProjectTypeAPI,
		Language: "en_US", TitleVoice: "Richard", BodyVoice: "Sally"}
	if err := b.store.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// audio creates an audio of the bundle's project.
func (b *testBundle) audio(t testing.TB, externalID, articleURL string) *narrator.Audio {
	t.Helper()
	a := &narrator.Audio{ProjectID: b.project.ID, ExternalID: externalID, Title: "Council approves <library>",
		Body: "The council voted.", ArticleURL: articleURL}
	if _, err := b.store.CreateAudio(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

// finish makes an audio processed with media under token.
func (b *testBundle) finish(t testing.TB, a *narrator.Audio, token string) {
	t.Helper()
	keys := map[string]string{
		narrator.ContentTypeMP3:  fmt.Sprintf("%d/%s/audio.mp3", a.ID, token),
		narrator.ContentTypeM3U8: fmt.Sprintf("%d/%s/audio.m3u8", a.ID, token),
	}
	r := narrator.Rendering{Keys: keys, Duration: 83500 * time.Millisecond,
		Bytes: map[string]int64{narrator.ContentTypeMP3: 1000, narrator.ContentTypeM3U8: 100}}
	if err := b.store.FinishAudio(t.Context(), a.ID, a.Revision, r); err != nil {
		t.Fatal(err)
	}
}

// signedProject makes a project whose embeds must be signed, with the secret secret, holding
// one processed audio, "paid", with media under "t-paid". It returns the project, the audio
// and the signing secret.
func (b *testBundle) signedProject(t testing.TB, secret string) (*narrator.Project, *narrator.Audio, string) {
	t.Helper()
	signed := b.newProject(t)
	paid := &narrator.Audio{ProjectID: signed.ID, ExternalID: "paid", Title: "Members only", Body: "Secret text."}
	if _, err := b.store.CreateAudio(t.Context(), paid); err != nil {
		t.Fatal(err)
	}
	b.finish(t, paid, "t-paid")
	access, err := b.store.RotateEmbedSecret(t.Context(), signed.ID, secret)
	if err != nil {
		t.Fatal(err)
	}
	access.Mode = narrator.AccessSigned
	if err := b.store.SetProjectAccess(t.Context(), &access); err != nil {
		t.Fatal(err)
	}
	return signed, paid, access.SigningSecret
}

type response struct {
	*http.Response
	body string
}

func (b *testBundle) do(t *testing.T, method, path, contentType, body string) response {
	t.Helper()
	return b.doAs(t, "", method, path, contentType, body)
}

// doAs sends a request as the client named client.
func (b *testBundle) doAs(t *testing.T, client, method, path, contentType, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, b.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test-Client", client)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return send(t, req)
}

// send sends req and returns its answer, read whole.
func send(t *testing.T, req *http.Request) response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res, string(raw)}
}

func (b *testBundle) get(t *testing.T, path string) response {
	t.Helper()
	return b.do(t, "GET", path, "", "")
}

// wantFramable fails unless a response may be framed by any site and
// loads nothing but its own files and the media.
func wantFramable(t *testing.T, res response) {
	t.Helper()
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors *", "default-src 'none'", "script-src 'self';", "media-src 'self' https://media.test;", "connect-src 'self' https://media.test;"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if xfo := res.Header.Get("X-Frame-Options"); xfo != "" {
		t.Errorf("X-Frame-Options %q forbids framing", xfo)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.audio(t, "post-42", "https://news.example/2026/library")
	b.finish(t, a, "tok1")
	// An audio whose external ID is the other's audio ID.
	other := b.audio(t, fmt.Sprint(a.ID), "")
	b.finish(t, other, "tok2")

	for _, c := range []struct {
		name, query, token string
	}{
		{"external id", "external_id=post-42", "tok1"},
		{"article url", "url=" + url.QueryEscape("https://news.example/2026/library"), "tok1"},
		{"article url with fragment", "url=" + url.QueryEscape("https://news.example/2026/library#comments"), "tok1"},
		{"external id never an audio id", "external_id=" + fmt.Sprint(a.ID), "tok2"},
		{"external id wins over url", "external_id=" + fmt.Sprint(a.ID) + "&url=" + url.QueryEscape("https://news.example/2026/library"), "tok2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := b.get(t, fmt.Sprintf("/embed/%d?%s", b.project.ID, c.query))
			if res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, res.body)
			}
			wantFramable(t, res)
			for _, want := range []string{
				`src="https://media.test/media/`, "/" + c.token + "/audio.mp3",
				`data-hls="https://media.test/media/`, "/" + c.token + "/audio.m3u8",
				`data-transcript="https://media.test/media/`, "/" + c.token + "/transcript.json",
				`data-events="/embed/events"`, `data-duration="83.5"`, "1:23",
				"<title>Council approves &lt;library&gt;</title>",
				`<script src="/embed/player.js" defer></script>`,
			} {
				if !strings.Contains(res.body, want) {
					t.Errorf("page lacks %q:\n%s", want, res.body)
				}
			}
		})
	}
}

// TestPageArtwork: the lock screen's image is the article's, from the
// article's own origin only, and the page's CSP lets the browser fetch it.
func TestPageArtwork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct{ id, image, artwork, imgSrc string }{
		{"own", "https://news.example/wp-content/uploads/cover.jpg", `data-artwork="https://news.example/wp-content/uploads/cover.jpg"`,
			"img-src 'self' data: https://news.example;"},
		{"third-party", "https://cdn.example/cover.jpg", `data-artwork=""`, "img-src 'self' data:;"},
		{"none", "", `data-artwork=""`, "img-src 'self' data:;"},
	} {
		a := &narrator.Audio{ProjectID: b.project.ID, ExternalID: c.id, Title: "Library", Body: "The council voted.",
			ArticleURL: "https://news.example/2026/library", Metadata: map[string]string{narrator.MetadataImage: c.image}}
		if _, err := b.store.CreateAudio(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		b.finish(t, a, "t-"+c.id)
		res := b.get(t, fmt.Sprintf("/embed/%d?external_id=%s", b.project.ID, c.id))
		if res.StatusCode != 200 || !strings.Contains(res.body, c.artwork) {
			t.Errorf("%s image: %d, page lacks %s:\n%s", c.id, res.StatusCode, c.artwork, res.body)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, c.imgSrc) {
			t.Errorf("%s image: Content-Security-Policy %q lacks %q", c.id, csp, c.imgSrc)
		}
	}
}

func TestPageStates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pending := b.audio(t, "pending", "")
	failed := b.audio(t, "failed", "")
	if err := b.store.FailAudio(t.Context(), failed.ID, failed.Revision, "engine gave up"); err != nil {
		t.Fatal(err)
	}
	gone := b.audio(t, "gone", "")
	b.finish(t, gone, "tokg")
	if _, err := b.store.DeleteAudio(t.Context(), b.project.ID, "gone"); err != nil {
		t.Fatal(err)
	}
	pid := b.project.ID
	for _, c := range []struct {
		name, path string
		status     int
		want       string
	}{
		{"being prepared", fmt.Sprintf("/embed/%d?external_id=pending", pid), 200, "being prepared"},
		{"failed", fmt.Sprintf("/embed/%d?external_id=failed", pid), 200, "could not be prepared"},
		{"deleted", fmt.Sprintf("/embed/%d?external_id=gone", pid), 404, "no audio for this article"},
		{"unknown external id", fmt.Sprintf("/embed/%d?external_id=nope", pid), 404, "no audio for this article"},
		{"unknown url", fmt.Sprintf("/embed/%d?url=https%%3A%%2F%%2Fx.test%%2F", pid), 404, "no audio for this article"},
		{"unknown project", "/embed/99999?external_id=pending", 404, "no audio for this article"},
		{"project not a number", "/embed/abc?external_id=pending", 404, "no audio for this article"},
		{"nothing to find by", fmt.Sprintf("/embed/%d", pid), 400, "Give the audio&#39;s external_id or the article&#39;s url."},
		{"url not http", fmt.Sprintf("/embed/%d?url=javascript%%3Aalert(1)", pid), 400, "absolute http or https URL"},
		{"external id too long", fmt.Sprintf("/embed/%d?external_id=%s", pid, strings.Repeat("x", 256)), 400, "at most 255"},
		{"unknown path", "/embed/1/2/3", 404, "no player here"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := b.get(t, c.path)
			if res.StatusCode != c.status || !strings.Contains(res.body, c.want) {
				t.Errorf("status %d, want %d with %q:\n%s", res.StatusCode, c.status, c.want, res.body)
			}
			wantFramable(t, res)
			if strings.Contains(res.body, "<audio") {
				t.Errorf("a page without a playable audio has a player:\n%s", res.body)
			}
			if strings.Contains(res.body, "Council approves") {
				t.Errorf("a page without a playable audio tells its article's title:\n%s", res.body)
			}
		})
	}
	res := b.get(t, fmt.Sprintf("/embed/%d?external_id=pending", pid))
	statusURL := fmt.Sprintf("/embed/%d/status?external_id=pending", pid)
	if !strings.Contains(res.body, `data-status-url="`+statusURL+`"`) {
		t.Errorf("pending page does not name its status URL %s:\n%s", statusURL, res.body)
	}
	status := func(path string) (int, string) {
		res := b.get(t, path)
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		return res.StatusCode, strings.TrimSpace(res.body)
	}
	if code, body := status(statusURL); code != 200 || body != `{"state":"unprocessed"}` {
		t.Errorf("status while pending: %d %s", code, body)
	}
	// Once its first segment is out, the waiting player gets the live
	// stream, as a growing MP3.
	if ok, err := b.store.LeaseSynthesis(t.Context(), pending.ID, pending.Revision, "h", time.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("lease = %v, %v", ok, err)
	}
	if ok, err := b.store.ReportSynthesis(t.Context(), pending.ID, "h", narrator.SynthesisProgress{Revision: pending.Revision,
		RenderProgress: narrator.RenderProgress{UnitsDone: 2, UnitsTotal: 9, LiveKey: "tokp/live.m3u8"}, StartedAt: time.Now()}); err != nil || !ok {
		t.Fatalf("report = %v, %v", ok, err)
	}
	if code, body := status(statusURL); code != 200 || body != `{"state":"unprocessed","live_mp3_url":"https://media.test/media/tokp/live.mp3"}` {
		t.Errorf("status while live: %d %s", code, body)
	}
	b.finish(t, pending, "tokp")
	if code, body := status(statusURL); code != 200 || body != `{"state":"processed"}` {
		t.Errorf("status once processed: %d %s", code, body)
	}
	if res := b.get(t, fmt.Sprintf("/embed/%d?external_id=pending", pid)); !strings.Contains(res.body, "/tokp/audio.mp3") {
		t.Errorf("page once processed has no player:\n%s", res.body)
	}
	if code, body := status(fmt.Sprintf("/embed/%d/status?external_id=gone", pid)); code != 404 || body != `{"state":"not_found"}` {
		t.Errorf("status of a deleted audio: %d %s", code, body)
	}
	if code, body := status("/embed/abc/status?external_id=pending"); code != 404 || body != `{"state":"not_found"}` {
		t.Errorf("status in a project that cannot exist: %d %s", code, body)
	}
	if code, body := status(fmt.Sprintf("/embed/%d/status", pid)); code != 400 || !strings.Contains(body, "external_id") {
		t.Errorf("status without a lookup: %d %s", code, body)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.audio(t, "a", "")
	b.finish(t, a, "tok")
	gone := b.audio(t, "gone", "")
	if _, err := b.store.DeleteAudio(t.Context(), b.project.ID, "gone"); err != nil {
		t.Fatal(err)
	}
	otherProject := b.newProject(t)
	ok := func(event string) string {
		return fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":%q}`, b.project.ID, a.ID, event)
	}
	for _, c := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"json", "application/json", ok("load"), 204},
		{"beacon", "text/plain;charset=UTF-8", ok("play"), 204},
		{"beacon again", "text/plain;charset=UTF-8", ok("play"), 204},
		{"progress", "application/json", ok("progress_25"), 204},
		{"no content type", "", ok("play"), 400},
		{"form", "application/x-www-form-urlencoded", "project_id=1&audio_id=1&event=play", 400},
		{"not json", "application/json", "play!", 400},
		{"empty", "application/json", "", 400},
		{"array", "application/json", "[" + ok("play") + "]", 400},
		{"two objects", "application/json", ok("play") + ok("play"), 400},
		{"unknown field", "application/json", fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play","ip":"1.2.3.4"}`, b.project.ID, a.ID), 400},
		{"unknown event", "application/json", ok("pause"), 400},
		{"missing audio", "application/json", fmt.Sprintf(`{"project_id":%d,"event":"play"}`, b.project.ID), 400},
		{"string id", "application/json", fmt.Sprintf(`{"project_id":"%d","audio_id":%d,"event":"play"}`, b.project.ID, a.ID), 400},
		{"negative id", "application/json", fmt.Sprintf(`{"project_id":%d,"audio_id":-1,"event":"play"}`, b.project.ID), 400},
		{"too large", "application/json", fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play"}`, b.project.ID, a.ID) + strings.Repeat(" ", 1100), 413},
		// The same answer whatever the IDs: no oracle of which pairs
		// exist. They are dropped when the counts are written.
		{"unknown audio", "application/json", fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play"}`, b.project.ID, a.ID+100), 204},
		{"deleted audio", "application/json", fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play"}`, b.project.ID, gone.ID), 204},
		{"audio of another project", "application/json", fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play"}`, otherProject.ID, a.ID), 204},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := b.do(t, "POST", "/embed/events", c.contentType, c.body)
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, c.status, res.body)
			}
			if c.status >= 400 && (!strings.HasPrefix(res.body, `{"code":`) || res.Header.Get("Content-Type") != "application/json") {
				t.Errorf("error body %q (%s), want the v3 error JSON", res.body, res.Header.Get("Content-Type"))
			}
			if c.status == 204 && res.body != "" {
				t.Errorf("204 with body %q", res.body)
			}
		})
	}
	// Nothing was written on the request path; closing writes all the
	// counts in one batch.
	if n := b.writes.n.Load(); n != 0 {
		t.Errorf("%d writes while answering events, want none", n)
	}
	b.listens.Close()
	if n := b.writes.n.Load(); n != 1 {
		t.Errorf("%d writes at close, want 1", n)
	}
	got, err := b.store.AudioListens(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (narrator.ListenCounts{Loads: 1, Plays: 2, Progress25: 1}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	pl, err := b.store.ProjectListens(t.Context(), b.project.ID, b.now)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Days) != 1 || !pl.Days[0].Day.Equal(narrator.ListenDay(b.now)) {
		t.Errorf("events counted on %+v, want the clock's day only", pl.Days)
	}
	if res := b.get(t, "/embed/events"); res.StatusCode != 404 {
		t.Errorf("GET /embed/events: %d, want 404", res.StatusCode)
	}
	for _, other := range []int64{gone.ID, a.ID + 100} {
		if c, err := b.store.AudioListens(t.Context(), other); err != nil || c != (narrator.ListenCounts{}) {
			t.Errorf("audio %d counted %+v (%v), want nothing", other, c, err)
		}
	}
}

// TestEventsPerClient floods one audio with "complete" events from one
// client: one counts, and past its budget the client gets 429 while
// another client is still heard.
func TestEventsPerClient(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.audio(t, "a", "")
	b.finish(t, a, "tok")
	body := fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"complete"}`, b.project.ID, a.ID)
	for i := range perClient {
		if res := b.doAs(t, "10.0.0.1", "POST", "/embed/events", "application/json", body); res.StatusCode != 204 {
			t.Fatalf("event %d: status %d, want 204: %s", i, res.StatusCode, res.body)
		}
	}
	res := b.doAs(t, "10.0.0.1", "POST", "/embed/events", "application/json", body)
	if res.StatusCode != 429 || !strings.Contains(res.body, `"code":60`) || !strings.Contains(res.body, "too many listening events") {
		t.Errorf("past the budget: %d %s, want 429 with the v3 error JSON", res.StatusCode, res.body)
	}
	if res := b.doAs(t, "10.0.0.2", "POST", "/embed/events", "application/json", body); res.StatusCode != 204 {
		t.Errorf("another client: %d, want 204", res.StatusCode)
	}
	b.listens.Close()
	got, err := b.store.AudioListens(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (narrator.ListenCounts{Completes: 2}); got != want {
		t.Errorf("counts %+v, want %+v: one complete per client", got, want)
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct {
		path, contentType, want string
	}{
		{"/embed.js", "text/javascript; charset=utf-8", "document.currentScript"},
		{"/embed/player.js", "text/javascript; charset=utf-8", "np-controls"},
		{"/embed/player.css", "text/css; charset=utf-8", ".np-controls"},
	} {
		res := b.get(t, c.path)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != c.contentType || !strings.Contains(res.body, c.want) {
			t.Errorf("%s: %d %s, %d bytes", c.path, res.StatusCode, res.Header.Get("Content-Type"), len(res.body))
		}
		if !strings.Contains(res.Header.Get("Cache-Control"), "max-age=") {
			t.Errorf("%s: Cache-Control %q", c.path, res.Header.Get("Cache-Control"))
		}
	}
	if res := b.get(t, "/embed/nope.js"); res.StatusCode != 404 {
		t.Errorf("missing static file: %d", res.StatusCode)
	}
}

// TestMethods checks that a method a route does not support is a 405 with
// Allow, in JSON on the JSON routes, and that unknown paths stay 404.
func TestMethods(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
		json         bool
	}{
		{"POST", "/embed/1/status", 405, "GET, HEAD", true},
		{"GET", "/embed/events", 404, "", false}, // the page of a project "events"
		{"DELETE", "/embed/events", 405, "POST", true},
		{"POST", "/embed/1", 405, "GET, HEAD", false},
		{"PUT", "/embed/player.css", 405, "GET, HEAD", false},
		{"POST", "/embed/", 404, "", false},
		{"GET", "/embed/1/other", 404, "", false},
		{"POST", "/embed/1/other", 404, "", false},
	} {
		res := b.do(t, c.method, c.path, "", "")
		isJSON := strings.HasPrefix(res.Header.Get("Content-Type"), "application/json")
		if res.StatusCode != c.status || res.Header.Get("Allow") != c.allow || isJSON != c.json {
			t.Errorf("%s %s: %d, Allow %q, %s; want %d, Allow %q, JSON %v", c.method, c.path, res.StatusCode, res.Header.Get("Allow"), res.Header.Get("Content-Type"), c.status, c.allow, c.json)
		}
	}
}
