package web

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/narrator/narrator"
)

// speechData is the project's speech settings page.
type speechData struct {
	Project *narrator.Project
	// Rate is the rate's field as shown: the stored rate, or what the
	// form sent when it was refused.
	Rate     string
	Min, Max float64
	Error    string
	// Clips are the project's intro and outro.
	Clips []clipView
	// Resynthesize offers the resynthesis of every audio; Busy is its
	// refusal while one is under way.
	Resynthesize bool
	Busy         string
}

func speechPath(p *narrator.Project) string { return fmt.Sprintf("/projects/%d/speech", p.ID) }

func (s *Server) speechPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	return s.renderSpeech(w, r, q, http.StatusOK, p, strconv.FormatFloat(p.Rate(), 'g', -1, 64), "")
}

func (s *Server) renderSpeech(w http.ResponseWriter, r *http.Request, q *request, status int, p *narrator.Project, rate, formErr string) error {
	return s.renderSpeechData(w, r, q, status, speechData{Project: p, Rate: rate, Error: formErr})
}

// renderSpeechData renders the Speech page of d, its clips, rate limits
// and actions filled in.
func (s *Server) renderSpeechData(w http.ResponseWriter, r *http.Request, q *request, status int, d speechData) error {
	clips, err := s.projectClips(r.Context(), d.Project)
	if err != nil {
		return err
	}
	d.Min, d.Max, d.Clips, d.Resynthesize = narrator.MinSpeechRate, narrator.MaxSpeechRate, clips, s.resynth != nil
	return s.render(w, r, status, "speech", userPage(q, "Speech · "+d.Project.Title, "projects", d))
}

// saveSpeech stores the form's speaking rate. It renders nothing again
// (narrator.PlanSpeechRate), as the page and the notice say.
func (s *Server) saveSpeech(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	field := strings.TrimSpace(r.PostForm.Get("speech_rate"))
	if _, err := s.store.SetSpeechRate(r.Context(), p.ID, parseRate(field)); err != nil {
		if narrator.ErrorCode(err) != narrator.EINVALID {
			return err
		}
		return s.renderSpeech(w, r, q, http.StatusBadRequest, p, field, narrator.ErrorMessage(err))
	}
	s.setFlash(w, r, "The speaking rate is saved. Audios keep their speech until they are edited or resynthesized.")
	http.Redirect(w, r, speechPath(p), http.StatusSeeOther)
	return nil
}

// parseRate reads a rate field; blank is the default rate (0), and what
// is not a number is NaN, which the root package refuses in its words.
func parseRate(field string) float64 {
	if field == "" {
		return 0
	}
	rate, err := strconv.ParseFloat(strings.Replace(field, ",", ".", 1), 64)
	if err != nil {
		return math.NaN()
	}
	return rate
}
