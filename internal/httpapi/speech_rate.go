package httpapi

import (
	"math"
	"net/http"
	"strconv"

	"github.com/narrator/narrator"
)

// speechSettingsJSON is a project's speech settings, an extension: the
// v3 Project keeps the spec's shape.
type speechSettingsJSON struct {
	ProjectID  int64   `json:"project_id"`
	SpeechRate float64 `json:"speech_rate"`
}

func newSpeechSettingsJSON(p *narrator.Project) speechSettingsJSON {
	return speechSettingsJSON{ProjectID: p.ID, SpeechRate: p.Rate()}
}

// getSpeechSettings answers the project's speaking rate.
func (s *Server) getSpeechSettings(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newSpeechSettingsJSON(p))
	return nil
}

// setSpeechSettings changes the project's speaking rate, kept when left
// out. It renders nothing again (narrator.PlanSpeechRate).
func (s *Server) setSpeechSettings(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	v, ok, err := c.params.str("speech_rate", true)
	if err != nil {
		return err
	}
	if ok && v != "" {
		rate, err := strconv.ParseFloat(v, 64)
		if err != nil {
			// Not a number: the root package's refusal says what is.
			rate = math.NaN()
		}
		if p, err = s.store.SetSpeechRate(r.Context(), p.ID, rate); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, newSpeechSettingsJSON(p))
	return nil
}
