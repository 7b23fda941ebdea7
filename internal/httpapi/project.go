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
	return newProjectJSON(cat, p)
}

// projectSettingsJSON is a v3 Project with the project's extension
// settings.
type projectSettingsJSON struct {
	projectJSON
	SpeechRate float64 `json:"speech_rate"`
}

// ProjectSettingsJSON is ProjectJSON with the project's settings that
// extensions give (its speech_rate): the shape in which the CLI prints
// projects.
func ProjectSettingsJSON(cat *narrator.Catalog, p *narrator.Project) any {
	return projectSettingsJSON{projectJSON: newProjectJSON(cat, p), SpeechRate: p.Rate()}
}

func newProjectJSON(cat *narrator.Catalog, p *narrator.Project) projectJSON {
	out := projectJSON{
		ID:         p.ID,
		Title:      p.Title,
		Type:       p.Type,
		Language:   p.Language,
		TitleVoice: voiceLabel(cat, p.Language, p.TitleVoice, true),
		BodyVoice:  voiceLabel(cat, p.Language, p.BodyVoice, false),
		AudioCount: p.AudioCount,
	}
	if p.URL != "" {
		out.URL = &p.URL
	}
	return out
}

// voiceLabel shows the voice that speaks a project's title (or body) as "Name (Gender)": the
// one it names, or, where the catalog no longer has it (an installed voice since removed),
// the language's default that speaks instead (narrator.Catalog.Resolve decides).
func voiceLabel(cat *narrator.Catalog, language, name string, title bool) string {
	if v, _, ok := cat.Resolve(language, name, title); ok {
		return v.Label()
	}
	return name
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request, c *call) error {
	projects, err := s.store.ListProjects(r.Context(), c.accountID)
	if err != nil {
		return err
	}
	cat := s.catalog(r.Context())
	writeList(w, projects, func(p *narrator.Project) any { return ProjectJSON(cat, p) })
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
