package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/proctest"
)

// wavTone returns a WAV file of a 440 Hz tone lasting d at rate.
func wavTone(d time.Duration, rate int) string {
	return string(pcmtest.WAV(pcmtest.Tone(440, d, rate, 8000), rate))
}

// TestClips sets, reads and removes a project's intro and outro, and
// checks the refusals: a body that is not audio, too long or too large, a
// content type not read, a wrong key, another account's project.
func TestClips(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "lame", "scripts/deps.sh test")
	b := setup(t)
	intro := fmt.Sprintf("/api/v3/projects/%d/intro", b.project.ID)
	outro := fmt.Sprintf("/api/v3/projects/%d/outro", b.project.ID)
	auth := []string{"Authorization", "Bearer " + b.key}
	wav := func(headers ...string) []string { return append([]string{"Content-Type", "audio/wav"}, headers...) }

	wantError(t, b.do(t, "GET", intro, nil, auth...), http.StatusNotFound, 30, "")
	a := b.create(t, map[string]any{"title": "Hi", "body": "Hello."})
	r := b.do(t, "PUT", intro, wavTone(2*time.Second, 44100), wav(auth...)...)
	if r.status != http.StatusOK {
		t.Fatalf("PUT intro: %d %s", r.status, r.body)
	}
	got := r.object(t)
	if got["kind"] != "intro" || got["duration"] != 2.0 || got["sample_rate"] != 32000.0 {
		t.Errorf("PUT intro = %v, want a 2 s intro at 32000 Hz", got)
	}
	if g := b.do(t, "GET", intro, nil, auth...).object(t); g["duration"] != 2.0 || g["updated_at"] != got["updated_at"] {
		t.Errorf("GET intro = %v, want %v", g, got)
	}
	clip, err := b.store.Clip(t.Context(), b.project.ID, narrator.ClipIntro)
	if err != nil || len(clip.Samples) != 64000 {
		t.Fatalf("stored intro %v, %v; want 64000 samples", clip, err)
	}
	// The key may come in the query, and a WAV by another of its names.
	r = b.do(t, "PUT", outro+"?api_key="+b.key, wavTone(time.Second, 16000), "Content-Type", "audio/x-wav")
	if r.status != http.StatusOK || r.object(t)["kind"] != "outro" {
		t.Fatalf("PUT outro: %d %s", r.status, r.body)
	}
	// Setting a clip renders nothing again.
	stored, err := b.store.FindAudio(t.Context(), b.project.ID, fmt.Sprint(a["id"]))
	if err != nil || stored.Revision != 1 {
		t.Errorf("audio at revision %d (%v) after setting clips, want 1", stored.Revision, err)
	}

	cases := []struct {
		name, contentType, body string
		status, code            int
		msg                     string
	}{
		{"text as WAV", "audio/wav", "hello, not audio", 400, 10, "not audio that can be decoded"},
		{"text as MP3", "audio/mpeg", strings.Repeat("not an mp3 ", 100), 400, 10, "not an MP3 file"},
		{"WAV too long", "audio/wav", wavTone(31*time.Second, 8000), 400, 10, "at most 30 s"},
		{"WAV too short", "audio/wav", wavTone(10*time.Millisecond, 8000), 400, 10, "at least"},
		{"too large", "audio/wav", wavTone(100*time.Second, 48000), 413, 10, "larger than"},
		{"Ogg", "audio/ogg", "OggS", 400, 10, "audio/mpeg or audio/wav"},
		{"JSON of no text", "application/json", `{"url": "https://x.test/a.mp3"}`, 400, 10, "text is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, b.do(t, "PUT", intro, c.body, append([]string{"Content-Type", c.contentType}, auth...)...), c.status, c.code, c.msg)
		})
	}
	// The refusals left the intro as it was.
	if g := b.do(t, "GET", intro, nil, auth...).object(t); g["duration"] != 2.0 {
		t.Errorf("intro after refusals %v, want the 2 s one", g)
	}

	body := wavTone(time.Second, 16000)
	wantError(t, b.do(t, "PUT", intro, body, wav()...), http.StatusUnauthorized, 20, "")
	wantError(t, b.do(t, "PUT", intro, body, wav("Authorization", "Bearer nr_wrong")...), http.StatusUnauthorized, 20, "")
	_, otherKey := b.newAccount(t, "Other")
	wantError(t, b.do(t, "PUT", intro, body, wav("Authorization", "Bearer "+otherKey)...), http.StatusNotFound, 30, "")
	wantError(t, b.do(t, "DELETE", intro, nil, "Authorization", "Bearer "+otherKey), http.StatusNotFound, 30, "")
	wantError(t, b.do(t, "PUT", "/api/v3/projects/999/outro", body, wav(auth...)...), http.StatusNotFound, 30, "")

	if r := b.do(t, "DELETE", intro, nil, auth...); r.status != http.StatusOK || r.object(t)["kind"] != "intro" {
		t.Errorf("DELETE intro: %d %s", r.status, r.body)
	}
	wantError(t, b.do(t, "GET", intro, nil, auth...), http.StatusNotFound, 30, "")
	wantError(t, b.do(t, "DELETE", intro, nil, auth...), http.StatusNotFound, 30, "")
	if g := b.do(t, "GET", outro, nil, auth...).object(t); g["kind"] != "outro" || g["duration"] != 1.0 {
		t.Errorf("outro after the intro's removal %v, want it kept", g)
	}
}
