package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// breakBomb is the review's article: short words between the longest SSML
// breaks, over 13 hours of audio from under 100,000 characters.
var breakBomb = "<speak>" + strings.Repeat(`a<break time="10s"/>`, 4_900) + "</speak>"

// TestCreateTooLong: an article whose audio would clearly pass the cap is
// refused with a 400 naming the body, on create and on update, and nothing
// is stored or queued.
func TestCreateTooLong(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "POST", b.audiosPath(), map[string]any{"api_key": b.key, "body": breakBomb, "external_id": "bomb"})
	wantError(t, r, 400, 10, "body would make")
	if _, err := b.store.FindAudio(t.Context(), b.project.ID, "bomb"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("refused audio stored: %v", err)
	}
	a := b.create(t, map[string]any{"body": "Short.", "external_id": "short"})
	r = b.do(t, "PUT", b.audioPath(a["id"]), map[string]any{"api_key": b.key, "body": breakBomb})
	wantError(t, r, 400, 10, "at most 3 h")
	got, err := b.store.FindAudio(t.Context(), b.project.ID, "short")
	if err != nil {
		t.Fatal(err)
	}
	if got.Body != "Short." || got.Revision != 1 {
		t.Errorf("refused update changed the audio: body %q, revision %d", got.Body, got.Revision)
	}
	// A long article within the cap is taken.
	b.create(t, map[string]any{"body": strings.Repeat("A sentence of an ordinary article. ", 2_500)})
}

// TestQueueFull: an account with as many audios waiting as it may gets a
// 429 with code 60; other accounts do not.
func TestQueueFull(t *testing.T) {
	t.Parallel()
	b := setupLimits(t, narrator.Limits{MaxQueued: 2})
	b.create(t, map[string]any{"body": "One."})
	b.create(t, map[string]any{"body": "Two."})
	r := b.do(t, "POST", b.audiosPath(), map[string]any{"api_key": b.key, "body": "Three."})
	wantError(t, r, 429, 60, "2 audios waiting")
	if m := r.object(t); len(m) != 2 {
		t.Errorf("error body %s, want only code and message", r.body)
	}
	other, key := b.newAccount(t, "Other")
	p := b.newProject(t, other)
	r = b.do(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", p.ID), map[string]any{"api_key": key, "body": "Mine."})
	if r.status != 200 {
		t.Errorf("other account: status %d, body %s", r.status, r.body)
	}
}

// TestMediaQuota: an account whose files fill its quota gets a 403 with
// code 61 on creates and on updates that need new speech.
func TestMediaQuota(t *testing.T) {
	t.Parallel()
	b := setupLimits(t, narrator.Limits{MaxMediaBytes: 1_000})
	a := b.create(t, map[string]any{"body": "One.", "external_id": "one"})
	stored, err := b.store.FindAudio(t.Context(), b.project.ID, "one")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.FinishAudio(t.Context(), stored.ID, stored.Revision, narrator.Rendering{
		Keys:  map[string]string{"mp3": "tok/audio.mp3", "m3u8": "tok/audio.m3u8"},
		Bytes: map[string]int64{"mp3": 900, "m3u8": 100}, Duration: time.Second,
	}); err != nil {
		t.Fatal(err)
	}
	r := b.do(t, "POST", b.audiosPath(), map[string]any{"api_key": b.key, "body": "Two."})
	wantError(t, r, 403, 61, "quota")
	r = b.do(t, "PUT", b.audioPath(a["id"]), map[string]any{"api_key": b.key, "body": "One, again."})
	wantError(t, r, 403, 61, "quota")
	// Metadata alone needs no speech, and deleting makes room.
	r = b.do(t, "PUT", b.audioPath(a["id"]), map[string]any{"api_key": b.key, "metadata": map[string]string{"k": "v"}})
	if r.status != 200 {
		t.Errorf("metadata update: status %d, body %s", r.status, r.body)
	}
	if r := b.do(t, "DELETE", b.audioPath(a["id"])+"?api_key="+b.key, nil); r.status != 200 {
		t.Fatalf("delete: status %d, body %s", r.status, r.body)
	}
	b.create(t, map[string]any{"body": "Two."})
}
