package httpapi

import (
	"net/http"

	"github.com/narrator/narrator"
)

// projectJSON is the v3 Project.
type projectJSON struct {
	ID         int64   `json:"id"`
	Title      string  `json:"title"`
	Type       string  `json:"type"`
	Language   string  `json:"language"`
	URL        *string `json:"url"`
	TitleVoice string  `json:"title_voice"`
	BodyVoice  string  `json:"body_voice"`
	AudioCount int     `json:"audio_count"`
}

// ProjectJSON converts a project to its v3 wire form, its voices labelled
// from cat. It is exported for the CLI, which prints projects in the same
// shape.
func ProjectJSON(cat *narrator.Catalog, p *narrator.Project) any {
	out := projectJSON{
		ID:         p.ID,
		Title:      p.Title,
		Type:       p.Type,
		Language:   p.Language,
		TitleVoice: voiceLabel(cat, p.Language, p.TitleVoice),
		BodyVoice:  voiceLabel(cat, p.Language, p.BodyVoice),
		AudioCount: p.AudioCount,
	}
	if p.URL != "" {
		out.URL = &p.URL
	}
	return out
}

// voiceLabel shows a voice as "Name (Gender)"; a voice the catalog does not
// have (an installed voice since removed) shows as its name.
func voiceLabel(cat *narrator.Catalog, language, name string) string {
	if v, ok := cat.Lookup(language, name); ok {
		return v.Label()
	}
	return name
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request, c *call) error {
	projects, err := s.store.ListProjects(r.Context(), c.accountID)
	if err != nil {
		return err
	}
	out := make([]any, 0, len(projects))
	cat := s.catalog(r.Context())
	for _, p := range projects {
		out = append(out, ProjectJSON(cat, p))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// project returns the path's project, which authed found with the key, or
// ENOTFOUND if the path's project_id is not a number.
func (s *Server) project(r *http.Request, c *call) (*narrator.Project, error) {
	if c.project == nil {
		_, err := pathID(r, "project_id")
		if err == nil {
			err = narrator.Errorf(narrator.EINTERNAL, "the project of %s was not authorized", r.URL.Path)
		}
		return nil, err
	}
	return c.project, nil
}
