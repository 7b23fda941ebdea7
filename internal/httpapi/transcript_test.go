package httpapi_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/transcript"
)

func TestAudioTranscript(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, map[string]any{"title": "T", "body": "Hello there. Bye.", "external_id": "tr-1"})
	id := int64(a["id"].(float64))
	path := b.audioPath(id) + "/transcript"
	withKey := []string{"Authorization", "Bearer " + b.key}

	wantError(t, b.do(t, "GET", path, nil, withKey...), 409, 40, "not processed yet")

	stored, err := b.store.FindAudio(t.Context(), b.project.ID, "tr-1")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{narrator.ContentTypeMP3: "tok/audio.mp3", narrator.ContentTypeM3U8: "tok/audio.m3u8"}
	if err := b.store.FinishAudio(t.Context(), id, stored.Revision, narrator.Rendering{Keys: keys, Bytes: map[string]int64{"mp3": 1000, "m3u8": 100}, Duration: 4 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// Processed, but rendered before transcripts existed.
	wantError(t, b.do(t, "GET", path, nil, withKey...), 409, 40, "before transcripts existed")

	data, err := transcript.MarshalJSON(&narrator.Transcript{
		Duration: 4,
		Sentences: []narrator.TranscriptSentence{
			{Start: 0.025, End: 0.8, Text: "T", Kind: narrator.SentenceTitle},
			{Start: 1.5, End: 2.25, Text: "Hello <there> & all.", Words: []narrator.TranscriptWord{{Start: 1.5, End: 1.9, Text: "hello"}}, Kind: narrator.SentenceHeading, Block: 1},
			{Start: 2.5, End: 3.1, Text: "Bye.", Block: 2},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.media.Put(t.Context(), "tok/transcript.json", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"audio_id":%d,"duration":4,"vtt_url":"https://media.test/media/tok/transcript.vtt","json_url":"https://media.test/media/tok/transcript.json",`+
		`"sentences":[{"start":0.025,"end":0.8,"text":"T","kind":"title","block":0},`+
		`{"start":1.5,"end":2.25,"text":"Hello \u003cthere\u003e \u0026 all.","words":[{"start":1.5,"end":1.9,"text":"hello"}],"kind":"heading","block":1},`+
		`{"start":2.5,"end":3.1,"text":"Bye.","block":2}]}`+"\n", id)
	for _, ref := range []any{id, "tr-1"} { // found as GET one audio finds it
		r := b.do(t, "GET", b.audioPath(ref)+"/transcript", nil, withKey...)
		if r.status != 200 {
			t.Fatalf("GET %v: status %d, body %s", ref, r.status, r.body)
		}
		if diff := cmp.Diff(want, string(r.body)); diff != "" {
			t.Errorf("GET %v (-want +got):\n%s", ref, diff)
		}
	}

	other, otherKey := b.newAccount(t, "Other")
	otherProject := b.newProject(t, other)
	tests := []struct {
		name    string
		method  string
		path    string
		headers []string
		status  int
		code    int
		msg     string
	}{
		{"no key", "GET", path, nil, 401, 20, "not recognised"},
		{"another account's key", "GET", path, []string{"Authorization", "Bearer " + otherKey}, 404, 30, "not found"},
		{"another project", "GET", fmt.Sprintf("/api/v3/projects/%d/audio/%d/transcript", otherProject.ID, id), []string{"Authorization", "Bearer " + otherKey}, 404, 30, "not found"},
		{"unknown audio", "GET", b.audioPath(id+1000) + "/transcript", withKey, 404, 30, "not found"},
		{"bad project id", "GET", "/api/v3/projects/x/audio/1/transcript", withKey, 404, 30, "not found"},
		{"method", "POST", path, withKey, 405, 10, "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, b.do(t, tt.method, tt.path, nil, tt.headers...), tt.status, tt.code, tt.msg)
		})
	}

	// A failed audio says so.
	f := b.create(t, map[string]any{"title": "F", "body": "Fails."})
	fid := int64(f["id"].(float64))
	fs, err := b.store.FindAudio(t.Context(), b.project.ID, fmt.Sprint(fid))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.FailAudio(t.Context(), fid, fs.Revision, "engine broke"); err != nil {
		t.Fatal(err)
	}
	wantError(t, b.do(t, "GET", b.audioPath(fid)+"/transcript", nil, withKey...), 409, 40, "synthesis failed")

	// A deleted audio has none.
	if r := b.do(t, "DELETE", b.audioPath(id), nil, withKey...); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := b.do(t, "GET", path, nil, withKey...); r.status != 404 {
		t.Errorf("deleted audio's transcript: status %d, body %s", r.status, r.body)
	}
}
