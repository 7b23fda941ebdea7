package httpapi

import (
	"net/http"

	"github.com/narrator/narrator"
)

// importAudio is POST /api/v3/projects/{project_id}/audio/import: it reads
// the page at "url" while the request waits (the reader's timeout bounds
// it), then creates the audio from its article exactly as a v3 create
// does (validation, quotas, a repeated external ID updates) and answers
// the same way. A page that cannot be read answers 422 with the reason.
func (s *Server) importAudio(w http.ResponseWriter, r *http.Request, c *call) error {
	if s.pages == nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such route")
	}
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	pageURL, ok, err := c.params.str("url", false)
	if err != nil {
		return err
	}
	if !ok || pageURL == "" {
		return narrator.Errorf(narrator.EINVALID, "url is required")
	}
	externalID, _, err := c.params.str("external_id", true)
	if err != nil {
		return err
	}
	metadata, _, err := c.params.metadata()
	if err != nil {
		return err
	}
	page, err := s.pages.ReadPage(r.Context(), pageURL)
	if err != nil {
		return err
	}
	a, err := page.Audio(p.ID, externalID, metadata)
	if err != nil {
		return err
	}
	if err := s.length.Text(a.Title, a.Author, a.Body); err != nil {
		return err
	}
	if _, err := s.store.CreateAudio(r.Context(), a); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.audioJSON(a, singleOrder))
	return nil
}
