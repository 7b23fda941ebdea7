package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/ratelimit"
)

// The OpenAI speech convention: POST /v1/audio/speech and the lists that
// apps read before they call it, authenticated with a Narrator API key as
// a Bearer token, answering errors in OpenAI's shape.

// Speaker speaks texts at once (pipeline.Pipeline).
type Speaker interface {
	// Speak writes s to w as it is spoken. It returns EINVALID before
	// writing anything for what it cannot speak; an error after the first
	// write leaves w with a partial stream.
	Speak(ctx context.Context, s narrator.Speech, w io.Writer) error
}

// speechBodyBytes caps a speech request's body: an input of
// narrator.MaxSpeechInput characters fits even when every one is escaped
// as a JSON \u sequence.
const speechBodyBytes = 64 << 10

// openAIErrorBody is OpenAI's error answer.
type openAIErrorBody struct {
	Error openAIErrorJSON `json:"error"`
}

type openAIErrorJSON struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// paramError is a client mistake in one field of a request, with
// OpenAI's code for it.
type paramError struct {
	param, code string
	err         error
}

func (e *paramError) Error() string { return e.err.Error() }
func (e *paramError) Unwrap() error { return e.err }

// invalidParam returns the EINVALID error of field param, with OpenAI's
// code for it ("invalid_value" and the like).
func invalidParam(param, code, format string, args ...any) error {
	return &paramError{param: param, code: code, err: narrator.Errorf(narrator.EINVALID, format, args...)}
}

// openAIType gives each status OpenAI's error type and, where OpenAI has
// one, its code.
func openAIType(status int) (typ, code string) {
	switch status {
	case http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case http.StatusTooManyRequests:
		return "requests", "rate_limit_exceeded"
	case http.StatusNotFound:
		return "invalid_request_error", "unknown_url"
	case http.StatusServiceUnavailable:
		return "server_error", "server_busy"
	case http.StatusInternalServerError:
		return "server_error", ""
	}
	return "invalid_request_error", ""
}

// writeOpenAIError writes err in OpenAI's shape, with the status the v3
// error table gives its code (errorTable), so that both edges agree.
// Internal error text never reaches the client.
func writeOpenAIError(w http.ResponseWriter, err error) {
	e, ok := errorTable[narrator.ErrorCode(err)]
	if !ok {
		e = errorTable[narrator.EINTERNAL]
	}
	msg := e.message
	if msg == "" || e.status == http.StatusUnauthorized {
		msg = narrator.ErrorMessage(err)
	}
	typ, code := openAIType(e.status)
	body := openAIErrorJSON{Message: msg, Type: typ}
	if code != "" {
		body.Code = &code
	}
	if pe := (*paramError)(nil); errors.As(err, &pe) {
		body.Param, body.Code = &pe.param, &pe.code
	}
	if e.status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(int(narrator.UnavailableRetryAfter.Seconds())))
	}
	writeJSON(w, e.status, openAIErrorBody{Error: body})
}

// handleOpenAI is handle for the convention's routes: errors are written
// in OpenAI's shape.
func (s *Server) handleOpenAI(h handlerFunc) http.Handler {
	return s.handleWith(h, writeOpenAIError)
}

// bearer is a call of the convention: the account of the key, and the
// key's hash.
type bearer struct {
	accountID int64
	hash      []byte
}

// bearerOptional is bearerAuthed for the lists Open WebUI reads without
// a key: without one, h gets the zero bearer; a wrong key is still
// refused.
func (s *Server) bearerOptional(h func(w http.ResponseWriter, r *http.Request, b bearer) error) handlerFunc {
	authed := s.bearerAuthed(h)
	return func(w http.ResponseWriter, r *http.Request) error {
		if outerAPIKey(r, r.URL.Query()) == "" {
			return h(w, r, bearer{})
		}
		return authed(w, r)
	}
}

