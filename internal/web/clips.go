package web

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/narrator/narrator"
)

// ClipDecoder decodes an uploaded intro or outro (pipeline.ClipDecoder).
type ClipDecoder interface {
	// DecodeClip returns EINVALID for a content type it does not read,
	// audio it cannot decode, or a clip out of its limits.
	DecodeClip(ctx context.Context, kind narrator.ClipKind, contentType string, data []byte) (*narrator.Clip, error)
}

// ClipSpeaker speaks an intro or outro set as a text
// (pipeline.Pipeline.SpeakClip).
type ClipSpeaker interface {
	// SpeakClip returns EINVALID for a text it cannot speak or speech
	// out of a clip's limits.
	SpeakClip(ctx context.Context, kind narrator.ClipKind, s narrator.Speech) (*narrator.Clip, error)
}

// clipView is a project's intro or outro as the Speech page shows it.
type clipView struct {
	Kind     narrator.ClipKind
	Where    string  // "before" or "after"
	Seconds  float64 // 0 when the project has none
	MaxSecs  float64
	MaxBytes int
	// Text and Voice are those of a spoken clip.
	Text, Voice string
	MaxText     int
	// Voices are the voices it may be spoken with, the clip's (or the
	// project's body voice) selected.
	Voices []clipVoice
}

// clipVoice is a voice the Speech page offers to speak a clip with.
type clipVoice struct {
	ID, Label string
	Selected  bool
}

// clipVoices returns the voices of the project's language, selected
// the one whose ID is selected.
func clipVoices(cat *narrator.Catalog, p *narrator.Project, selected string) []clipVoice {
	var out []clipVoice
	for _, v := range cat.Voices() {
		if v.Language == p.Language {
			id := narrator.SpeechVoiceID(v)
			out = append(out, clipVoice{ID: id, Label: v.Label(), Selected: id == selected})
		}
	}
	return out
}

// projectClips returns the project's intro and outro for the page.
func (s *Server) projectClips(ctx context.Context, p *narrator.Project) ([]clipView, error) {
	var out []clipView
	cat := s.catalog(ctx)
	for _, k := range narrator.ClipKinds() {
		v := clipView{Kind: k, Where: "after", MaxSecs: narrator.MaxClipDuration.Seconds(), MaxBytes: narrator.MaxClipBytes,
			MaxText: narrator.MaxClipText, Voice: p.Language + "/" + p.BodyVoice}
		if k == narrator.ClipIntro {
			v.Where = "before"
		}
		c, err := s.store.Clip(ctx, p.ID, k)
		switch narrator.ErrorCode(err) {
		case "":
			v.Seconds = c.Duration().Seconds()
			if c.Text != "" {
				v.Text, v.Voice = c.Text, c.Voice
			}
		case narrator.ENOTFOUND:
		default:
			return nil, err
		}
		v.Voices = clipVoices(cat, p, v.Voice)
		out = append(out, v)
	}
	return out, nil
}

// saveClips sets the intro and outro uploaded with the form, and removes
// those whose remove box is ticked. It renders nothing again: audios keep
// theirs, as the page says.
func (s *Server) saveClips(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	changed := false
	for _, k := range narrator.ClipKinds() {
		did, err := s.saveClip(r, p, k)
		if narrator.ErrorCode(err) == narrator.EINVALID {
			return s.renderSpeech(w, r, q, http.StatusBadRequest, p, fmt.Sprint(p.Rate()), narrator.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		changed = changed || did
	}
	if changed {
		s.setFlash(w, r, "Saved. Audios rendered from now on play it; those made before keep their audio until they are edited or resynthesized.")
	}
	http.Redirect(w, r, speechPath(p), http.StatusSeeOther)
	return nil
}

// saveClip applies the form's field for one clip kind, and reports
// whether it changed anything.
func (s *Server) saveClip(r *http.Request, p *narrator.Project, k narrator.ClipKind) (bool, error) {
	if r.PostForm.Get("remove_"+string(k)) != "" {
		if err := s.store.RemoveClip(r.Context(), p.ID, k); err != nil && narrator.ErrorCode(err) != narrator.ENOTFOUND {
			return false, err
		}
		return true, nil
	}
	text := r.PostForm.Get("text_" + string(k))
	var files []*multipart.FileHeader
	if r.MultipartForm != nil {
		files = r.MultipartForm.File[string(k)]
	}
	if len(files) == 0 || files[0].Size == 0 {
		if strings.TrimSpace(text) == "" {
			return false, nil // nothing given for this clip
		}
		return true, s.speakClip(r, p, k, text, r.PostForm.Get("voice_"+string(k)))
	}
	if strings.TrimSpace(text) != "" {
		return false, narrator.Errorf(narrator.EINVALID, "give the %s as a file or as a text to speak, not both", k)
	}
	if s.clips == nil {
		return false, narrator.Errorf(narrator.EINVALID, "this server cannot decode audio")
	}
	data, err := readUpload(files[0])
	if err != nil {
		return false, err
	}
	clip, err := s.clips.DecodeClip(r.Context(), k, files[0].Header.Get("Content-Type"), data)
	if err != nil {
		return false, err
	}
	clip.ProjectID = p.ID
	return true, s.store.SetClip(r.Context(), clip)
}

// speakClip sets the project's clip of kind to text spoken once, now,
// with the voice of the catalog voiceID names, the project's rules and
// speaking rate, as the API does.
func (s *Server) speakClip(r *http.Request, p *narrator.Project, k narrator.ClipKind, text, voiceID string) error {
	if err := narrator.CheckClipText(k, text); err != nil {
		return err
	}
	voice, ok := s.catalog(r.Context()).SpeechVoice(p.Language, voiceID)
	if !ok {
		return narrator.Errorf(narrator.EINVALID, "choose a voice to speak the %s with", k)
	}
	if s.clipSpeaker == nil {
		return narrator.Errorf(narrator.EINVALID, "this server cannot synthesise speech; upload the %s as a file", k)
	}
	clip, err := s.clipSpeaker.SpeakClip(r.Context(), k, narrator.Speech{ProjectID: p.ID, Voice: voice, Text: text, Speed: p.Rate()})
	if err != nil {
		return err
	}
	return s.store.SetClip(r.Context(), clip)
}

// readUpload reads an uploaded file, which parseUpload kept in memory.
func readUpload(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("open upload: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read upload: %w", err)
	}
	return data, nil
}
