package httpapi

import (
	"net/http"

	"github.com/narrator/narrator"
)

// projectResynthesisJSON answers a resynthesis of every audio of a
// project (an extension of v3).
type projectResynthesisJSON struct {
	ProjectID   int64  `json:"project_id"`
	Resynthesis string `json:"resynthesis"`
	// AudioCount is the project's live audios, which the job looks at.
	AudioCount int `json:"audio_count"`
}

// resynthesizeProject queues the resynthesis of every live audio of the
// project (narrator.ResynthesisJob's All) and answers 202, or 409 while a
// resynthesis of the project, of either form, is under way.
func (s *Server) resynthesizeProject(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	if s.resynth == nil {
		return narrator.Errorf(narrator.EINVALID, "this server does not resynthesise audios")
	}
	if err := s.resynth.QueueResynthesis(r.Context(), narrator.ResynthesisJob{ProjectID: p.ID, All: true}); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, projectResynthesisJSON{ProjectID: p.ID, Resynthesis: "queued", AudioCount: p.AudioCount})
	return nil
}
