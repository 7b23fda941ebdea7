package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/narrator/narrator"
)

// feedForm is the podcast feed form's values.
type feedForm struct {
	Title, Description, Author, ImageURL, Language, Category string
	OwnerName, OwnerEmail                                    string
	Explicit                                                 bool
}

// feedData is the podcast feed page.
type feedData struct {
	Project *narrator.Project
	// Feed is the stored feed; nil if the project never had one.
	Feed       *narrator.Feed
	URL        string // the feed's URL; "" unless it is on
	Form       feedForm
	Categories []narrator.FeedCategory
	Separator  string
	Error      string
}

// feedLabels are the labels of the feed form's fields, named as
// narrator.Feed.Validate names them.
var feedLabels = []fieldLabel{
	{"title", "Title"}, {"description", "Description"}, {"author", "Author"},
	{"image URL", "Image URL"}, {"language", "Language"}, {"category", "Category"},
	{"owner name", "Owner name"}, {"owner email", "Owner email"},
}

func (s *Server) feedPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	f, err := s.store.FindFeed(r.Context(), p.ID)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		f = nil
	case err != nil:
		return err
	}
	form := formOf(narrator.NewFeedSettings(p))
	if f != nil {
		form = formOf(f)
	}
	return s.renderFeed(w, r, q, http.StatusOK, p, f, form, "")
}

// formOf returns the form that shows f.
func formOf(f *narrator.Feed) feedForm {
	return feedForm{Title: f.Title, Description: f.Description, Author: f.Author, ImageURL: f.ImageURL,
		Language: f.Language, Category: f.Category, Explicit: f.Explicit, OwnerName: f.OwnerName, OwnerEmail: f.OwnerEmail}
}

func (s *Server) renderFeed(w http.ResponseWriter, r *http.Request, q *request, status int, p *narrator.Project, f *narrator.Feed, form feedForm, formErr string) error {
	d := feedData{Project: p, Feed: f, Form: form, Categories: narrator.FeedCategories(),
		Separator: narrator.FeedCategorySeparator, Error: formErr}
	if f != nil && f.Enabled {
		d.URL = s.feedURL(f.Token)
	}
	return s.render(w, r, status, "feed", userPage(q, "Podcast feed · "+p.Title, "projects", d))
}

// saveFeed saves the form's settings and turns the feed on; a project's
// first save creates the feed and its token.
func (s *Server) saveFeed(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	form := feedForm{
		Title:       strings.TrimSpace(r.PostForm.Get("title")),
		Description: strings.TrimSpace(r.PostForm.Get("description")),
		Author:      strings.TrimSpace(r.PostForm.Get("author")),
		ImageURL:    strings.TrimSpace(r.PostForm.Get("image_url")),
		Language:    strings.TrimSpace(r.PostForm.Get("language")),
		Category:    r.PostForm.Get("category"),
		Explicit:    r.PostForm.Get("explicit") != "",
		OwnerName:   strings.TrimSpace(r.PostForm.Get("owner_name")),
		OwnerEmail:  strings.TrimSpace(r.PostForm.Get("owner_email")),
	}
	token, err := narrator.NewFeedToken()
	if err != nil {
		return err
	}
	f := &narrator.Feed{ProjectID: p.ID, Enabled: true, Title: form.Title, Description: form.Description,
		Author: form.Author, ImageURL: form.ImageURL, Language: form.Language, Category: form.Category,
		Explicit: form.Explicit, Token: token, OwnerName: form.OwnerName, OwnerEmail: form.OwnerEmail}
	err = s.checkArtwork(r.Context(), f)
	if err == nil {
		err = s.store.SaveFeed(r.Context(), f)
	}
	if err != nil {
		if narrator.ErrorCode(err) != narrator.EINVALID {
			return err
		}
		cur, ferr := s.store.FindFeed(r.Context(), p.ID)
		if narrator.ErrorCode(ferr) == narrator.ENOTFOUND {
			cur, ferr = nil, nil
		}
		if ferr != nil {
			return ferr
		}
		return s.renderFeed(w, r, q, http.StatusBadRequest, p, cur, form, formError(err, feedLabels))
	}
	s.setFlash(w, r, "The podcast feed is on. Its URL is below.")
	http.Redirect(w, r, feedPagePath(p), http.StatusSeeOther)
	return nil
}

// rotateFeed gives the feed a new token: the old URL answers 404 at once.
func (s *Server) rotateFeed(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	token, err := narrator.NewFeedToken()
	if err != nil {
		return err
	}
	if _, err := s.store.RotateFeedToken(r.Context(), p.ID, token); err != nil {
		return err
	}
	s.setFlash(w, r, "The feed has a new URL. The old one no longer works.")
	http.Redirect(w, r, feedPagePath(p), http.StatusSeeOther)
	return nil
}

// disableFeed turns the feed off, keeping its settings and token.
func (s *Server) disableFeed(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	f, err := s.store.FindFeed(r.Context(), p.ID)
	if err != nil {
		return err
	}
	f.Enabled = false
	if err := s.store.SaveFeed(r.Context(), f); err != nil {
		return err
	}
	s.setFlash(w, r, "The podcast feed is off. Its URL answers 404 until you turn it on again.")
	http.Redirect(w, r, feedPagePath(p), http.StatusSeeOther)
	return nil
}

func feedPagePath(p *narrator.Project) string { return fmt.Sprintf("/projects/%d/feed", p.ID) }

// checkArtwork checks f's image (narrator.CheckArtwork) when it is set and
// differs from the stored feed's, so that saving other settings does not
// fetch it again.
func (s *Server) checkArtwork(ctx context.Context, f *narrator.Feed) error {
	if s.artwork == nil || f.ImageURL == "" || f.Validate() != nil {
		return nil // SaveFeed says what is wrong with invalid settings
	}
	cur, err := s.store.FindFeed(ctx, f.ProjectID)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
	case err != nil:
		return err
	case cur.ImageURL == f.ImageURL:
		return nil
	}
	return s.artwork.CheckArtwork(ctx, f.ImageURL)
}
