package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// TestProgress checks what the audio page and the polling endpoint say of
// an unprocessed audio: its place in line while it waits, then the share
// of sentences done, the time left and the live stream, read from the
// database as any node would.
func TestProgress(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, _ := b.signedIn(t)
	ctx := t.Context()
	var audios []*narrator.Audio
	for _, ext := range []string{"first", "second"} {
		a := &narrator.Audio{ProjectID: b.project.ID, Body: "Hello " + ext + ".", ExternalID: ext}
		b.mustAudios(t, a)
		audios = append(audios, a)
	}
	a := audios[1]
	base := fmt.Sprintf("/projects/%d", b.project.ID)
	page := fmt.Sprintf("%s/audios/%d", base, a.ID)
	type progress struct {
		Queued        bool   `json:"queued"`
		QueuePosition int    `json:"queue_position"`
		Started       bool   `json:"started"`
		Percent       int    `json:"percent"`
		ETASeconds    int    `json:"eta_seconds"`
		LiveURL       string `json:"live_url"`
		Label         string `json:"label"`
	}
	status := func() progress {
		t.Helper()
		res := c.get(fmt.Sprintf("%s/status?ids=%d", base, a.ID))
		wantStatus(t, res, 200)
		var st []struct {
			State    string    `json:"state"`
			Progress *progress `json:"progress"`
		}
		if err := json.Unmarshal([]byte(res.body), &st); err != nil || len(st) != 1 || st[0].Progress == nil {
			t.Fatalf("status = %s (%v), want one audio with its progress", res.body, err)
		}
		return *st[0].Progress
	}

	// Waiting behind the first audio.
	if got := status(); !got.Queued || got.QueuePosition != 2 || got.Label != "Waiting in line, position 2" || got.ETASeconds != -1 {
		t.Errorf("queued: %+v", got)
	}
	res := c.get(page)
	for _, want := range []string{"Waiting in line, position 2", `<progress id="progress-bar" max="100" value="0"`, `id="live-player"`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("waiting audio's page lacks %q", want)
		}
	}

	// Under way, with its live stream.
	if ok, err := b.store.LeaseSynthesis(ctx, a.ID, a.Revision, "h", time.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("lease = %v, %v", ok, err)
	}
	if ok, err := b.store.ReportSynthesis(ctx, a.ID, "h", narrator.SynthesisProgress{Revision: a.Revision,
		RenderProgress: narrator.RenderProgress{UnitsDone: 10, UnitsTotal: 40, LiveKey: "tok/live.m3u8"},
		StartedAt:      time.Now().Add(-10 * time.Second)}); err != nil || !ok {
		t.Fatalf("report = %v, %v", ok, err)
	}
	got := status()
	if got.Queued || !got.Started || got.Percent != 25 || got.ETASeconds < 30 || got.ETASeconds > 31 ||
		got.LiveURL != "https://media.test/media/tok/live.m3u8" || !strings.HasPrefix(got.Label, "10 of 40 sentences · about 3") {
		t.Errorf("under way: %+v", got)
	}
	res = c.get(page)
	for _, want := range []string{"10 of 40 sentences · about 3", `value="25"`, `data-live="https://media.test/media/tok/live.mp3"`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("audio page under way lacks %q:\n%s", want, res.body)
		}
	}

	// The project page's rows get the same figures.
	res = c.get(fmt.Sprintf("%s/status?ids=%d,%d", base, audios[0].ID, a.ID))
	if !strings.Contains(res.body, `"label":"Waiting in line, position 1"`) || !strings.Contains(res.body, `"label":"10 of 40 sentences`) {
		t.Errorf("status of both rows: %s", res.body)
	}
}
