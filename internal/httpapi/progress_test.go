package httpapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// report leases an audio's current revision to holder and reports
// progress on it, started ago.
func (b *testBundle) report(t *testing.T, ref string, holder string, done, total int, live string, ago time.Duration) *narrator.Audio {
	t.Helper()
	a, err := b.store.FindAudio(t.Context(), b.project.ID, ref)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := b.store.LeaseSynthesis(t.Context(), a.ID, a.Revision, holder, time.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("lease = %v, %v", ok, err)
	}
	if ok, err := b.store.ReportSynthesis(t.Context(), a.ID, holder, narrator.SynthesisProgress{
		Revision:       a.Revision,
		RenderProgress: narrator.RenderProgress{UnitsDone: done, UnitsTotal: total, LiveKey: live},
		StartedAt:      time.Now().Add(-ago),
	}); err != nil || !ok {
		t.Fatalf("report = %v, %v", ok, err)
	}
	return a
}

func TestAudioProgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	withKey := []string{"Authorization", "Bearer " + b.key}
	progress := func(ref string) map[string]any {
		t.Helper()
		r := b.do(t, "GET", b.audioPath(ref)+"/progress", nil, withKey...)
		if r.status != 200 {
			t.Fatalf("progress of %s: status %d, body %s", ref, r.status, r.body)
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", cc)
		}
		return r.object(t)
	}
	b.create(t, map[string]any{"body": "One.", "external_id": "one"})
	b.create(t, map[string]any{"body": "Two.", "external_id": "two"})

	// Waiting: the place in line, no figures.
	for i, ref := range []string{"one", "two"} {
		got := progress(ref)
		if got["state"] != "unprocessed" || got["queued"] != true || got["queue_position"] != float64(i+1) || len(got) != 4 {
			t.Errorf("%s waiting: %v; want unprocessed, queued at %d, and no other figure", ref, got, i+1)
		}
	}

	// Under way: the share done, the time left, the live stream.
	b.report(t, "one", "h", 10, 40, "tok/live.m3u8", 10*time.Second)
	got := progress("one")
	if got["queued"] != false || got["units_done"] != 10.0 || got["units_total"] != 40.0 || got["share"] != 0.25 ||
		got["live_url"] != "https://media.test/media/tok/live.m3u8" || got["live_mp3_url"] != "https://media.test/media/tok/live.mp3" {
		t.Errorf("under way: %v", got)
	}
	if _, ok := got["queue_position"]; ok {
		t.Errorf("under way, yet a queue position: %v", got)
	}
	// 10 s for 10 units: about 30 s for the 30 left.
	if eta, _ := got["eta_seconds"].(float64); eta < 30 || eta > 31 {
		t.Errorf("eta_seconds %v, want about 30", got["eta_seconds"])
	}
	// Before the first unit: no estimate and no stream yet.
	b.report(t, "two", "h2", 0, 5, "", time.Second)
	got = progress("two")
	if got["units_done"] != 0.0 || got["share"] != 0.0 || got["eta_seconds"] != nil || got["live_url"] != nil {
		t.Errorf("just started: %v", got)
	}

	// A new revision makes the old progress stale: queued again.
	if r := b.do(t, "PUT", b.audioPath("one"), map[string]any{"api_key": b.key, "body": "One, changed."}); r.status != 200 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if got := progress("one"); got["queued"] != true || got["units_done"] != nil || got["live_url"] != nil {
		t.Errorf("after an update: %v; want queued, without the old revision's figures", got)
	}

	// Processed: share 1, nothing else; failed: the state alone.
	a, err := b.store.FindAudio(t.Context(), b.project.ID, "two")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.FinishAudio(t.Context(), a.ID, a.Revision, narrator.Rendering{
		Keys: map[string]string{"mp3": "tok2/audio.mp3", "m3u8": "tok2/audio.m3u8"}, Bytes: map[string]int64{"mp3": 10, "m3u8": 10}, Duration: time.Second}); err != nil {
		t.Fatal(err)
	}
	if got := progress("two"); got["state"] != "processed" || got["share"] != 1.0 || got["queued"] != false || len(got) != 4 {
		t.Errorf("processed: %v", got)
	}

	// Errors.
	_, otherKey := b.newAccount(t, "Other")
	otherProject := b.newProject(t, b.account)
	cases := []struct {
		name, method, path string
		headers            []string
		status, code       int
		msg                string
	}{
		{"no key", "GET", b.audioPath("one") + "/progress", nil, 401, 20, ""},
		{"another account", "GET", b.audioPath("one") + "/progress", []string{"Authorization", "Bearer " + otherKey}, 404, 30, "not found"},
		{"another project", "GET", fmt.Sprintf("/api/v3/projects/%d/audio/one/progress", otherProject.ID), withKey, 404, 30, "not found"},
		{"unknown audio", "GET", b.audioPath("nope") + "/progress", withKey, 404, 30, "not found"},
		{"bad project id", "GET", "/api/v3/projects/x/audio/1/progress", withKey, 404, 30, "not found"},
		{"method", "POST", b.audioPath("one") + "/progress", withKey, 405, 10, "not allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, b.do(t, c.method, c.path, nil, c.headers...), c.status, c.code, c.msg)
		})
	}
	if r := b.do(t, "DELETE", b.audioPath("one"), map[string]any{"api_key": b.key}); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	wantError(t, b.do(t, "GET", b.audioPath("one")+"/progress", nil, withKey...), 404, 30, "")
}
