package httpapi

import (
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"time"

	"github.com/narrator/narrator"
)

// clipJSON is a project's intro or outro, an extension: the audio, or a
// text to speak, is the body of a PUT, and described here.
type clipJSON struct {
	ProjectID  int64     `json:"project_id"`
	Kind       string    `json:"kind"`
	Duration   float64   `json:"duration"` // seconds, to the millisecond
	SampleRate int       `json:"sample_rate"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Text and Voice are a spoken clip's; an uploaded one has neither.
	Text  string `json:"text,omitempty"`
	Voice string `json:"voice,omitempty"`
}

func newClipJSON(c *narrator.Clip) clipJSON {
	return clipJSON{
		ProjectID: c.ProjectID, Kind: string(c.Kind), SampleRate: c.SampleRate, UpdatedAt: c.UpdatedAt.UTC(),
		Text: c.Text, Voice: c.Voice,
		Duration: math.Round(c.Duration().Seconds()*1000) / 1000,
	}
}

// authedUpload is authed for a handler that reads the request body
// itself, an upload: the key comes in the query or a header, never in the
// body, and only the query's parameters are read.
func (s *Server) authedUpload(h callHandler) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		query := r.URL.Query()
		key := outerAPIKey(r, query)
		if key == "" {
			return errNoKey()
		}
		c, err := s.authenticate(r, key, false)
		if err != nil {
			return err
		}
		c.params = &params{query: query}
		return h(w, r, c)
	}
}

// clip resolves the path's project and its clip of kind: ENOTFOUND for
// a project without one.
func (s *Server) clip(r *http.Request, c *call, kind narrator.ClipKind) (*narrator.Clip, error) {
	p, err := s.project(r, c)
	if err != nil {
		return nil, err
	}
	return s.store.Clip(r.Context(), p.ID, kind)
}

// getClip answers the project's clip of kind, or 404.
func (s *Server) getClip(kind narrator.ClipKind) callHandler {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		clip, err := s.clip(r, c, kind)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, newClipJSON(clip))
		return nil
	}
}

// putClip sets the project's clip of kind from the body, an MP3 or WAV
// file of at most narrator.MaxClipBytes, decoded once here so that every
// rendering plays the same samples, or a JSON text to speak
// (putSpokenClip). It renders nothing again.
func (s *Server) putClip(kind narrator.ClipKind) callHandler {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		p, err := s.project(r, c)
		if err != nil {
			return err
		}
		mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mediaType == "application/json" {
			return s.putSpokenClip(w, r, p, kind)
		}
		if s.clips == nil {
			return narrator.Errorf(narrator.EUNAVAILABLE, "this server cannot decode audio")
		}
		if r.ContentLength > narrator.MaxClipBytes {
			return tooLarge(narrator.MaxClipBytes)
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, narrator.MaxClipBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return tooLarge(narrator.MaxClipBytes)
			}
			return narrator.BodyError(err)
		}
		clip, err := s.clips.DecodeClip(r.Context(), kind, mediaType, data)
		if err != nil {
			return err
		}
		clip.ProjectID = p.ID
		if err := s.store.SetClip(r.Context(), clip); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, newClipJSON(clip))
		return nil
	}
}

// removeClip removes the project's clip of kind, or answers 404, and
// answers the clip removed. Audios made with it keep it.
func (s *Server) removeClip(kind narrator.ClipKind) callHandler {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		clip, err := s.clip(r, c, kind)
		if err != nil {
			return err
		}
		if err := s.store.RemoveClip(r.Context(), clip.ProjectID, kind); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, newClipJSON(clip))
		return nil
	}
}
