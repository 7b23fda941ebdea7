package player_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// visit asks path with the given Referer ("" for none).
func (b *testBundle) visit(t *testing.T, path, referer string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", b.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if referer != "" {
		req.Header.Set("Referer", referer)
	}
	return send(t, req)
}

// sameAs fails unless got is exactly the answer want: status, body and the
// headers a page or a status answer sets.
func sameAs(t *testing.T, what string, got, want response) {
	t.Helper()
	if got.StatusCode != want.StatusCode || got.body != want.body {
		t.Errorf("%s: %d %q, want the answer of a missing audio, %d %q", what, got.StatusCode, got.body, want.StatusCode, want.body)
	}
	for _, h := range []string{"Content-Type", "Content-Security-Policy", "Cache-Control", "Content-Length"} {
		if g, w := got.Header.Get(h), want.Header.Get(h); g != w {
			t.Errorf("%s: %s = %q, want %q as for a missing audio", what, h, g, w)
		}
	}
}

// TestAnonymousDrill asks every anonymous route of the player for what the
// caller may not see (drafts, audios scheduled for later, other projects'
// audios, a signed project's audio without a token, with an expired,
// forged or foreign token, and from a foreign origin) and expects the
// answer of an audio that does not exist, byte for byte.
func TestAnonymousDrill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	pub := b.audio(t, "pub", "https://news.test/pub")
	b.finish(t, pub, "t-pub")
	draft := b.audio(t, "draft", "https://news.test/draft")
	b.finish(t, draft, "t-draft")
	later := b.audio(t, "later", "")
	b.finish(t, later, "t-later")
	waiting := b.audio(t, "waiting", "") // a draft still being made
	for _, p := range []narrator.Publication{
		{AudioID: draft.ID, State: narrator.PublicationDraft},
		{AudioID: later.ID, State: narrator.PublicationScheduled, PublishAt: b.now.Add(time.Hour)},
		{AudioID: waiting.ID, State: narrator.PublicationDraft},
	} {
		if _, err := b.store.SetPublication(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	// A signed project, and one open to one origin.
	signed, paid, secret := b.signedProject(t, "nes_drill-secret")
	subject := narrator.EmbedSubject("paid", "")
	valid := narrator.SignEmbed(secret, signed.ID, subject, b.now.Add(time.Hour))
	restricted := b.newProject(t)
	local := &narrator.Audio{ProjectID: restricted.ID, ExternalID: "local", Title: "Local news", Body: "Local text."}
	if _, err := b.store.CreateAudio(ctx, local); err != nil {
		t.Fatal(err)
	}
	b.finish(t, local, "t-local")
	if err := b.store.SetProjectAccess(ctx, &narrator.ProjectAccess{ProjectID: restricted.ID, Mode: narrator.AccessPublic,
		AllowedOrigins: []string{"https://news.test"}}); err != nil {
		t.Fatal(err)
	}

	page := func(project int64, query string) string { return fmt.Sprintf("/embed/%d?%s", project, query) }
	status := func(project int64, query string) string { return fmt.Sprintf("/embed/%d/status?%s", project, query) }
	missingPage := b.visit(t, page(b.project.ID, "external_id=nothing"), "")
	missingStatus := b.visit(t, status(b.project.ID, "external_id=nothing"), "")
	if missingPage.StatusCode != http.StatusNotFound || missingStatus.StatusCode != http.StatusNotFound {
		t.Fatalf("missing audio: page %d, status %d; want 404", missingPage.StatusCode, missingStatus.StatusCode)
	}

	// What may be seen is seen.
	for _, tc := range []struct{ name, path, referer, ancestors string }{
		{"published", page(b.project.ID, "external_id=pub"), "", "*"},
		{"published by url", page(b.project.ID, "url="+url.QueryEscape("https://news.test/pub")), "", "*"},
		{"signed, valid token", page(signed.ID, "external_id=paid&token="+url.QueryEscape(valid)), "", "*"},
		{"allowed origin", page(restricted.ID, "external_id=local&origin=https://news.test"), "", "https://news.test"},
		{"allowed referer", page(restricted.ID, "external_id=local"), "https://news.test/2026/story", "https://news.test"},
		{"unknown origin", page(restricted.ID, "external_id=local"), "", "https://news.test"},
	} {
		res := b.visit(t, tc.path, tc.referer)
		if res.StatusCode != http.StatusOK || !strings.Contains(res.body, `<audio id="player"`) {
			t.Errorf("%s: %d, want the player", tc.name, res.StatusCode)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors "+tc.ancestors) {
			t.Errorf("%s: CSP %q, want frame-ancestors %s", tc.name, csp, tc.ancestors)
		}
	}

	// A signed project's page names its media with a token of their
	// folder, and plays the MP3 alone (an HLS playlist's segment URLs
	// could not carry it).
	signedPage := b.visit(t, page(signed.ID, "external_id=paid&token="+url.QueryEscape(valid)), "")
	mediaToken := narrator.SignEmbed(secret, signed.ID, narrator.MediaSubject(fmt.Sprintf("%d", paid.ID)),
		narrator.MediaTokenExpiry(b.now, 83500*time.Millisecond))
	if want := fmt.Sprintf("/media/%d/t-paid/audio.mp3?token=%s", paid.ID, url.QueryEscape(mediaToken)); !strings.Contains(signedPage.body, want) {
		t.Errorf("signed page does not name %s:\n%s", want, signedPage.body)
	}
	if strings.Contains(signedPage.body, "audio.m3u8") {
		t.Error("signed page names the HLS playlist")
	}

	// What may not be seen answers as nothing at all.
	other := b.newProject(t)
	forged := strings.Split(valid, ".")[0] + ".AAAA" + strings.Split(valid, ".")[1][4:]
	expired := narrator.SignEmbed(secret, signed.ID, subject, b.now)
	foreignSecret := narrator.SignEmbed("nes_another", signed.ID, subject, b.now.Add(time.Hour))
	otherAudio := narrator.SignEmbed(secret, signed.ID, narrator.EmbedSubject("other", ""), b.now.Add(time.Hour))
	for _, tc := range []struct {
		name    string
		project int64
		query   string
		referer string
	}{
		{"draft", b.project.ID, "external_id=draft", ""},
		{"draft by url", b.project.ID, "url=" + url.QueryEscape("https://news.test/draft"), ""},
		{"scheduled for later", b.project.ID, "external_id=later", ""},
		{"draft being made", b.project.ID, "external_id=waiting", ""},
		{"another project's audio", other.ID, "external_id=pub", ""},
		{"no such project", 99999, "external_id=pub", ""},
		{"signed, no token", signed.ID, "external_id=paid", ""},
		{"signed, expired token", signed.ID, "external_id=paid&token=" + url.QueryEscape(expired), ""},
		{"signed, forged token", signed.ID, "external_id=paid&token=" + url.QueryEscape(forged), ""},
		{"signed, another secret", signed.ID, "external_id=paid&token=" + url.QueryEscape(foreignSecret), ""},
		{"signed, another audio's token", signed.ID, "external_id=paid&token=" + url.QueryEscape(otherAudio), ""},
		{"signed, token of the project's other lookup", signed.ID, "url=" + url.QueryEscape("https://news.test/paid") + "&token=" + url.QueryEscape(valid), ""},
		{"foreign origin", restricted.ID, "external_id=local&origin=https://evil.test", ""},
		{"foreign referer", restricted.ID, "external_id=local", "https://evil.test/page"},
	} {
		sameAs(t, tc.name+": page", b.visit(t, page(tc.project, tc.query), tc.referer), missingPage)
		sameAs(t, tc.name+": status", b.visit(t, status(tc.project, tc.query), tc.referer), missingStatus)
	}

	// Listening events of an audio that is not published answer as those
	// of a missing one.
	missingEvent := b.do(t, "POST", "/embed/events", "application/json", `{"project_id": 1, "audio_id": 99999, "event": "play"}`)
	for _, a := range []*narrator.Audio{draft, later, waiting} {
		got := b.do(t, "POST", "/embed/events", "application/json", fmt.Sprintf(`{"project_id": %d, "audio_id": %d, "event": "play"}`, a.ProjectID, a.ID))
		if got.StatusCode != missingEvent.StatusCode || got.body != missingEvent.body {
			t.Errorf("event of %s: %d %q, want %d %q", a.ExternalID, got.StatusCode, got.body, missingEvent.StatusCode, missingEvent.body)
		}
	}

	// At its time, the scheduled audio plays, with no job run.
	b.now = b.now.Add(time.Hour)
	if res := b.visit(t, page(b.project.ID, "external_id=later"), ""); res.StatusCode != http.StatusOK {
		t.Errorf("scheduled audio at its time: %d, want 200", res.StatusCode)
	}
}

// TestTokenExpiryCapped checks that a token signed to expire further ahead
// than narrator.MaxEmbedTokenLife is refused with a 400 that says why,
// alike whether its audio exists, and that one within it plays.
func TestTokenExpiryCapped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	signed, _, secret := b.signedProject(t, "nes_expiry-secret")
	token := func(externalID string, expires time.Time) string {
		return url.QueryEscape(narrator.SignEmbed(secret, signed.ID, narrator.EmbedSubject(externalID, ""), expires))
	}
	status := func(externalID string, expires time.Time) response {
		return b.visit(t, fmt.Sprintf("/embed/%d/status?external_id=%s&token=%s", signed.ID, externalID, token(externalID, expires)), "")
	}

	if res := status("paid", b.now.Add(narrator.MaxEmbedTokenLife)); res.StatusCode != http.StatusOK {
		t.Errorf("token expiring a year ahead: %d %s, want 200", res.StatusCode, res.body)
	}
	forever := time.Unix(99999999999999, 0)
	tooLong := status("paid", forever)
	if tooLong.StatusCode != http.StatusBadRequest || tooLong.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(tooLong.body, "expires more than 366 days ahead") {
		t.Errorf("token expiring in the year 5138: %d %s %q, want a JSON 400 that says why", tooLong.StatusCode,
			tooLong.Header.Get("Content-Type"), tooLong.body)
	}
	sameAs(t, "too long a token of a missing audio", status("nothing", forever), tooLong)
	page := b.visit(t, fmt.Sprintf("/embed/%d?external_id=paid&token=%s", signed.ID, token("paid", forever)), "")
	if page.StatusCode != http.StatusBadRequest || strings.Contains(page.body, `<audio id="player"`) {
		t.Errorf("page with a token expiring in the year 5138: %d, want 400 without the player", page.StatusCode)
	}
}
