package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/openapitest"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proctest"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// setupSpokenClips is an API server whose clips are spoken by a pipeline
// with flite, the only engine it runs.
func setupSpokenClips(t *testing.T) *testBundle {
	t.Helper()
	proctest.NeedProgram(t, "flite", "apt-get install flite")
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	eng := enginetest.Must(t, flite.New, flite.Options{})
	pipe := pipeline.New(pipeline.Config{Engines: map[string]pipeline.Synthesizer{narrator.EngineFlite: eng},
		Rules: st, Workers: 2, ScratchDir: t.TempDir()})
	t.Cleanup(func() { pipe.Close() })
	api := httpapi.NewServer(httpapi.Deps{Store: st, Clips: pipeline.ClipDecoder{}, ClipSpeaker: pipe})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	b := &testBundle{api: api, store: st, srv: srv, contract: openapitest.MustLoad(t)}
	b.account, b.key = b.newAccount(t, "Acme")
	b.project = b.newProject(t, b.account)
	return b
}

// TestSpokenClips sets an intro and an outro as texts spoken by flite and
// checks what GET describes and the store holds, that the project's
// pronunciation rules and speaking rate apply, that an upload replacing
// a spoken clip has no text, and each refusal.
func TestSpokenClips(t *testing.T) {
	t.Parallel()
	b := setupSpokenClips(t)
	intro := fmt.Sprintf("/api/v3/projects/%d/intro", b.project.ID)
	outro := fmt.Sprintf("/api/v3/projects/%d/outro", b.project.ID)
	auth := []string{"Authorization", "Bearer " + b.key}
	put := func(t *testing.T, path, text, voice string) float64 {
		t.Helper()
		r := b.do(t, "PUT", path, map[string]string{"text": text, "voice": voice}, auth...)
		if r.status != http.StatusOK {
			t.Fatalf("PUT %s: %d %s", path, r.status, r.body)
		}
		got := r.object(t)
		if got["text"] != text || got["voice"] != "en_US/Kevin" || got["sample_rate"] != float64(pipeline.SampleRate) {
			t.Errorf("PUT %s = %v, want the text, voice en_US/Kevin, at %d Hz", path, got, pipeline.SampleRate)
		}
		d, _ := got["duration"].(float64)
		if d <= 0.1 || d > 30 {
			t.Errorf("PUT %s: %v s long", path, got["duration"])
		}
		return d
	}

	const text = "This is the Acme news podcast."
	plain := put(t, intro, text, "Kevin")
	g := b.do(t, "GET", intro, nil, auth...).object(t)
	if g["kind"] != "intro" || g["text"] != text || g["voice"] != "en_US/Kevin" || g["duration"] != plain {
		t.Errorf("GET intro = %v, want the spoken intro of %v s", g, plain)
	}
	clip, err := b.store.Clip(t.Context(), b.project.ID, narrator.ClipIntro)
	if err != nil || clip.Text != text || clip.Voice != "en_US/Kevin" || peak(clip.Samples) < 1000 {
		t.Fatalf("stored intro %q %q, peak %d, %v; want speech", clip.Text, clip.Voice, peak(clip.Samples), err)
	}
	// By its ID too; and the project's rules apply: Acme is said at length.
	if err := b.store.SetPronunciation(t.Context(), &narrator.Pronunciation{ProjectID: b.project.ID, Phrase: "Acme",
		Say: "a company making everything a coyote could ever wish to buy"}); err != nil {
		t.Fatal(err)
	}
	ruled := put(t, outro, text, "en_US/Kevin")
	if ruled < plain+1.5 {
		t.Errorf("with the rule, %.2f s; without, %.2f s: want the rule's words spoken", ruled, plain)
	}
	// So does the project's speaking rate.
	if _, err := b.store.SetSpeechRate(t.Context(), b.project.ID, 2); err != nil {
		t.Fatal(err)
	}
	if fast := put(t, outro, text, "Kevin"); fast > ruled*0.7 {
		t.Errorf("at rate 2, %.2f s; at rate 1, %.2f s", fast, ruled)
	}
	if _, err := b.store.SetSpeechRate(t.Context(), b.project.ID, 1); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, contentType, body string
		status, code            int
		msg                     string
	}{
		{"empty text", "application/json", `{"text": " ", "voice": "Kevin"}`, 400, 10, "empty"},
		{"no text", "application/json", `{"voice": "Kevin"}`, 400, 10, "text is required"},
		{"text too long", "application/json", `{"text": "` + strings.Repeat("Hello. ", 143) + `", "voice": "Kevin"}`, 400, 10, "at most 1000"},
		{"no voice", "application/json", `{"text": "Hello."}`, 400, 10, "voice is required"},
		{"unknown voice", "application/json", `{"text": "Hello.", "voice": "Nobody"}`, 400, 10, "not in the catalog"},
		{"engine not running", "application/json", `{"text": "Hello.", "voice": "en_US/Sally"}`, 400, 10, "not running"},
		{"spoken too long", "application/json", `{"text": "` + strings.Repeat("One more sentence for the outro. ", 25) + `", "voice": "Kevin"}`, 400, 10, "longer than 30 s"},
		{"nothing to read", "application/json", `{"text": "...", "voice": "Kevin"}`, 400, 10, "no text"},
		{"not JSON", "application/json", `text=Hello`, 400, 10, "JSON object"},
		{"text as text/plain", "text/plain", "Hello.", 400, 10, "audio/mpeg or audio/wav"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, b.do(t, "PUT", intro, c.body, append([]string{"Content-Type", c.contentType}, auth...)...), c.status, c.code, c.msg)
		})
	}
	if g := b.do(t, "GET", intro, nil, auth...).object(t); g["text"] != text || g["duration"] != plain {
		t.Errorf("intro after refusals %v, want the spoken one", g)
	}
	// An upload replaces the spoken intro, and has no text.
	r := b.do(t, "PUT", intro, wavTone(time.Second, 16000), append([]string{"Content-Type", "audio/wav"}, auth...)...)
	if got := r.object(t); r.status != http.StatusOK || got["text"] != nil || got["voice"] != nil {
		t.Errorf("PUT of a WAV over the spoken intro: %d %v, want no text or voice", r.status, got)
	}
}

