//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openWebUIRequest is a request Open WebUI sends to an OpenAI speech
// server (testdata/openwebui/requests.json).
type openWebUIRequest struct {
	Name    string
	Method  string
	URL     string
	Headers map[string]string
	Body    json.RawMessage
}

// TestOpenWebUIReplay replays the requests Open WebUI sends when its TTS
// engine is openai and its base URL is Narrator's /v1, headers and body as
// recorded, and checks each answer as Open WebUI's code reads it: the
// models' ids, the voices' id and name, the speech's bytes as an MP3 file,
// and the error's message.
func TestOpenWebUIReplay(t *testing.T) {
	t.Parallel()
	data, acct, _ := fixture(t)
	s := startServer(t, data, freeAddr(t))
	raw, err := os.ReadFile(filepath.Join("testdata", "openwebui", "requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var recorded struct{ Requests []openWebUIRequest }
	if err := json.Unmarshal(raw, &recorded); err != nil {
		t.Fatal(err)
	}
	answers := map[string][]byte{}
	statuses := map[string]int{}
	for _, q := range recorded.Requests {
		var body io.Reader
		if q.Body != nil {
			body = bytes.NewReader(q.Body)
		}
		var header []string
		for k, v := range q.Headers {
			header = append(header, k, strings.ReplaceAll(v, "{key}", acct.APIKey))
		}
		res, raw := send(t, nil, q.Method, strings.ReplaceAll(q.URL, "{base}", s.base+"/v1"), body, header...)
		answers[q.Name], statuses[q.Name] = raw, res.StatusCode
	}

	var models struct{ Models []map[string]any }
	if err := json.Unmarshal(answers["models"], &models); statuses["models"] != 200 || err != nil || len(models.Models) == 0 || models.Models[0]["id"] == nil {
		t.Errorf("models: %d %s", statuses["models"], answers["models"])
	}
	var voices struct{ Voices []map[string]any }
	byID := map[string]any{}
	if err := json.Unmarshal(answers["voices"], &voices); statuses["voices"] != 200 || err != nil {
		t.Fatalf("voices: %d %s", statuses["voices"], answers["voices"])
	}
	for _, v := range voices.Voices {
		byID[v["id"].(string)] = v["name"]
	}
	for _, id := range []string{"alloy", "en_US/Kevin"} {
		if name, ok := byID[id].(string); !ok || name == "" {
			t.Errorf("voices lack %s with a name: %s", id, answers["voices"])
		}
	}
	for _, name := range []string{"speech", "speech with a voice from the list"} {
		if statuses[name] != 200 {
			t.Errorf("%s: %d %s", name, statuses[name], answers[name])
			continue
		}
		path := filepath.Join(t.TempDir(), "speech.mp3")
		if err := os.WriteFile(path, answers[name], 0o600); err != nil {
			t.Fatal(err)
		}
		if d, rms := ffmpegDecode(t, path, "mp3"); d < time.Second || rms < 0.02 {
			t.Errorf("%s decodes to %v at RMS %.4f", name, d, rms)
		}
	}
	var refusal struct{ Error map[string]any }
	if err := json.Unmarshal(answers["speech with a wrong key"], &refusal); statuses["speech with a wrong key"] != 401 || err != nil || refusal.Error["message"] == "" {
		t.Errorf("wrong key: %d %s", statuses["speech with a wrong key"], answers["speech with a wrong key"])
	}
}
