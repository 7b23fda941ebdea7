package web_test

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/web"
)

// countOf returns the count a page shows for an event.
func countOf(t *testing.T, page, event string) string {
	t.Helper()
	m := regexp.MustCompile(`data-count="` + event + `">([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no count of %s on the page", event)
	}
	return m[1]
}

func TestListeningFigures(t *testing.T) {
	t.Parallel()
	// After the store's real clock, so that the session made at now lasts.
	now := time.Date(2030, 6, 30, 15, 0, 0, 0, time.UTC)
	b := setup(t, func(d *web.Deps) {
		d.Now = func() time.Time { return now }
		d.PublicOrigin = "https://audio.example"
		d.MediaOrigin = "https://media.test" // where setup's MediaURL points
	})
	ctx := t.Context()
	a := &narrator.Audio{ProjectID: b.project.ID, ExternalID: `post "1" & <more>`, Title: "Library", Body: "The council voted."}
	b.mustAudios(t, a)
	if err := b.store.FinishAudio(ctx, a.ID, 1, narrator.Rendering{Keys: map[string]string{"mp3": "tok/audio.mp3", "m3u8": "tok/audio.m3u8"},
		Bytes: map[string]int64{"mp3": 1000, "m3u8": 100}, Duration: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	other := &narrator.Audio{ProjectID: b.project.ID, Title: "No way to find it", Body: "Text."}
	b.mustAudios(t, other)
	record := func(event string, at time.Time, n int) {
		t.Helper()
		tally := narrator.ListenTally{ProjectID: b.project.ID, AudioID: a.ID, Event: event, Day: at, Count: int64(n)}
		if err := b.store.RecordListens(ctx, []narrator.ListenTally{tally}); err != nil {
			t.Fatal(err)
		}
	}
	record(narrator.ListenLoad, now, 5)
	record(narrator.ListenPlay, now, 4)
	record(narrator.ListenProgress25, now, 3)
	record(narrator.ListenProgress50, now, 2)
	record(narrator.ListenComplete, now, 1)
	record(narrator.ListenPlay, now.AddDate(0, 0, -2), 2)
	record(narrator.ListenPlay, now.AddDate(0, 0, -45), 7) // before the chart, in the totals

	c, _ := b.signedIn(t)
	res := c.get(fmt.Sprintf("/projects/%d", b.project.ID))
	wantStatus(t, res, 200)
	for event, want := range map[string]string{"load": "5", "play": "13", "progress_25": "3", "progress_50": "2", "progress_75": "0", "complete": "1"} {
		if got := countOf(t, res.body, event); got != want {
			t.Errorf("project page: %s = %s, want %s", event, got, want)
		}
	}
	bars := regexp.MustCompile(`class="chart-bar" data-plays="(\d+)"`).FindAllStringSubmatch(res.body, -1)
	if len(bars) != 30 {
		t.Fatalf("chart has %d bars, want 30", len(bars))
	}
	var plays []string
	for _, m := range bars {
		plays = append(plays, m[1])
	}
	want := strings.Repeat("0 ", 27) + "2 0 4"
	if got := strings.Join(plays, " "); got != want {
		t.Errorf("plays per day %q, want %q", got, want)
	}
	for _, s := range []string{"Plays per day from 1 Jun to 30 Jun: 6 in all, at most 4 on one day.", now.Format("Mon 2 Jan 2006") + ": 4 plays",
		"<th scope=\"row\">25 %</th>", "23 %", "15 %", "8 %"} {
		if !strings.Contains(res.body, s) {
			t.Errorf("project page lacks %q", s)
		}
	}

	res = c.get(fmt.Sprintf("/projects/%d/audios/%d", b.project.ID, a.ID))
	wantStatus(t, res, 200)
	for event, want := range map[string]string{"load": "5", "play": "13", "complete": "1"} {
		if got := countOf(t, res.body, event); got != want {
			t.Errorf("audio page: %s = %s, want %s", event, got, want)
		}
	}
	for _, s := range []string{
		`<div class="np" id="np" data-hls="https://media.test/media/tok/audio.m3u8" data-transcript="https://media.test/media/tok/transcript.json" data-duration="20">`,
		`<script src="/embed/player.js" defer></script>`,
		`src="https://media.test/media/tok/audio.mp3"`,
	} {
		if !strings.Contains(res.body, s) {
			t.Errorf("audio page lacks %q", s)
		}
	}
	// The player's media and transcript come from the media origin.
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"media-src 'self' https://audio.example https://media.test;", "connect-src 'self' https://audio.example https://media.test;", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("audio page CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(res.body, "data-events") {
		t.Error("the dashboard's player reports listening events")
	}
	snippet := func(id string) string {
		m := regexp.MustCompile(`(?s)<textarea id="` + id + `"[^>]*>(.*?)</textarea>`).FindStringSubmatch(res.body)
		if m == nil {
			t.Fatalf("no %s on the audio page", id)
		}
		return html.UnescapeString(m[1])
	}
	ext := "post+%221%22+%26+%3Cmore%3E"
	if got, want := snippet("snippet-script"), fmt.Sprintf(`<script src="https://audio.example/embed.js" data-project="%d" data-external-id="post &#34;1&#34; &amp; &lt;more&gt;" async></script>`, b.project.ID); got != want {
		t.Errorf("script snippet\n got  %s\n want %s", got, want)
	}
	if got, want := snippet("snippet-iframe"), fmt.Sprintf(`<iframe src="https://audio.example/embed/%d?external_id=%s" title="Listen to this article" width="100%%" height="260" style="border:0" allow="autoplay"></iframe>`, b.project.ID, ext); got != want {
		t.Errorf("iframe snippet\n got  %s\n want %s", got, want)
	}
	res = c.get(fmt.Sprintf("/projects/%d/audios/%d", b.project.ID, other.ID))
	if !strings.Contains(res.body, "give this audio an external ID or an article URL") || strings.Contains(res.body, "snippet-script") {
		t.Errorf("audio without external ID or URL offers a snippet:\n%s", res.body)
	}
	if got := countOf(t, res.body, "play"); got != "0" {
		t.Errorf("another audio shows %s plays", got)
	}
	if !strings.Contains(res.body, "No plays yet") {
		t.Error("an audio without plays does not say so")
	}
}
