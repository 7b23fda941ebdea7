package httpapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

// haRequest is a request Home Assistant sends to an OpenAI speech server
// (testdata/homeassistant/requests.json), and what it needs back.
type haRequest struct {
	Name    string
	Headers map[string]string
	Body    json.RawMessage
	Want    struct {
		Status      int
		ContentType string `json:"content_type"`
		Format      string
		// Voice is the voice's ID, or Alias the OpenAI name it is asked by.
		Voice, Alias string
		Speed        float64
		// Param is what an OpenAI error names.
		Param string
	}
}

// TestHomeAssistantReplay replays the requests of Home Assistant's OpenAI
// TTS integrations (the custom openai_tts and the core one), headers and
// body as they send them to {base}/audio/speech, and checks each answer as
// their code reads it: the audio's bytes in the format asked for, the
// speech Narrator was asked for, and OpenAI's error shape.
func TestHomeAssistantReplay(t *testing.T) {
	t.Parallel()
	b := setupSpeech(t, &fakeSpeaker{}, 0)
	raw, err := os.ReadFile(filepath.Join("testdata", "homeassistant", "requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var recorded struct{ Requests []haRequest }
	if err := json.Unmarshal(raw, &recorded); err != nil {
		t.Fatal(err)
	}
	for _, q := range recorded.Requests {
		t.Run(q.Name, func(t *testing.T) {
			b.speaker.mu.Lock()
			b.speaker.asked = nil
			b.speaker.mu.Unlock()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, b.srv.URL+"/v1/audio/speech", strings.NewReader(string(q.Body)))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range q.Headers {
				req.Header.Set(k, strings.ReplaceAll(v, "{key}", b.key))
			}
			r := b.send(t, req)
			if r.status != q.Want.Status {
				t.Fatalf("status %d %s, want %d", r.status, r.body, q.Want.Status)
			}
			if q.Want.Status != http.StatusOK {
				_, _, param, _ := decodeOpenAIError(t, r)
				if param != q.Want.Param {
					t.Errorf("error names param %q, want %q", param, q.Want.Param)
				}
				return
			}
			var input struct{ Input string }
			if err := json.Unmarshal(q.Body, &input); err != nil {
				t.Fatal(err)
			}
			if ct := r.header.Get("Content-Type"); ct != q.Want.ContentType || string(r.body) != "audio:"+input.Input {
				t.Errorf("answer %s %q, want %s and the audio of the input", ct, r.body, q.Want.ContentType)
			}
			b.speaker.mu.Lock()
			asked := b.speaker.asked
			b.speaker.mu.Unlock()
			if len(asked) != 1 {
				t.Fatalf("speaker asked %d times", len(asked))
			}
			s := asked[0]
			want := q.Want.Voice
			if q.Want.Alias != "" {
				v, ok := narrator.BuiltinCatalog().SpeechVoice(b.project.Language, q.Want.Alias)
				if !ok {
					t.Fatalf("no voice for %s", q.Want.Alias)
				}
				want = narrator.SpeechVoiceID(v)
			}
			speed := q.Want.Speed
			if speed == 1 {
				speed = 0
			}
			if got := narrator.SpeechVoiceID(s.Voice); got != want || s.Format != q.Want.Format || s.Text != input.Input || s.ProjectID != b.project.ID || (speed != 0 && s.Speed != speed) {
				t.Errorf("speaker asked %+v; want voice %s, format %s, speed %v, the input, project %d", s, want, q.Want.Format, q.Want.Speed, b.project.ID)
			}
		})
	}
}