// bearerAuthed resolves the request's API key, a Bearer token (or the
// other places outerAPIKey reads), to its account before calling h.
func (s *Server) bearerAuthed(h func(w http.ResponseWriter, r *http.Request, b bearer) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		key := outerAPIKey(r, r.URL.Query())
		if key == "" {
			return narrator.Errorf(narrator.EUNAUTHORIZED, "No API key: send a Narrator API key as Authorization: Bearer KEY.")
		}
		hash := narrator.HashAPIKey(key)
		accountID, err := s.store.AuthenticateAPIKey(r.Context(), hash)
		if narrator.ErrorCode(err) == narrator.EUNAUTHORIZED {
			return narrator.Errorf(narrator.EUNAUTHORIZED, "Incorrect API key provided.")
		}
		if err != nil {
			return err
		}
		return h(w, r, bearer{accountID: accountID, hash: hash})
	}
}

// The stream formats of a speech: the audio itself, or server-sent events
// that carry it in base64 (OpenAI offers sse for some models only; Narrator
// for all).
const (
	streamAudio = "audio"
	streamSSE   = "sse"
)

// speechRequest is the body of POST /v1/audio/speech. Fields OpenAI has
// that Narrator has no use for (instructions) are accepted and ignored.
type speechRequest struct {
	Model          string          `json:"model"`
	Input          *string         `json:"input"`
	Voice          json.RawMessage `json:"voice"`
	ResponseFormat string          `json:"response_format"`
	Speed          *float64        `json:"speed"`
	StreamFormat   string          `json:"stream_format"`
	// NarratorProject names the project whose pronunciation rules speak,
	// by ID, when the key's account has several.
	NarratorProject json.RawMessage `json:"narrator_project"`
}

// voiceName returns the voice field: a string, or an object with an id.
func (q *speechRequest) voiceName() (string, error) {
	if len(q.Voice) == 0 || string(q.Voice) == "null" {
		return "", invalidParam("voice", "missing_required_parameter", "voice is required.")
	}
	var name string
	if json.Unmarshal(q.Voice, &name) == nil {
		return name, nil
	}
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(q.Voice, &obj) == nil && obj.ID != "" {
		return obj.ID, nil
	}
	return "", invalidParam("voice", "invalid_type", "voice must be a voice's name or ID, or an object with an id.")
}

// validate checks the request and fills in its defaults.
func (q *speechRequest) validate() error {
	if q.Model == "" {
		return invalidParam("model", "missing_required_parameter", "model is required; one of %s.", strings.Join(narrator.SpeechModels(), ", "))
	}
	if !slices.Contains(narrator.SpeechModels(), q.Model) {
		return invalidParam("model", "invalid_value", "Invalid value: %q. Supported values are: %s.", q.Model, strings.Join(narrator.SpeechModels(), ", "))
	}
	if q.Input == nil || strings.TrimSpace(*q.Input) == "" {
		return invalidParam("input", "missing_required_parameter", "input is required.")
	}
	if n := utf8.RuneCountInString(*q.Input); n > narrator.MaxSpeechInput {
		return invalidParam("input", "string_above_max_length", "input is %d characters; at most %d are allowed.", n, narrator.MaxSpeechInput)
	}
	if q.ResponseFormat == "" {
		q.ResponseFormat = narrator.SpeechMP3
	}
	if !slices.Contains(narrator.SpeechFormats(), q.ResponseFormat) {
		return invalidParam("response_format", "invalid_value", "Invalid value: %q. Supported values are: %s.", q.ResponseFormat, strings.Join(narrator.SpeechFormats(), ", "))
	}
	if q.Speed != nil && (*q.Speed < narrator.MinSpeechSpeed || *q.Speed > narrator.MaxSpeechSpeed) {
		return invalidParam("speed", "invalid_value", "speed %g is out of range: it must be from %g to %g.", *q.Speed, narrator.MinSpeechSpeed, narrator.MaxSpeechSpeed)
	}
	if q.StreamFormat != "" && q.StreamFormat != streamAudio && q.StreamFormat != streamSSE {
		return invalidParam("stream_format", "invalid_value", "Invalid value: %q. Supported values are: %s, %s.", q.StreamFormat, streamAudio, streamSSE)
	}
	return nil
}

// speechContentTypes are the content types of the speech formats.
var speechContentTypes = map[string]string{
	narrator.SpeechMP3: "audio/mpeg",
	narrator.SpeechWAV: "audio/wav",
	narrator.SpeechPCM: "audio/pcm",
}

