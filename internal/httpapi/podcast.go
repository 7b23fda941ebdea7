package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// ArtworkChecker checks a podcast image at a URL (narrator.CheckArtwork).
type ArtworkChecker interface {
	// CheckArtwork returns an EINVALID *narrator.Error, with a reason a
	// publisher can act on, for an image directories would refuse.
	CheckArtwork(ctx context.Context, url string) error
}

// podcastJSON is a project's podcast feed settings, an extension: the
// settings of the dashboard's podcast page.
type podcastJSON struct {
	ProjectID   int64  `json:"project_id"`
	Enabled     bool   `json:"enabled"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Author      string `json:"author"`
	ImageURL    string `json:"image_url"`
	Language    string `json:"language"`
	Category    string `json:"category"`
	Explicit    bool   `json:"explicit"`
	OwnerName   string `json:"owner_name"`
	OwnerEmail  string `json:"owner_email"`
	// FeedURL is the feed's URL, null unless it is on.
	FeedURL *string `json:"feed_url"`
	// WebSubHub is the hub the feed names and pings, null for none.
	WebSubHub *string    `json:"websub_hub"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// newPodcastJSON returns the wire form of f, as stored (stored) or the
// settings a feed never saved starts from.
func (s *Server) newPodcastJSON(f *narrator.Feed, stored bool) podcastJSON {
	out := podcastJSON{ProjectID: f.ProjectID, Enabled: f.Enabled, Title: f.Title, Description: f.Description,
		Author: f.Author, ImageURL: f.ImageURL, Language: f.Language, Category: f.Category, Explicit: f.Explicit,
		OwnerName: f.OwnerName, OwnerEmail: f.OwnerEmail}
	if f.Enabled && stored && s.feedURL != nil {
		u := s.feedURL(f.Token)
		out.FeedURL = &u
	}
	if s.hub != "" {
		out.WebSubHub = &s.hub
	}
	if stored {
		at := f.UpdatedAt.UTC()
		out.UpdatedAt = &at
	}
	return out
}

// podcastFeed returns the path project's feed, or the settings a new one
// starts from (narrator.NewFeedSettings), turned off, and whether it is
// stored.
func (s *Server) podcastFeed(r *http.Request, c *call) (*narrator.Feed, bool, error) {
	p, err := s.project(r, c)
	if err != nil {
		return nil, false, err
	}
	f, err := s.store.FindFeed(r.Context(), p.ID)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		f = narrator.NewFeedSettings(p)
		f.Enabled = false
		return f, false, nil
	case err != nil:
		return nil, false, err
	}
	return f, true, nil
}

// getPodcast answers the project's podcast feed settings.
func (s *Server) getPodcast(w http.ResponseWriter, r *http.Request, c *call) error {
	f, stored, err := s.podcastFeed(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newPodcastJSON(f, stored))
	return nil
}

// podcastField is a setting of podcastJSON and where it goes in a feed.
type podcastField[T any] struct {
	name  string
	field *T
}

// podcastText are the text settings of podcastJSON.
func podcastText(f *narrator.Feed) []podcastField[string] {
	return []podcastField[string]{{"title", &f.Title}, {"description", &f.Description}, {"author", &f.Author},
		{"image_url", &f.ImageURL}, {"language", &f.Language}, {"category", &f.Category},
		{"owner_name", &f.OwnerName}, {"owner_email", &f.OwnerEmail}}
}

// setPodcast changes the settings given, keeping the others; a project's
// first save creates the feed, turned on unless enabled is false, with a
// new token. A new image is checked as directories check it.
func (s *Server) setPodcast(w http.ResponseWriter, r *http.Request, c *call) error {
	f, stored, err := s.podcastFeed(r, c)
	if err != nil {
		return err
	}
	image := f.ImageURL
	for _, t := range podcastText(f) {
		v, ok, err := c.params.str(t.name, false)
		if err != nil {
			return err
		}
		if ok {
			*t.field = strings.TrimSpace(v)
		}
	}
	f.Enabled = f.Enabled || !stored
	for _, b := range []podcastField[bool]{{"enabled", &f.Enabled}, {"explicit", &f.Explicit}} {
		if c.params.has(b.name) {
			if *b.field, err = c.params.boolean(b.name); err != nil {
				return err
			}
		}
	}
	if !stored {
		if f.Token, err = narrator.NewFeedToken(); err != nil {
			return err
		}
	}
	if err := f.Validate(); err != nil {
		return err
	}
	if s.artwork != nil && f.ImageURL != "" && (f.ImageURL != image || !stored) {
		if err := s.artwork.CheckArtwork(r.Context(), f.ImageURL); err != nil {
			return err
		}
	}
	if err := s.store.SaveFeed(r.Context(), f); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newPodcastJSON(f, true))
	return nil
}

// rotatePodcastToken gives the feed a new token: its old URL answers 404
// at once.
func (s *Server) rotatePodcastToken(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	token, err := narrator.NewFeedToken()
	if err != nil {
		return err
	}
	f, err := s.store.RotateFeedToken(r.Context(), p.ID, token)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newPodcastJSON(f, true))
	return nil
}
