package httpapi_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/openapitest"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// fakeSpeaker writes "audio:" and the text, or fails as told, and records
// what it was asked.
type fakeSpeaker struct {
	mu    sync.Mutex
	asked []narrator.Speech
	// before fails before writing; block waits until released.
	before  error
	started chan struct{}
	release chan struct{}
}

func (f *fakeSpeaker) Speak(ctx context.Context, s narrator.Speech, w io.Writer) error {
	f.mu.Lock()
	f.asked = append(f.asked, s)
	f.mu.Unlock()
	if f.before != nil {
		return f.before
	}
	if f.release != nil {
		close(f.started)
		<-f.release
	}
	_, err := io.WriteString(w, "audio:"+s.Text)
	return err
}

// speechBundle is an API server with a speaker on a real SQLite store.
type speechBundle struct {
	*testBundle
	speaker *fakeSpeaker
}

func setupSpeech(t *testing.T, speaker *fakeSpeaker, maxSpeeches int) *speechBundle {
	t.Helper()
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	d := httpapi.Deps{Store: st, MaxSpeeches: maxSpeeches}
	if speaker != nil {
		d.Speaker = speaker
	}
	api := httpapi.NewServer(d)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	b := &speechBundle{testBundle: &testBundle{api: api, store: st, srv: srv, contract: openapitest.MustLoad(t)}, speaker: speaker}
	b.account, b.key = b.newAccount(t, "Acme")
	b.project = b.newProject(t, b.account)
	return b
}

// speech posts a speech request with key as a Bearer token ("" for none),
// checked against the OpenAPI document.
func (b *speechBundle) speech(t *testing.T, key string, body any) response {
	t.Helper()
	raw, ok := body.(string)
	if !ok {
		j, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(j)
	}
	return b.raw(t, "POST", "/v1/audio/speech", key, raw)
}

func (b *speechBundle) raw(t *testing.T, method, path, key, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, b.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return b.send(t, req)
}

