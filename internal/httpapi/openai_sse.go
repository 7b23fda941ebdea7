package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/narrator/narrator"
)

// Speech as server-sent events (stream_format sse): each piece of audio,
// as the speaker writes it, is a speech.audio.delta event carrying it in
// base64; a speech.audio.done event with the usage ends the stream. Each
// event is a data: line of JSON, as OpenAI sends them.

// speechDelta is the event of one piece of audio.
type speechDelta struct {
	Type  string `json:"type"`
	Audio string `json:"audio"`
}

// speechDone is the event that ends a speech.
type speechDone struct {
	Type  string      `json:"type"`
	Usage speechUsage `json:"usage"`
}

// speechUsage is OpenAI's usage of a speech. Narrator does not count
// tokens: the input tokens are the input's characters, and it reports no
// output tokens.
type speechUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// eventWriter writes each write as a speech.audio.delta event to a
// streamWriter, which sends the status at the first event and flushes
// every one.
type eventWriter struct {
	out *streamWriter
}

func (e *eventWriter) Write(p []byte) (int, error) {
	if err := e.event(speechDelta{Type: "speech.audio.delta", Audio: base64.StdEncoding.EncodeToString(p)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// event writes v as one event.
func (e *eventWriter) event(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode speech event: %w", err)
	}
	if _, err := fmt.Fprintf(e.out, "data: %s\n\n", raw); err != nil {
		return fmt.Errorf("write speech event: %w", err)
	}
	return nil
}

// speakEvents speaks sp as server-sent events. A failure before the first
// event is an ordinary error answer; after it, an error event in OpenAI's
// shape ends the stream (the SDKs raise it).
func (s *Server) speakEvents(w http.ResponseWriter, r *http.Request, sp narrator.Speech) error {
	e := &eventWriter{out: &streamWriter{w: w, contentType: "text/event-stream"}}
	w.Header().Set("Cache-Control", "no-cache")
	err := s.speaker.Speak(r.Context(), sp, e)
	if err != nil && !e.out.started {
		return speakRefusal(err)
	}
	if err != nil {
		s.logSpeechFailure(r, sp, err)
		if r.Context().Err() == nil {
			// Best effort: the stream is cut either way.
			_ = e.event(openAIErrorBody{Error: openAIErrorJSON{Message: "The speech failed partway; try again.", Type: "server_error"}})
		}
		return nil
	}
	n := utf8.RuneCountInString(sp.Text)
	if err := e.event(speechDone{Type: "speech.audio.done", Usage: speechUsage{InputTokens: n, TotalTokens: n}}); err != nil {
		s.logSpeechFailure(r, sp, err)
	}
	return nil
}
