package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// SourcePoller reads a feed at once, for the "Poll now" button;
// source.Poller satisfies it.
type SourcePoller interface {
	// Poll returns the feed with the state its read left; ENOTFOUND for
	// no such feed, ECONFLICT while another read holds it.
	Poll(ctx context.Context, id int64) (*narrator.Source, error)
}

// sourcesData is the sources page of an rss project.
type sourcesData struct {
	Project *narrator.Project
	Sources []*narrator.Source
	Max     int
	// Form values of the add form, and its problem, if any.
	FormURL, FormBackfill, FormInterval string
	FormFullText                        bool
	Error                               string
}

func sourcesPath(projectID int64) string { return fmt.Sprintf("/projects/%d/sources", projectID) }

func (s *Server) sourcesPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	return s.renderSources(w, r, q, p, http.StatusOK, sourcesData{FormBackfill: "10", FormInterval: "10"})
}

func (s *Server) renderSources(w http.ResponseWriter, r *http.Request, q *request, p *narrator.Project, status int, d sourcesData) error {
	list, err := s.store.ListSources(r.Context(), p.ID)
	if err != nil {
		return err
	}
	d.Project, d.Sources, d.Max = p, list, narrator.MaxSourcesPerProject
	return s.render(w, r, status, "sources", userPage(q, "Sources · "+p.Title, "projects", d))
}

func (s *Server) createSource(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	d := sourcesData{FormURL: strings.TrimSpace(r.PostForm.Get("url")), FormBackfill: strings.TrimSpace(r.PostForm.Get("backfill_items")),
		FormInterval: strings.TrimSpace(r.PostForm.Get("interval_minutes")), FormFullText: r.PostForm.Get("full_text") != ""}
	src := narrator.NewSource(p.ID, d.FormURL)
	src.FullText = d.FormFullText
	if n, err := strconv.Atoi(d.FormBackfill); err == nil {
		src.BackfillItems = n
	} else if d.FormBackfill != "" {
		src.BackfillItems = -1 // Validate says what is wrong
	}
	if n, err := strconv.Atoi(d.FormInterval); err == nil {
		src.Interval = time.Duration(n) * time.Minute
	} else if d.FormInterval != "" {
		src.Interval = 0
	}
	err = s.store.CreateSource(r.Context(), src)
	switch code := narrator.ErrorCode(err); code {
	case "":
	case narrator.EINVALID, narrator.ECONFLICT:
		d.Error = narrator.ErrorMessage(err)
		return s.renderSources(w, r, q, p, http.StatusBadRequest, d)
	default:
		return err
	}
	s.setFlash(w, r, "The feed is added. It is read within a minute, or now with “Poll now”.")
	http.Redirect(w, r, sourcesPath(p.ID), http.StatusSeeOther)
	return nil
}

func (s *Server) pollSource(w http.ResponseWriter, r *http.Request, q *request) error {
	if s.sources == nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such page")
	}
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("fid"), 10, 64)
	if err != nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such feed")
	}
	if _, err := s.store.FindSource(r.Context(), p.ID, id); err != nil {
		return err
	}
	src, err := s.sources.Poll(r.Context(), id)
	switch {
	case narrator.ErrorCode(err) == narrator.ECONFLICT:
		s.setFlash(w, r, "The feed is being read already; its results appear here in a moment.")
	case err != nil:
		return err
	case src.State.Status == narrator.SourceStatusError:
		s.setFlash(w, r, "The feed could not be read: "+src.State.LastError)
	default:
		s.setFlash(w, r, "The feed was read.")
	}
	http.Redirect(w, r, sourcesPath(p.ID), http.StatusSeeOther)
	return nil
}
