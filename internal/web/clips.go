package web

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/narrator/narrator"
)

// ClipDecoder decodes an uploaded intro or outro (pipeline.ClipDecoder).
type ClipDecoder interface {
	// DecodeClip returns EINVALID for a content type it does not read,
	// audio it cannot decode, or a clip out of its limits.
	DecodeClip(ctx context.Context, kind narrator.ClipKind, contentType string, data []byte) (*narrator.Clip, error)
}

// clipView is a project's intro or outro as the Speech page shows it.
type clipView struct {
	Kind     narrator.ClipKind
	Where    string  // "before" or "after"
	Seconds  float64 // 0 when the project has none
	MaxSecs  float64
	MaxBytes int
}

// projectClips returns the project's intro and outro for the page.
func (s *Server) projectClips(ctx context.Context, p *narrator.Project) ([]clipView, error) {
	var out []clipView
	for _, k := range narrator.ClipKinds() {
		v := clipView{Kind: k, Where: "after", MaxSecs: narrator.MaxClipDuration.Seconds(), MaxBytes: narrator.MaxClipBytes}
		if k == narrator.ClipIntro {
			v.Where = "before"
		}
		c, err := s.store.Clip(ctx, p.ID, k)
		switch narrator.ErrorCode(err) {
		case "":
			v.Seconds = c.Duration().Seconds()
		case narrator.ENOTFOUND:
		default:
			return nil, err
		}
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
	if r.MultipartForm == nil {
		return false, nil // a form that uploads nothing
	}
	files := r.MultipartForm.File[string(k)]
	if len(files) == 0 || files[0].Size == 0 {
		return false, nil
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
