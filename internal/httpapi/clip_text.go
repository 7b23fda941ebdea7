package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/ratelimit"
)

// ClipSpeaker speaks the text of a spoken intro or outro
// (pipeline.Pipeline.SpeakClip).
type ClipSpeaker interface {
	// SpeakClip returns the clip of s.Text spoken with s.Voice, or an
	// EINVALID error for a text it cannot speak or speech too long or
	// too short for a clip.
	SpeakClip(ctx context.Context, kind narrator.ClipKind, s narrator.Speech) (*narrator.Clip, error)
}

// spokenClipBytes caps the body of a spoken clip: its text of
// narrator.MaxClipText characters fits even when every one is escaped as
// a JSON \u sequence.
const spokenClipBytes = 16 << 10

// spokenClipRequest is the JSON body of a PUT of a spoken clip.
type spokenClipRequest struct {
	Text  *string `json:"text"`
	Voice *string `json:"voice"`
}

// putSpokenClip sets the project's clip of kind to a text spoken once,
// here, with a voice of the catalog (its ID or name, as the speech
// convention takes them), the project's pronunciation rules and speaking
// rate. The speech counts against the key's speech requests
// (narrator.SpeechBurst) and the server's cap on syntheses at once, as
// POST /v1/audio/speech does.
func (s *Server) putSpokenClip(w http.ResponseWriter, r *http.Request, p *narrator.Project, kind narrator.ClipKind) error {
	q, err := readSpokenClip(w, r)
	if err != nil {
		return err
	}
	if err := narrator.CheckClipText(kind, *q.Text); err != nil {
		return err
	}
	voice, ok := s.catalog(r.Context()).SpeechVoice(p.Language, *q.Voice)
	if !ok {
		return narrator.Errorf(narrator.EINVALID, "voice %q is not in the catalog; give a voice's ID or name from GET /api/v3/voices", *q.Voice)
	}
	if s.clipSpeaker == nil {
		return narrator.Errorf(narrator.EUNAVAILABLE, "this server does not synthesise speech; send the %s to a node that does", kind)
	}
	hash := narrator.HashAPIKey(outerAPIKey(r, r.URL.Query()))
	if err := s.speechLimits.Take(w, "Rate limit reached for speech requests of this API key.",
		ratelimit.Limit{Key: "speech:" + hex.EncodeToString(hash[:8]), Burst: narrator.SpeechBurst, Every: narrator.SpeechEvery}); err != nil {
		return err
	}
	select {
	case s.speaking <- struct{}{}:
		defer func() { <-s.speaking }()
	default:
		return narrator.Errorf(narrator.EUNAVAILABLE, "the server is busy with other speech; try again shortly")
	}
	clip, err := s.clipSpeaker.SpeakClip(r.Context(), kind,
		narrator.Speech{ProjectID: p.ID, Voice: voice, Text: *q.Text, Speed: p.Rate()})
	if err != nil {
		return err
	}
	if err := s.store.SetClip(r.Context(), clip); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newClipJSON(clip))
	return nil
}

// readSpokenClip reads the JSON body of a spoken clip, with its text and
// voice both given.
func readSpokenClip(w http.ResponseWriter, r *http.Request) (*spokenClipRequest, error) {
	if r.ContentLength > spokenClipBytes {
		return nil, tooLarge(spokenClipBytes)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, spokenClipBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge(spokenClipBytes)
		}
		return nil, narrator.BodyError(err)
	}
	var q spokenClipRequest
	if err := json.Unmarshal(raw, &q); err != nil {
		return nil, narrator.Errorf(narrator.EINVALID, "the body must be a JSON object with text and voice: %s", jsonProblem(err))
	}
	if q.Text == nil {
		return nil, narrator.Errorf(narrator.EINVALID, "text is required: the words to speak")
	}
	if q.Voice == nil || *q.Voice == "" {
		return nil, narrator.Errorf(narrator.EINVALID, "voice is required: a voice's ID or name from GET /api/v3/voices")
	}
	return &q, nil
}
