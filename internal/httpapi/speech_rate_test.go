package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSpeechSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path := fmt.Sprintf("/api/v3/projects/%d/speech", b.project.ID)
	auth := []string{"Authorization", "Bearer " + b.key}
	body := func(rate string) string { return fmt.Sprintf(`{"project_id":%d,"speech_rate":%s}`, b.project.ID, rate) }
	want := func(r response, rate string) {
		t.Helper()
		if got := strings.TrimSpace(string(r.body)); r.status != http.StatusOK || got != body(rate) {
			t.Errorf("%d %s, want 200 %s", r.status, got, body(rate))
		}
	}

	want(b.do(t, "GET", path, nil, auth...), "1")
	a := b.create(t, map[string]any{"title": "Hi", "body": "Hello."})
	want(b.do(t, "PUT", path, map[string]any{"speech_rate": 1.25}, auth...), "1.25")
	want(b.do(t, "GET", path, nil, auth...), "1.25")
	// Left out, the rate is kept; a form and a number as text work too.
	want(b.do(t, "PUT", path, map[string]any{}, auth...), "1.25")
	want(b.do(t, "PUT", path, url.Values{"speech_rate": {"0.75"}}, auth...), "0.75")
	want(b.do(t, "PUT", path, map[string]any{"speech_rate": "2"}, auth...), "2")
	p, err := b.store.FindProject(t.Context(), b.account, b.project.ID)
	if err != nil || p.SpeechRate != 2 {
		t.Errorf("stored project %+v, %v; want rate 2", p, err)
	}
	// A rate change renders nothing again: the audio keeps its revision.
	got := b.do(t, "GET", fmt.Sprintf("/api/v3/projects/%d/audio/%v", b.project.ID, a["id"]), nil, auth...).object(t)
	if got["state"] != a["state"] {
		t.Errorf("audio after the rate change %v, want it as it was (%v)", got["state"], a["state"])
	}
	stored, err := b.store.FindAudio(t.Context(), b.project.ID, fmt.Sprint(a["id"]))
	if err != nil || stored.Revision != 1 {
		t.Errorf("audio at revision %d (%v) after a rate change, want 1", stored.Revision, err)
	}

	for _, bad := range []any{2.5, 0.25, -1, "fast", true} {
		wantError(t, b.do(t, "PUT", path, map[string]any{"speech_rate": bad}, auth...), http.StatusBadRequest, 10, "speech_rate")
	}
	r := b.do(t, "PUT", path, map[string]any{"speech_rate": 3}, auth...)
	wantError(t, r, http.StatusBadRequest, 10, "speech_rate must be a number from 0.5 to 2.0")
	want(b.do(t, "GET", path, nil, auth...), "2")
	wantError(t, b.do(t, "GET", path, nil), http.StatusUnauthorized, 20, "")
	_, otherKey := b.newAccount(t, "Other")
	wantError(t, b.do(t, "PUT", path, map[string]any{"speech_rate": 1}, "Authorization", "Bearer "+otherKey), http.StatusNotFound, 30, "")
	wantError(t, b.do(t, "GET", "/api/v3/projects/999/speech", nil, auth...), http.StatusNotFound, 30, "")
}
