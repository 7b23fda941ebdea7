package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// scheduleLayout is how the schedule form's datetime-local field writes a
// time; the dashboard reads and shows it in UTC.
const scheduleLayout = "2006-01-02T15:04"

// setPublication publishes, unpublishes or schedules the audio from its
// page's form: state, and publish_at (UTC) for a schedule.
func (s *Server) setPublication(w http.ResponseWriter, r *http.Request, q *request) error {
	p, a, err := s.projectAudio(r, q)
	if err != nil {
		return err
	}
	pub := narrator.Publication{AudioID: a.ID, State: r.PostForm.Get("state")}
	if pub.State == narrator.PublicationScheduled {
		at, err := time.ParseInLocation(scheduleLayout, strings.TrimSpace(r.PostForm.Get("publish_at")), time.UTC)
		if err != nil {
			return narrator.Errorf(narrator.EINVALID, "give the date and time to publish at, in UTC")
		}
		pub.PublishAt = at
	}
	if pub, err = s.store.SetPublication(r.Context(), pub); err != nil {
		return err
	}
	switch e := pub.Effective(s.now()); e.State {
	case narrator.PublicationDraft:
		s.setFlash(w, r, "The audio is a draft: listeners do not reach it until you publish it.")
	case narrator.PublicationScheduled:
		s.setFlash(w, r, "The audio will be published at "+e.PublishAt.Format("2 January 2006, 15:04")+" UTC.")
	default:
		s.setFlash(w, r, "The audio is published: the player and the podcast feed show it once it is processed.")
	}
	http.Redirect(w, r, fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID), http.StatusSeeOther)
	return nil
}

// mediaURLs returns how the dashboard names the media of an audio of
// duration (0 while it is made) in a project with access a: their URLs,
// or in a signed project with a media token (docs/api.md, "Media of a
// signed project"), since the media server opens them only so.
func (s *Server) mediaURLs(a narrator.ProjectAccess, duration time.Duration) func(string) string {
	if a.Mode != narrator.AccessSigned {
		return s.mediaURL
	}
	expires := narrator.MediaTokenExpiry(s.now(), duration)
	return func(key string) string {
		return s.mediaURL(key) + "?token=" + url.QueryEscape(a.MediaToken(key, expires))
	}
}

// accessData is the project's access page.
type accessData struct {
	Project *narrator.Project
	Access  narrator.ProjectAccess
	// Origins is the allowed origins' field, one a line.
	Origins string
	// NewSecret is the secret just made, shown in this answer only.
	NewSecret string
	Error     string
}

func accessPath(p *narrator.Project) string { return fmt.Sprintf("/projects/%d/access", p.ID) }

func (s *Server) accessPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a, err := s.store.ProjectAccess(r.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.renderAccess(w, r, q, http.StatusOK, accessData{Project: p, Access: a, Origins: strings.Join(a.AllowedOrigins, "\n")})
}

func (s *Server) renderAccess(w http.ResponseWriter, r *http.Request, q *request, status int, d accessData) error {
	return s.render(w, r, status, "access", userPage(q, "Access · "+d.Project.Title, "projects", d))
}

// saveAccess stores the form's mode, allowed origins (one a line) and
// whether new audios wait as drafts.
func (s *Server) saveAccess(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a := narrator.ProjectAccess{ProjectID: p.ID, Mode: r.PostForm.Get("mode"),
		AllowedOrigins: strings.Fields(r.PostForm.Get("allowed_origins")), DraftNewAudios: r.PostForm.Get("draft_new_audios") != "",
		DownloadButton: r.PostForm.Get("download_button") != ""}
	if err := s.store.SetProjectAccess(r.Context(), &a); err != nil {
		if narrator.ErrorCode(err) != narrator.EINVALID {
			return err
		}
		return s.renderAccess(w, r, q, http.StatusBadRequest, accessData{Project: p, Access: a,
			Origins: r.PostForm.Get("allowed_origins"), Error: narrator.ErrorMessage(err)})
	}
	s.setFlash(w, r, "The access settings are saved.")
	http.Redirect(w, r, accessPath(p), http.StatusSeeOther)
	return nil
}

// rotateEmbedSecret makes a new signing secret and shows it in this
// answer, once; tokens signed with the old one are refused at once.
func (s *Server) rotateEmbedSecret(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
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
	w.Header().Set("Cache-Control", "no-store")
	return s.renderAccess(w, r, q, http.StatusOK, accessData{Project: p, Access: a, Origins: strings.Join(a.AllowedOrigins, "\n"), NewSecret: secret})
}
