//go:build e2e

package main

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/narrator/narrator/internal/proctest"
)

// ffmpegDecode decodes audio with ffmpeg (the raw PCM of format pcm is
// described to it) and returns its length and RMS.
func ffmpegDecode(t *testing.T, path, format string) (time.Duration, float64) {
	t.Helper()
	args := []string{"-v", "error"}
	if format == "pcm" {
		args = append(args, "-f", "s16le", "-ar", "24000", "-ac", "1")
	}
	args = append(args, "-i", path, "-f", "s16le", "-ar", "16000", "-ac", "1", "-")
	var stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), "ffmpeg", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("ffmpeg decode %s: %v %s", filepath.Base(path), err, stderr.String())
	}
	var sum float64
	for i := 0; i+1 < len(out); i += 2 {
		v := float64(int16(uint16(out[i])|uint16(out[i+1])<<8)) / 32768
		sum += v * v
	}
	n := len(out) / 2
	return time.Duration(n) * time.Second / 16000, math.Sqrt(sum / float64(max(n, 1)))
}

// TestOpenAISpeech drives the OpenAI speech convention with OpenAI's own Go
// SDK, unchanged, against a real server: each format decodes with ffmpeg,
// a stream written to a file plays, the voices and models list, and each
// error comes back as the SDK's *openai.Error. It also logs the time to
// the first bytes of a speech stream beside the time to the live stream's
// first audio of an article of the same sentences, in the same voice.
func TestOpenAISpeech(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t))
	client := openai.NewClient(option.WithBaseURL(s.base+"/v1/"), option.WithAPIKey(acct.APIKey), option.WithMaxRetries(0))
	ctx := t.Context()
	speech := func(input, voice string, format openai.AudioSpeechNewParamsResponseFormat) openai.AudioSpeechNewParams {
		return openai.AudioSpeechNewParams{Model: "tts-1", Input: input,
			Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(voice)}, ResponseFormat: format}
	}

	for _, format := range []openai.AudioSpeechNewParamsResponseFormat{"mp3", "wav", "pcm"} {
		t.Run(string(format), func(t *testing.T) {
			res, err := client.Audio.Speech.New(ctx, speech("The quick brown fox jumps over the lazy dog. It was not amused.", "en_US/Kevin", format))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			// Streamed to a file as it comes, then played back.
			path := filepath.Join(t.TempDir(), "speech."+string(format))
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, res.Body); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if te := res.TransferEncoding; len(te) == 0 || te[0] != "chunked" {
				t.Errorf("Transfer-Encoding %v, want chunked", te)
			}
			d, rms := ffmpegDecode(t, path, string(format))
			if d < 2*time.Second || d > 8*time.Second || rms < 0.02 {
				t.Errorf("%s decodes to %v at RMS %.4f, want a few seconds of speech", format, d, rms)
			}
		})
	}

	t.Run("sse", func(t *testing.T) {
		input := sentences("events", 24)
		p := speech(input, "en_US/Kevin", "mp3")
		p.StreamFormat = openai.AudioSpeechNewParamsStreamFormatSSE
		start := time.Now()
		res, err := client.Audio.Speech.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		audio, first, done := readSpeechEvents(t, ssestream.NewStream[speechEvent](ssestream.NewDecoder(res), nil), len([]rune(input)))
		firstDelta, whole := first.Sub(start), done.Sub(start)
		t.Logf("speech events: first delta %d ms, done %d ms", firstDelta.Milliseconds(), whole.Milliseconds())
		// Sentences of the same length: the first delta comes with the
		// first sentence, long before the last one is spoken.
		if 2*firstDelta >= whole {
			t.Errorf("first delta at %v, done at %v: not streamed sentence by sentence", firstDelta, whole)
		}
		path := filepath.Join(t.TempDir(), "events.mp3")
		if err := os.WriteFile(path, audio, 0o600); err != nil {
			t.Fatal(err)
		}
		if d, rms := ffmpegDecode(t, path, "mp3"); d < 30*time.Second || rms < 0.02 {
			t.Errorf("the events' audio decodes to %v at RMS %.4f, want 24 sentences of speech", d, rms)
		}
	})

	// The voices, as Open WebUI reads them, through the SDK's own GET.
	var voices struct {
		Voices []struct{ ID, Name string } `json:"voices"`
	}
	if err := client.Get(ctx, "audio/voices", nil, &voices); err != nil || len(voices.Voices) < 20 || voices.Voices[0].ID != "alloy" {
		t.Errorf("voices: %v %+v", err, voices)
	}
	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) == 0 || models.Data[0].Object != "model" {
		t.Errorf("models: %v %+v", err, models)
	}

	// Every error path, as the SDK reports it.
	tooLong := strings.Repeat("word ", 1000)
	bad := openai.NewClient(option.WithBaseURL(s.base+"/v1/"), option.WithAPIKey("nk_not_a_key"), option.WithMaxRetries(0))
	for _, c := range []struct {
		name   string
		client openai.Client
		params openai.AudioSpeechNewParams
		status int
		param  string
		code   string
	}{
		{"bad key", bad, speech("Hello.", "alloy", "mp3"), 401, "", "invalid_api_key"},
		{"unknown voice", client, speech("Hello.", "nobody", "mp3"), 400, "voice", "invalid_value"},
		{"too long", client, speech(tooLong, "alloy", "mp3"), 400, "input", "string_above_max_length"},
		{"opus", client, speech("Hello.", "alloy", "opus"), 400, "response_format", "invalid_value"},
		{"stream format", client, func() openai.AudioSpeechNewParams {
			p := speech("Hello.", "alloy", "mp3")
			p.StreamFormat = "websocket"
			return p
		}(), 400, "stream_format", "invalid_value"},
		{"speed", client, func() openai.AudioSpeechNewParams {
			p := speech("Hello.", "alloy", "mp3")
			p.Speed = openai.Float(5)
			return p
		}(), 400, "speed", "invalid_value"},
	} {
		_, err := c.client.Audio.Speech.New(ctx, c.params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != c.status || apiErr.Param != c.param || apiErr.Code != c.code || apiErr.Message == "" {
			t.Errorf("%s: %v, want %d %s %s", c.name, err, c.status, c.param, c.code)
		}
	}

	// First bytes of a speech stream and first audio of the live stream,
	// each of sentences no cache holds, in the project's body voice.
	start := time.Now()
	res, err := client.Audio.Speech.New(ctx, speech(sentences("speech", 40), "alloy", "mp3"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(res.Body, buf); err != nil {
		t.Fatal(err)
	}
	firstBytes := time.Since(start)
	rest, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	whole := time.Since(start)
	if d, _ := decodeMP3(t, append(buf, rest...)); d < 60*time.Second {
		t.Errorf("40 sentences decode to %v", d)
	}

	start = time.Now()
	s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Live", "body": sentences("live", 40), "external_id": "live-1",
	})
	p := s.waitLive(t, proj.ID, "live-1", acct.APIKey)
	_, list := fetch(t, p.LiveURL)
	uris, _, _ := livePlaylist(t, list)
	fetch(t, p.LiveURL[:strings.LastIndex(p.LiveURL, "/")+1]+uris[0])
	live := time.Since(start)
	t.Logf("speech stream: first bytes %d ms, whole %d ms; live stream: first segment %d ms (ratio %.2f)",
		firstBytes.Milliseconds(), whole.Milliseconds(), live.Milliseconds(), float64(firstBytes)/float64(live))
	if firstBytes >= whole {
		t.Errorf("first bytes at %v, the whole stream at %v: not streamed", firstBytes, whole)
	}
}