// peak returns the largest magnitude among samples.
func peak(samples []int16) int {
	m := 0
	for _, s := range samples {
		m = max(m, abs(int(s)))
	}
	return m
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// fakeClipSpeaker speaks every text as a second of silence.
type fakeClipSpeaker struct{}

func (fakeClipSpeaker) SpeakClip(ctx context.Context, kind narrator.ClipKind, s narrator.Speech) (*narrator.Clip, error) {
	return &narrator.Clip{ProjectID: s.ProjectID, Kind: kind, Samples: make([]int16, 8000), SampleRate: 8000,
		Text: s.Text, Voice: narrator.SpeechVoiceID(s.Voice)}, nil
}

// TestSpokenClipLimits checks that a spoken clip shares the limits of the
// speech convention: the cap on syntheses at once (503 while a speech
// request holds it), the key's burst of speech requests (429), and that a
// node without a clip speaker answers 503.
func TestSpokenClipLimits(t *testing.T) {
	t.Parallel()
	f := &fakeSpeaker{started: make(chan struct{}), release: make(chan struct{})}
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Deps{Store: st, Speaker: f, ClipSpeaker: fakeClipSpeaker{}, MaxSpeeches: 1}))
	t.Cleanup(srv.Close)
	b := &speechBundle{testBundle: &testBundle{store: st, srv: srv, contract: openapitest.MustLoad(t)}, speaker: f}
	b.account, b.key = b.newAccount(t, "Acme")
	b.project = b.newProject(t, b.account)
	intro := fmt.Sprintf("/api/v3/projects/%d/intro", b.project.ID)
	auth := []string{"Authorization", "Bearer " + b.key}
	spoken := map[string]string{"text": "Welcome.", "voice": "Kevin"}

	first := make(chan response, 1)
	go func() {
		first <- b.speech(t, b.key, map[string]any{"model": "tts-1", "input": "Hello.", "voice": "alloy"})
	}()
	<-f.started
	wantError(t, b.do(t, "PUT", intro, spoken, auth...), http.StatusServiceUnavailable, 50, "busy")
	close(f.release)
	if r := <-first; r.status != 200 {
		t.Fatalf("speech request: %d %s", r.status, r.body)
	}
	// The speech request and the refused intro took two of the key's
	// burst.
	for i := range narrator.SpeechBurst - 2 {
		if r := b.do(t, "PUT", intro, spoken, auth...); r.status != 200 {
			t.Fatalf("spoken intro %d: %d %s", i, r.status, r.body)
		}
	}
	r := b.do(t, "PUT", intro, spoken, auth...)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("past the burst: %d %v %s, want 429 with Retry-After", r.status, r.header, r.body)
	}

	none := setup(t)
	wantError(t, none.do(t, "PUT", fmt.Sprintf("/api/v3/projects/%d/intro", none.project.ID), spoken, "Authorization", "Bearer "+none.key),
		http.StatusServiceUnavailable, 50, "does not synthesise")
}