// send sends req, checked against the OpenAPI document, and reads the
// answer.
func (b *speechBundle) send(t *testing.T, req *http.Request) response {
	t.Helper()
	res, err := (&http.Client{Transport: b.contract.Transport(t, nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: out}
}

// openAIError is OpenAI's error body, decoded strictly.
type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decodeOpenAIError(t *testing.T, r response) (status int, typ, param, code string) {
	t.Helper()
	var e openAIError
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("%d %s is not an OpenAI error: %v", r.status, r.body, err)
	}
	if e.Error.Param != nil {
		param = *e.Error.Param
	}
	if e.Error.Code != nil {
		code = *e.Error.Code
	}
	return r.status, e.Error.Type, param, code
}

func str(s string) *string { return &s }

// TestSpeechErrors checks every refusal of the speech convention: OpenAI's
// error shape, its status, type, param and code, and that the speaker is
// never asked.
func TestSpeechErrors(t *testing.T) {
	t.Parallel()
	b := setupSpeech(t, &fakeSpeaker{}, 0)
	otherAccount, _ := b.newAccount(t, "Other")
	other := b.newProject(t, otherAccount)
	ok := map[string]any{"model": "tts-1", "input": "Hello.", "voice": "alloy"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	type want struct {
		status            int
		typ, param, code  string
		messageContaining string
	}
	tests := []struct {
		name string
		key  *string // nil: the account's key
		body any
		want want
	}{
		{"no key", str(""), ok, want{401, "invalid_request_error", "", "invalid_api_key", "API key"}},
		{"bad key", str("nk_wrong"), ok, want{401, "invalid_request_error", "", "invalid_api_key", "Incorrect API key"}},
		{"not JSON", nil, "{", want{400, "invalid_request_error", "", "", "not valid JSON"}},
		{"wrong type", nil, `{"model":"tts-1","input":5,"voice":"alloy"}`, want{400, "invalid_request_error", "", "", "wrong type"}},
		{"no model", nil, with("model", nil), want{400, "invalid_request_error", "model", "missing_required_parameter", "model"}},
		{"unknown model", nil, with("model", "whisper-1"), want{400, "invalid_request_error", "model", "invalid_value", "tts-1"}},
		{"no input", nil, with("input", nil), want{400, "invalid_request_error", "input", "missing_required_parameter", "input"}},
		{"blank input", nil, with("input", "  "), want{400, "invalid_request_error", "input", "missing_required_parameter", "input"}},
		{"input too long", nil, with("input", strings.Repeat("é", narrator.MaxSpeechInput+1)), want{400, "invalid_request_error", "input", "string_above_max_length", "4096"}},
		{"no voice", nil, with("voice", nil), want{400, "invalid_request_error", "voice", "missing_required_parameter", "voice"}},
		{"unknown voice", nil, with("voice", "nobody"), want{400, "invalid_request_error", "voice", "invalid_value", "alloy"}},
		{"voice of a wrong type", nil, with("voice", 3), want{400, "invalid_request_error", "voice", "invalid_type", "voice"}},
		{"opus", nil, with("response_format", "opus"), want{400, "invalid_request_error", "response_format", "invalid_value", "mp3, wav, pcm"}},
		{"speed too low", nil, with("speed", 0.1), want{400, "invalid_request_error", "speed", "invalid_value", "0.25"}},
		{"speed too high", nil, with("speed", 4.5), want{400, "invalid_request_error", "speed", "invalid_value", "4"}},
		{"unknown stream format", nil, with("stream_format", "websocket"), want{400, "invalid_request_error", "stream_format", "invalid_value", "audio, sse"}},
		{"another account's project", nil, with("narrator_project", other.ID), want{400, "invalid_request_error", "narrator_project", "invalid_value", "no project"}},
		{"project not an ID", nil, with("narrator_project", "news"), want{400, "invalid_request_error", "narrator_project", "invalid_value", "ID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key := b.key
			if tt.key != nil {
				key = *tt.key
			}
			r := b.speech(t, key, tt.body)
			status, typ, param, code := decodeOpenAIError(t, r)
			got := want{status, typ, param, code, tt.want.messageContaining}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s\nbody %s", diff, r.body)
			}
			if !strings.Contains(string(r.body), tt.want.messageContaining) {
				t.Errorf("message %s does not say %q", r.body, tt.want.messageContaining)
			}
		})
	}
	if n := len(b.speaker.asked); n != 0 {
		t.Errorf("the speaker was asked %d times", n)
	}
}

// TestSpeechRefusedBySpeaker: what the speaker refuses before it writes is
// a 400, never a 500.
func TestSpeechRefusedBySpeaker(t *testing.T) {
	t.Parallel()
	b := setupSpeech(t, &fakeSpeaker{before: narrator.Errorf(narrator.EINVALID, "the input has no text that can be read aloud")}, 0)
	r := b.speech(t, b.key, map[string]any{"model": "tts-1", "input": "<p></p>", "voice": "alloy"})
	status, typ, param, code := decodeOpenAIError(t, r)
	if status != 400 || typ != "invalid_request_error" || param != "input" || code != "invalid_value" || !strings.Contains(string(r.body), "read aloud") {
		t.Errorf("%d %s", status, r.body)
	}
}

// TestSpeech checks a spoken request: the voice found by the documented
// rule, the key's account's first project, the speed, the content type.
func TestSpeech(t *testing.T) {
	t.Parallel()
	b := setupSpeech(t, &fakeSpeaker{}, 0)
	second := b.newProject(t, b.account)
	sally, _ := narrator.LookupVoice("en_US", "Sally")
	kevin, _ := narrator.LookupVoice("en_US", "Kevin")
	tests := []struct {
		name        string
		body        map[string]any
		contentType string
		want        narrator.Speech
	}{
		{"alias, default format", map[string]any{"model": "tts-1", "input": "Hello.", "voice": "alloy"}, "audio/mpeg",
			narrator.Speech{ProjectID: b.project.ID, Voice: sally, Text: "Hello.", Format: "mp3"}},
		{"name, wav, speed", map[string]any{"model": "gpt-4o-mini-tts", "input": "Hi.", "voice": "Kevin", "response_format": "wav", "speed": 1.5, "instructions": "Cheerful."}, "audio/wav",
			narrator.Speech{ProjectID: b.project.ID, Voice: kevin, Text: "Hi.", Speed: 1.5, Format: "wav"}},
		{"id as an object, pcm, a named project", map[string]any{"model": "narrator", "input": "Yo.", "voice": map[string]string{"id": "en_US/Kevin"}, "response_format": "pcm", "narrator_project": second.ID, "stream_format": "audio"}, "audio/pcm",
			narrator.Speech{ProjectID: second.ID, Voice: kevin, Text: "Yo.", Format: "pcm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.speaker.mu.Lock()
			b.speaker.asked = nil
			b.speaker.mu.Unlock()
			r := b.speech(t, b.key, tt.body)
			if r.status != 200 || r.header.Get("Content-Type") != tt.contentType || string(r.body) != "audio:"+tt.want.Text {
				t.Fatalf("%d %v %q", r.status, r.header, r.body)
			}
			if diff := cmp.Diff([]narrator.Speech{tt.want}, b.speaker.asked); diff != "" {
				t.Errorf("speaker asked (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpeechRateLimited: a key's speech requests beyond the burst answer
// 429 with Retry-After, counted before the body is read; another key is
// not refused.
func TestSpeechRateLimited(t *testing.T) {
	t.Parallel()
	b := setupSpeech(t, &fakeSpeaker{}, 0)
	for i := range narrator.SpeechBurst {
		if r := b.speech(t, b.key, "{"); r.status != 400 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := b.speech(t, b.key, map[string]any{"model": "tts-1", "input": "Hello.", "voice": "alloy"})
	status, typ, _, code := decodeOpenAIError(t, r)
	if status != 429 || typ != "requests" || code != "rate_limit_exceeded" || r.header.Get("Retry-After") == "" {
		t.Errorf("%d %v %s", status, r.header, r.body)
	}
	_, otherKey := b.newAccount(t, "Other")
	if r := b.speech(t, otherKey, map[string]any{"model": "tts-1", "input": "Hello.", "voice": "alloy"}); r.status != 200 {
		t.Errorf("another key: %d %s", r.status, r.body)
	}
}

// TestSpeechBusy: beyond the cap on concurrent syntheses a request answers
// 503 with Retry-After at once; a node without a speaker answers 503.
func TestSpeechBusy(t *testing.T) {
	t.Parallel()
	f := &fakeSpeaker{started: make(chan struct{}), release: make(chan struct{})}
	b := setupSpeech(t, f, 1)
	body := map[string]any{"model": "tts-1", "input": "Hello.", "voice": "alloy"}
	first := make(chan response, 1)
	go func() { first <- b.speech(t, b.key, body) }()
	<-f.started
	r := b.speech(t, b.key, body)
	close(f.release)
	status, typ, _, code := decodeOpenAIError(t, r)
	if status != 503 || typ != "server_error" || code != "server_busy" || r.header.Get("Retry-After") == "" {
		t.Errorf("second: %d %v %s", status, r.header, r.body)
	}
	if r := <-first; r.status != 200 {
		t.Errorf("first: %d %s", r.status, r.body)
	}

	none := setupSpeech(t, nil, 0)
	if status, _, _, _ := decodeOpenAIError(t, none.speech(t, none.key, body)); status != 503 {
		t.Errorf("no speaker: %d", status)
	}
}

// TestSpeechLists checks the voices in the shape Open WebUI reads, the
// models in OpenAI's, and the convention's 404 and 405 in OpenAI's shape.
func TestSpeechLists(t *testing.T) {
	t.Parallel()
	b := setupSpeech(t, &fakeSpeaker{}, 0)
	r := b.raw(t, "GET", "/v1/audio/voices", b.key, "")
	var voices struct {
		Voices []struct{ ID, Name string } `json:"voices"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &voices) != nil {
		t.Fatalf("voices: %d %s", r.status, r.body)
	}
	ids := map[string]string{}
	for _, v := range voices.Voices {
		ids[v.ID] = v.Name
	}
	for id, name := range map[string]string{"alloy": "alloy (Sally)", "onyx": "onyx (Richard)", "en_US/Sally": "Sally (Female), en_US", "de_DE/Anna": "Anna (Female), de_DE"} {
		if ids[id] != name {
			t.Errorf("voice %s is named %q, want %q", id, ids[id], name)
		}
	}
	if len(voices.Voices) != len(narrator.Voices())+len(narrator.SpeechAliases()) {
		t.Errorf("%d voices", len(voices.Voices))
	}

	r = b.raw(t, "GET", "/v1/models", b.key, "")
	var models struct {
		Object string
		Data   []struct{ ID, Object string }
	}
	if r.status != 200 || json.Unmarshal(r.body, &models) != nil || models.Object != "list" || len(models.Data) != len(narrator.SpeechModels()) || models.Data[1].ID != "tts-1" {
		t.Errorf("models: %d %s", r.status, r.body)
	}
	r = b.raw(t, "GET", "/v1/audio/models", b.key, "")
	if r.status != 200 || !strings.Contains(string(r.body), `{"id":"tts-1"}`) {
		t.Errorf("audio models: %d %s", r.status, r.body)
	}
	// Open WebUI lists voices and models without a key.
	for _, path := range []string{"/v1/audio/voices", "/v1/audio/models"} {
		if r := b.raw(t, "GET", path, "", ""); r.status != 200 || !strings.Contains(string(r.body), `"id":"`) {
			t.Errorf("%s without a key: %d %s", path, r.status, r.body)
		}
	}
	for _, c := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/v1/audio/voices", "nk_wrong", 401},
		{"GET", "/v1/models", "", 401},
		{"GET", "/v1/audio/speech", b.key, 405},
		{"GET", "/v1/chat/completions", b.key, 404},
	} {
		r := b.raw(t, c.method, c.path, c.key, "")
		if status, _, _, _ := decodeOpenAIError(t, r); status != c.status {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, status, r.body, c.status)
		}
		if c.status == 405 && r.header.Get("Allow") != "POST" {
			t.Errorf("Allow %q", r.header.Get("Allow"))
		}
	}
}

// stepSpeaker writes its pieces one by one, each only after the test has
// read the event of the one before, then fails with fail if set.
type stepSpeaker struct {
	pieces []string
	next   chan struct{}
	fail   error
}

func (f *stepSpeaker) Speak(ctx context.Context, s narrator.Speech, w io.Writer) error {
	for i, p := range f.pieces {
		if i > 0 {
			<-f.next
		}
		if _, err := io.WriteString(w, p); err != nil {
			return err
		}
	}
	return f.fail
}

// readEvent reads one server-sent event's data line and the blank line
// after it.
func readEvent(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read event: %v", err)
	}
	if blank, err := r.ReadString('\n'); err != nil || blank != "\n" {
		t.Fatalf("event %q not ended by a blank line: %q %v", line, blank, err)
	}
	data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
	if !ok {
		t.Fatalf("not a data line: %q", line)
	}
	return data
}

// TestSpeechEvents checks stream_format sse: each piece of audio is a
// speech.audio.delta event, sent as soon as it is written (the speaker
// writes the next piece only once the test has read the event of the one
// before), then a speech.audio.done event with the usage; a failure
// partway ends the stream with an OpenAI error event.
func TestSpeechEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail error
		last string
	}{
		{"done", nil, `{"type":"speech.audio.done","usage":{"input_tokens":6,"output_tokens":0,"total_tokens":6}}`},
		{"failed partway", errors.New("engine died"), `{"error":{"message":"The speech failed partway; try again.","type":"server_error","param":null,"code":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &stepSpeaker{pieces: []string{"first", "second\x00\xff"}, next: make(chan struct{}), fail: tt.fail}
			st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
			srv := httptest.NewServer(httpapi.NewServer(httpapi.Deps{Store: st, Speaker: f}))
			t.Cleanup(srv.Close)
			b := &testBundle{store: st, srv: srv, contract: openapitest.MustLoad(t)}
			_, key := b.newAccount(t, "Acme")
			req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/v1/audio/speech",
				strings.NewReader(`{"model":"tts-1","input":"Héllo.","voice":"en_US/Kevin","stream_format":"sse"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := (&http.Client{Transport: b.contract.Transport(t, nil)}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %v", res.StatusCode, res.Header)
			}
			r := bufio.NewReader(res.Body)
			var got []string
			for i := range f.pieces {
				got = append(got, readEvent(t, r))
				if i < len(f.pieces)-1 {
					// The next piece is written only now: the event
					// came before the speech ended.
					f.next <- struct{}{}
				}
			}
			got = append(got, readEvent(t, r))
			if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
				t.Errorf("after the last event: %q %v", rest, err)
			}
			want := []string{
				`{"type":"speech.audio.delta","audio":"` + base64.StdEncoding.EncodeToString([]byte("first")) + `"}`,
				`{"type":"speech.audio.delta","audio":"` + base64.StdEncoding.EncodeToString([]byte("second\x00\xff")) + `"}`,
				tt.last,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
