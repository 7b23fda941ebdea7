package web

import (
	"net/http"
	"strings"

	"github.com/narrator/narrator"
)

// importForm is the values of the "Import from URL" form.
type importForm struct {
	URL, ExternalID string
}

// importData is the import page.
type importData struct {
	Project *narrator.Project
	Form    importForm
	Error   string
}

// importLabels are the labels of the import form's fields.
var importLabels = []fieldLabel{{"external_id", "External ID"}, {"url", "Page URL"}}

func (s *Server) importAudioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	if s.importer == nil {
		return s.notFoundPage(w, r)
	}
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "audio_import", userPage(q, "Import from URL", "projects", importData{Project: p}))
}

// importAudio reads the page while the request waits (the reader's
// timeout bounds it), then creates its audio through the store's
// CreateAudio, as the new-audio form and the API's import do. A page that
// cannot be read shows the import form again with the reason.
func (s *Server) importAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	if s.importer == nil {
		return s.notFoundPage(w, r)
	}
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	f := importForm{URL: strings.TrimSpace(r.PostForm.Get("url")), ExternalID: strings.TrimSpace(r.PostForm.Get("external_id"))}
	var a *narrator.Audio
	created := false
	if f.URL == "" {
		err = narrator.Errorf(narrator.EINVALID, "url is required")
	} else {
		var page *narrator.Page
		page, err = s.importer.ReadPage(r.Context(), f.URL)
		if err == nil {
			a, err = page.Audio(p.ID, f.ExternalID, nil)
		}
		if err == nil {
			err = s.length.Text(a.Title, a.Author, a.Body)
		}
		if err == nil {
			created, err = s.store.CreateAudio(r.Context(), a)
		}
	}
	if err != nil {
		if status, ok := formStatus(err); ok {
			d := importData{Project: p, Form: f, Error: formError(err, importLabels)}
			return s.render(w, r, status, "audio_import", userPage(q, "Import from URL", "projects", d))
		}
		return err
	}
	return s.showCreated(w, r, a, created, "Imported from its page. The audio is being processed; check the text below.",
		"An audio with external ID %q existed, so it was updated from the page.")
}
