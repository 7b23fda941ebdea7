package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/narrator/narrator"
)

// ResynthesisQueue queues the resynthesis of a project's audios: the job
// queue.
type ResynthesisQueue interface {
	// QueueResynthesis returns ECONFLICT while the project has one
	// queued or running.
	QueueResynthesis(ctx context.Context, job narrator.ResynthesisJob) error
}

// resynthesizeProject queues the resynthesis of every audio of the
// project (narrator.ResynthesisJob's All) and says so on the Speech page;
// while one is under way it shows the page again, 409, with the refusal.
func (s *Server) resynthesizeProject(w http.ResponseWriter, r *http.Request, q *request) error {
	if s.resynth == nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such page")
	}
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	err = s.resynth.QueueResynthesis(r.Context(), narrator.ResynthesisJob{ProjectID: p.ID, All: true})
	if narrator.ErrorCode(err) == narrator.ECONFLICT {
		return s.renderSpeechData(w, r, q, http.StatusConflict, speechData{Project: p, Rate: strconv.FormatFloat(p.Rate(), 'g', -1, 64),
			Busy: "A resynthesis of this project is already under way. Try again once it has finished."})
	}
	if err != nil {
		return err
	}
	s.setFlash(w, r, fmt.Sprintf("Resynthesis queued. The project's audios (%d) are spoken again in the background, as your account's limits allow; each keeps its audio until the new one is ready.", p.AudioCount))
	http.Redirect(w, r, speechPath(p), http.StatusSeeOther)
	return nil
}