// createSpeech is POST /v1/audio/speech: it speaks the input with the key's
// project's pronunciation rules and streams the audio, chunked, sentence by
// sentence as it is made. A key's calls are rate limited (narrator.SpeechBurst),
// and beyond the cap on concurrent syntheses a call is refused at once
// (503) rather than queued.
func (s *Server) createSpeech(w http.ResponseWriter, r *http.Request, b bearer) error {
	if err := s.speechLimits.Take(w, "Rate limit reached for speech requests of this API key.",
		ratelimit.Limit{Key: "speech:" + hex.EncodeToString(b.hash[:8]), Burst: narrator.SpeechBurst, Every: narrator.SpeechEvery}); err != nil {
		return err
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, speechBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return invalidParam("input", "string_above_max_length", "The request body is over %d bytes.", speechBodyBytes)
		}
		return narrator.BodyError(err)
	}
	var q speechRequest
	if err := json.Unmarshal(raw, &q); err != nil {
		return narrator.Errorf(narrator.EINVALID, "The request body is not a JSON object of the speech request: %s", jsonProblem(err))
	}
	if err := q.validate(); err != nil {
		return err
	}
	name, err := q.voiceName()
	if err != nil {
		return err
	}
	proj, err := s.speechProject(r.Context(), b, q.NarratorProject)
	if err != nil {
		return err
	}
	language := "en_US"
	if proj != nil {
		language = proj.Language
	}
	voice, ok := s.catalog(r.Context()).SpeechVoice(language, name)
	if !ok {
		return invalidParam("voice", "invalid_value", "Invalid value: %q. Supported values are the voices GET /v1/audio/voices lists (by id or name) and %s.", name, strings.Join(narrator.SpeechAliases(), ", "))
	}
	if s.speaker == nil {
		return narrator.Errorf(narrator.EUNAVAILABLE, "This server does not synthesise speech (its role is api); send speech requests to a node that works.")
	}
	select {
	case s.speaking <- struct{}{}:
		defer func() { <-s.speaking }()
	default:
		return narrator.Errorf(narrator.EUNAVAILABLE, "The server is busy with other speech requests; try again shortly.")
	}
	sp := narrator.Speech{Voice: voice, Text: *q.Input, Format: q.ResponseFormat}
	if proj != nil {
		sp.ProjectID = proj.ID
	}
	if q.Speed != nil {
		sp.Speed = *q.Speed
	}
	if q.StreamFormat == streamSSE {
		return s.speakEvents(w, r, sp)
	}
	out := &streamWriter{w: w, contentType: speechContentTypes[q.ResponseFormat]}
	err = s.speaker.Speak(r.Context(), sp, out)
	if err == nil || !out.started {
		return speakRefusal(err)
	}
	// The status is sent: cut the stream short, so that the client sees
	// an error and not a shorter audio.
	s.logSpeechFailure(r, sp, err)
	panic(http.ErrAbortHandler)
}

// speakRefusal is the error of a speech the speaker refused before it
// wrote: what it cannot speak is the input's fault.
func speakRefusal(err error) error {
	if narrator.ErrorCode(err) == narrator.EINVALID {
		return &paramError{param: "input", code: "invalid_value", err: err}
	}
	return err
}

// logSpeechFailure logs a speech stream that failed after its status was
// sent, unless the client hung up.
func (s *Server) logSpeechFailure(r *http.Request, sp narrator.Speech, err error) {
	if r.Context().Err() != nil {
		// The client hung up: not the server's fault.
		s.logger.DebugContext(r.Context(), "speech stream ended by the client", "voice", sp.Voice.Name)
		return
	}
	s.logger.ErrorContext(r.Context(), "speech stream failed", "voice", sp.Voice.Name, "err", err)
}

// jsonProblem is a safe description of why a body is not the JSON
// expected.
func jsonProblem(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Sprintf("field %s has the wrong type", te.Field)
	}
	return "not valid JSON"
}

