package httpapi

import (
	"net/http"
	"time"

	"github.com/narrator/narrator"
)

// publicationJSON is the answer of the publication extension.
type publicationJSON struct {
	AudioID int64  `json:"audio_id"`
	State   string `json:"state"`
	// PublishAt is when a scheduled audio is (or was) published; null
	// unless it was scheduled.
	PublishAt *time.Time `json:"publish_at"`
	// Public says whether anonymous listeners reach the audio now: the
	// player, its status and the podcast feed.
	Public    bool       `json:"public"`
	UpdatedAt *time.Time `json:"updated_at"`
}

func (s *Server) publicationJSON(p narrator.Publication) publicationJSON {
	now := s.now()
	e := p.Effective(now)
	return publicationJSON{AudioID: p.AudioID, State: e.State, PublishAt: timeOrNil(e.PublishAt), Public: e.Public(now),
		UpdatedAt: timeOrNil(p.UpdatedAt)}
}

// liveAudio finds the path's audio as GET one audio finds it; a deleted
// one is not found.
func (s *Server) liveAudio(r *http.Request, c *call) (*narrator.Audio, error) {
	p, err := s.project(r, c)
	if err != nil {
		return nil, err
	}
	a, err := s.store.FindAudio(r.Context(), p.ID, r.PathValue("audio_id"))
	if err != nil {
		return nil, err
	}
	if a.Deleted {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "audio %d is deleted", a.ID)
	}
	return a, nil
}

// getPublication answers with the publication of the path's audio.
func (s *Server) getPublication(w http.ResponseWriter, r *http.Request, c *call) error {
	a, err := s.liveAudio(r, c)
	if err != nil {
		return err
	}
	p, err := s.store.AudioPublication(r.Context(), a.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.publicationJSON(p))
	return nil
}

// setPublication publishes, unpublishes (draft) or schedules the path's
// audio: state is required, publish_at (RFC 3339) goes with "scheduled".
func (s *Server) setPublication(w http.ResponseWriter, r *http.Request, c *call) error {
	a, err := s.liveAudio(r, c)
	if err != nil {
		return err
	}
	state, ok, err := c.params.str("state", false)
	if err != nil {
		return err
	}
	if !ok {
		return narrator.Errorf(narrator.EINVALID, "state is required: %q, %q or %q", narrator.PublicationPublished,
			narrator.PublicationDraft, narrator.PublicationScheduled)
	}
	p := narrator.Publication{AudioID: a.ID, State: state}
	at, ok, err := c.params.str("publish_at", false)
	if err != nil {
		return err
	}
	if ok {
		if p.PublishAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return narrator.Errorf(narrator.EINVALID, "publish_at must be an RFC 3339 time such as 2026-12-01T08:00:00Z")
		}
		p.PublishAt = p.PublishAt.UTC().Truncate(time.Microsecond)
	}
	if p, err = s.store.SetPublication(r.Context(), p); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.publicationJSON(p))
	return nil
}

// accessJSON is the answer of the access extension. The signing secret is
// in the answer of a rotation only.
type accessJSON struct {
	ProjectID        int64      `json:"project_id"`
	Mode             string     `json:"mode"`
	AllowedOrigins   []string   `json:"allowed_origins"`
	DraftNewAudios   bool       `json:"draft_new_audios"`
	DownloadButton   bool       `json:"download_button"`
	HasSigningSecret bool       `json:"has_signing_secret"`
	UpdatedAt        *time.Time `json:"updated_at"`
	SigningSecret    string     `json:"signing_secret,omitempty"`
}

func newAccessJSON(a narrator.ProjectAccess, withSecret bool) accessJSON {
	out := accessJSON{ProjectID: a.ProjectID, Mode: a.Mode, AllowedOrigins: a.AllowedOrigins, DraftNewAudios: a.DraftNewAudios,
		DownloadButton: a.DownloadButton, HasSigningSecret: a.SigningSecret != "", UpdatedAt: timeOrNil(a.UpdatedAt)}
	if out.AllowedOrigins == nil {
		out.AllowedOrigins = []string{}
	}
	if withSecret {
		out.SigningSecret = a.SigningSecret
	}
	return out
}

// access returns the path project's access settings.
func (s *Server) access(r *http.Request, c *call) (narrator.ProjectAccess, error) {
	p, err := s.project(r, c)
	if err != nil {
		return narrator.ProjectAccess{}, err
	}
	return s.store.ProjectAccess(r.Context(), p.ID)
}

func (s *Server) getAccess(w http.ResponseWriter, r *http.Request, c *call) error {
	a, err := s.access(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newAccessJSON(a, false))
	return nil
}

// setAccess changes the project's access settings: mode, allowed_origins,
// draft_new_audios and download_button, each kept when left out.
func (s *Server) setAccess(w http.ResponseWriter, r *http.Request, c *call) error {
	a, err := s.access(r, c)
	if err != nil {
		return err
	}
	if mode, ok, err := c.params.str("mode", false); err != nil {
		return err
	} else if ok {
		a.Mode = mode
	}
	origins, err := c.params.list("allowed_origins")
	if err != nil {
		return err
	}
	if origins != nil {
		a.AllowedOrigins = origins
	}
	if c.params.has("draft_new_audios") {
		if a.DraftNewAudios, err = c.params.boolean("draft_new_audios"); err != nil {
			return err
		}
	}
	if c.params.has("download_button") {
		if a.DownloadButton, err = c.params.boolean("download_button"); err != nil {
			return err
		}
	}
	if err := s.store.SetProjectAccess(r.Context(), &a); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newAccessJSON(a, false))
	return nil
}

// rotateEmbedSecret gives the project a new signing secret, shown in this
// answer only; tokens signed with the old one are refused at once.
func (s *Server) rotateEmbedSecret(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	secret, err := narrator.NewEmbedSecret()
	if err != nil {
		return err
	}
	a, err := s.store.RotateEmbedSecret(r.Context(), p.ID, secret)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newAccessJSON(a, true))
	return nil
}

// has reports whether a parameter is given: in the JSON body and not null,
// in the form or in the query.
func (p *params) has(name string) bool {
	if raw, ok := p.json[name]; ok {
		return string(raw) != "null"
	}
	return p.form.Has(name) || p.query.Has(name)
}