// speechEvent is an event of stream_format sse, as OpenAI documents it.
type speechEvent struct {
	Type  string `json:"type"`
	Audio []byte `json:"audio"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// readSpeechEvents reads a speech's events with the SDK's decoder: the
// audio of the deltas, joined, and when the first delta and the done event
// arrived. It checks that the done event comes last, once, with inputChars
// as its input tokens.
func readSpeechEvents(t *testing.T, stream *ssestream.Stream[speechEvent], inputChars int) (audio []byte, first, done time.Time) {
	t.Helper()
	defer stream.Close()
	for stream.Next() {
		e := stream.Current()
		if !done.IsZero() {
			t.Fatalf("event %q after the done event", e.Type)
		}
		switch e.Type {
		case "speech.audio.delta":
			if first.IsZero() {
				first = time.Now()
			}
			audio = append(audio, e.Audio...)
		case "speech.audio.done":
			done = time.Now()
			if e.Usage == nil || e.Usage.InputTokens != inputChars || e.Usage.TotalTokens != e.Usage.InputTokens+e.Usage.OutputTokens {
				t.Errorf("usage %+v, want %d input tokens", e.Usage, inputChars)
			}
		default:
			t.Fatalf("unknown event %q", e.Type)
		}
	}
	if err := stream.Err(); err != nil || first.IsZero() || done.IsZero() {
		t.Fatalf("events: %v; first delta %v, done %v", err, first, done)
	}
	return audio, first, done
}

// TestOpenAISpeechNPM drives the convention with the official openai npm
// client, unchanged (testdata/openai-npm/speech.mjs). It needs node and the
// openai package installed in $NARRATOR_OPENAI_NPM (by default
// ~/.cache/narrator/openai-npm, where scripts/test.sh installs it), and
// skips without them (fails under NARRATOR_TEST_FULL=1).
// openaiNPMVersion is the openai npm package scripts/test.sh installs.
const openaiNPMVersion = "5.23.2"

func TestOpenAISpeechNPM(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("NARRATOR_OPENAI_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "narrator", "openai-npm")
	}
	if _, err := exec.LookPath("node"); err != nil {
		proctest.Missing(t, "node", "apt-get install nodejs")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		proctest.Missing(t, "the openai npm package in "+dir, "npm install --prefix "+dir+" openai@"+openaiNPMVersion)
	}
	data, acct, _ := fixture(t)
	s := startServer(t, data, freeAddr(t))
	tmp := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join("testdata", "openai-npm", "speech.mjs"), tmp)
	sseInput := sentences("npm", 24)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+s.base+"/v1", "OPENAI_API_KEY="+acct.APIKey, "OPENAI_NPM_DIR="+dir, "SSE_INPUT="+sseInput)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	type apiErr struct {
		Status      int
		Code, Param string
		Type        string
	}
	got := mustJSON[struct {
		Files map[string]string
		SSE   struct {
			Types      []string
			FirstDelta float64
			Done       float64
			File       string
			Usage      struct {
				InputTokens int `json:"input_tokens"`
				TotalTokens int `json:"total_tokens"`
			}
		}
		Voices int
		Errors map[string]*apiErr
	}](t, string(raw))
	if ty := got.SSE.Types; len(ty) < 2 || ty[0] != "speech.audio.delta" || ty[len(ty)-1] != "speech.audio.done" || slices.Index(ty, "speech.audio.done") != len(ty)-1 {
		t.Errorf("sse events %v: want deltas, then one done event", ty)
	}
	// Sentences of the same length: the first delta comes with the first
	// sentence, long before the last one is spoken.
	if 2*got.SSE.FirstDelta >= got.SSE.Done {
		t.Errorf("sse: first delta at %.0f ms, done at %.0f ms: not streamed sentence by sentence", got.SSE.FirstDelta, got.SSE.Done)
	}
	if u, n := got.SSE.Usage, len([]rune(sseInput)); u.InputTokens != n || u.TotalTokens != n {
		t.Errorf("sse usage %+v, want %d input tokens", u, n)
	}
	if d, rms := ffmpegDecode(t, got.SSE.File, "mp3"); d < 30*time.Second || rms < 0.02 {
		t.Errorf("sse audio decodes to %v at RMS %.4f", d, rms)
	}
	for _, format := range []string{"mp3", "wav", "pcm"} {
		if d, rms := ffmpegDecode(t, got.Files[format], format); d < time.Second || rms < 0.02 {
			t.Errorf("%s decodes to %v at RMS %.4f", format, d, rms)
		}
	}
	if got.Voices < 20 {
		t.Errorf("%d voices", got.Voices)
	}
	want := map[string]*apiErr{
		"bad key":       {401, "invalid_api_key", "", "invalid_request_error"},
		"unknown voice": {400, "invalid_value", "voice", "invalid_request_error"},
		"too long":      {400, "string_above_max_length", "input", "invalid_request_error"},
		"stream format": {400, "invalid_value", "stream_format", "invalid_request_error"},
	}
	for name, w := range want {
		if g := got.Errors[name]; g == nil || *g != *w {
			t.Errorf("%s: %+v, want %+v", name, g, w)
		}
	}
}