// speechProject returns the project whose rules speak a request: the
// project named by narrator_project, which must be the key's account's,
// else the account's first project (the lowest ID), or nil if it has none.
func (s *Server) speechProject(ctx context.Context, b bearer, named json.RawMessage) (*narrator.Project, error) {
	if len(named) > 0 && string(named) != "null" {
		var id int64
		var str string
		if json.Unmarshal(named, &str) == nil {
			id, _ = strconv.ParseInt(str, 10, 64)
		} else if json.Unmarshal(named, &id) != nil {
			id = 0
		}
		if id <= 0 {
			return nil, invalidParam("narrator_project", "invalid_value", "narrator_project must be a project's ID.")
		}
		p, err := s.store.AuthorizeProject(ctx, b.hash, id)
		if narrator.ErrorCode(err) == narrator.ENOTFOUND {
			return nil, invalidParam("narrator_project", "invalid_value", "The API key's account has no project %d.", id)
		}
		return p, err
	}
	ps, err := s.store.ListProjects(ctx, b.accountID)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

// streamWriter sends the status and the headers at the first write, and
// flushes every write, so that the client hears each sentence as soon as
// it is spoken.
type streamWriter struct {
	w           http.ResponseWriter
	contentType string
	started     bool
}

func (sw *streamWriter) Write(p []byte) (int, error) {
	if !sw.started {
		sw.started = true
		sw.w.Header().Set("Content-Type", sw.contentType)
		sw.w.WriteHeader(http.StatusOK)
	}
	n, err := sw.w.Write(p)
	if err != nil {
		return n, err
	}
	if err := http.NewResponseController(sw.w).Flush(); err != nil {
		return n, fmt.Errorf("flush speech: %w", err)
	}
	return n, nil
}

// voiceEntry is a voice as the convention's list gives it: Open WebUI
// reads id and name.
type voiceEntry struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Language string `json:"language"`
	Gender   string `json:"gender"`
	// Alias is set on the entries of OpenAI's voice names: the voice it
	// speaks with for the key's project.
	Alias string `json:"alias_of,omitempty"`
}

// listSpeechVoices is GET /v1/audio/voices: OpenAI's voice names, as
// aliases for the key's project's language (en_US without a key), then
// every voice of the catalog.
func (s *Server) listSpeechVoices(w http.ResponseWriter, r *http.Request, b bearer) error {
	language := "en_US"
	if b.hash != nil {
		proj, err := s.speechProject(r.Context(), b, nil)
		if err != nil {
			return err
		}
		if proj != nil {
			language = proj.Language
		}
	}
	cat := s.catalog(r.Context())
	out := []voiceEntry{}
	for _, alias := range narrator.SpeechAliases() {
		if v, ok := cat.SpeechVoice(language, alias); ok {
			out = append(out, voiceEntry{ID: alias, Name: alias + " (" + v.Name + ")", Language: v.Language, Gender: v.Gender, Alias: narrator.SpeechVoiceID(v)})
		}
	}
	for _, v := range cat.Voices() {
		out = append(out, voiceEntry{ID: narrator.SpeechVoiceID(v), Name: v.Label() + ", " + v.Language, Language: v.Language, Gender: v.Gender})
	}
	writeJSON(w, http.StatusOK, map[string]any{"voices": out})
	return nil
}

// modelEntry is a model in OpenAI's list.
type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// listModels is GET /v1/models, in OpenAI's shape: the speech models,
// which all speak the same way.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request, b bearer) error {
	out := []modelEntry{}
	for _, m := range narrator.SpeechModels() {
		out = append(out, modelEntry{ID: m, Object: "model", OwnedBy: "narrator"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": out})
	return nil
}

// listSpeechModels is GET /v1/audio/models, the list Open WebUI reads:
// {"models":[{"id"}]}.
func (s *Server) listSpeechModels(w http.ResponseWriter, r *http.Request, b bearer) error {
	out := []map[string]string{}
	for _, m := range narrator.SpeechModels() {
		out = append(out, map[string]string{"id": m})
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": out})
	return nil
}

// openAIPrefix is the path prefix of the convention's routes, whose errors
// are in OpenAI's shape.
const openAIPrefix = "/v1/"

// isOpenAIPath reports whether path is one of the convention's.
func isOpenAIPath(path string) bool { return strings.HasPrefix(path, openAIPrefix) }
