package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/narrator/narrator"
)

// audioJSON is the v3 Audio.
type audioJSON struct {
	ID         int64             `json:"id"`
	ExternalID *string           `json:"external_id"`
	State      string            `json:"state"`
	Media      []mediaJSON       `json:"media"`
	Deleted    bool              `json:"deleted"`
	Metadata   map[string]string `json:"metadata"`
	// Error says why synthesis failed; only present in state "failed".
	Error string `json:"error,omitempty"`
}

// mediaJSON is the v3 Media. URL is a string once the audio is processed
// and the empty array before.
type mediaJSON struct {
	ID          int64  `json:"id"`
	ContentType string `json:"content_type"`
	URL         any    `json:"url"`
}

// mediaOrder lists content types in the order responses show them: single
// audios list the MP3 first, lists put the playlist first.
var (
	singleOrder = []string{narrator.ContentTypeMP3, narrator.ContentTypeM3U8}
	listOrder   = []string{narrator.ContentTypeM3U8, narrator.ContentTypeMP3}
)

func (s *Server) audioJSON(a *narrator.Audio, order []string) audioJSON {
	return newAudioJSON(a, order, s.mediaURL)
}

// newAudioJSON converts an audio to the v3 Audio, its media in the given
// order of content types, their URLs made by mediaURL.
func newAudioJSON(a *narrator.Audio, order []string, mediaURL func(string) string) audioJSON {
	out := audioJSON{
		ID:       a.ID,
		State:    a.State,
		Media:    make([]mediaJSON, 0, len(a.Media)),
		Deleted:  a.Deleted,
		Metadata: a.Metadata,
	}
	if a.ExternalID != "" {
		out.ExternalID = &a.ExternalID
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	if a.State == narrator.StateFailed {
		out.Error = a.Error
	}
	for _, ct := range order {
		m, ok := a.MediaOf(ct)
		if !ok {
			continue
		}
		var url any = []string{}
		if a.State == narrator.StateProcessed && m.Key != "" {
			url = mediaURL(m.Key)
		}
		out.Media = append(out.Media, mediaJSON{ID: m.ID, ContentType: m.ContentType, URL: url})
	}
	return out
}

// articleFields are the string fields an article is made of.
var articleFields = []string{"title", "body", "author", "article_url", "external_id"}

// readUpdate gathers the article fields a request gives.
func readUpdate(p *params) (narrator.AudioUpdate, error) {
	var u narrator.AudioUpdate
	dst := map[string]**string{
		"title": &u.Title, "body": &u.Body, "author": &u.Author,
		"article_url": &u.ArticleURL, "external_id": &u.ExternalID,
	}
	for _, f := range articleFields {
		v, ok, err := p.str(f, f == "external_id")
		if err != nil {
			return u, err
		}
		if ok {
			*dst[f] = &v
		}
	}
	m, ok, err := p.metadata()
	if err != nil {
		return u, err
	}
	u.Metadata, u.MetadataSet = m, ok
	return u, nil
}

func (s *Server) createAudio(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	a, err := s.newAudio(r.Context(), p.ID, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.audioJSON(a, singleOrder))
	return nil
}

// newAudio creates the audio that c's parameters describe in the project
// projectID, with c's key if it was not read yet (call.keyHash).
func (s *Server) newAudio(ctx context.Context, projectID int64, c *call) (*narrator.Audio, error) {
	u, err := readUpdate(c.params)
	if err != nil {
		return nil, err
	}
	if u.Body == nil {
		return nil, narrator.Errorf(narrator.EINVALID, "body is required")
	}
	a := &narrator.Audio{
		ProjectID:  projectID,
		Title:      deref(u.Title),
		Body:       *u.Body,
		Author:     deref(u.Author),
		ArticleURL: deref(u.ArticleURL),
		ExternalID: deref(u.ExternalID),
		Metadata:   u.Metadata,
	}
	if err := s.checkLength(u); err != nil {
		return nil, err
	}
	if c.keyHash == nil {
		_, err = s.store.CreateAudio(ctx, a)
	} else {
		_, err = s.store.CreateAudioWithKey(ctx, c.keyHash, a)
	}
	return a, err
}

// keyCheckTimeout bounds keyFirst's read of a key, which outlives the
// request's context.
const keyCheckTimeout = 5 * time.Second

// keyFirst returns the error of a call whose key was not read before its
// handler (call.keyHash; authedAs calls it for every error of such a call): the key's own error, if it has one, so that a
// bad key answers 401 before any other error, as it does when read first;
// err otherwise. A key that fails is forgotten (knownKeys). The key is
// read even when ctx has ended, as it has when reading the body failed
// (narrator.BodyError), so that a client that stalls is told about its
// key, or its body, and not of a failure of the server's.
func (s *Server) keyFirst(ctx context.Context, c *call, err error) error {
	if c.keyHash == nil {
		return err
	}
	code := narrator.ErrorCode(err)
	if code != narrator.EUNAUTHORIZED && code != narrator.ENOTFOUND {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyCheckTimeout)
		defer cancel()
		if _, authErr := s.store.AuthorizeProject(ctx, c.keyHash, c.project.ID); authErr != nil {
			err, code = authErr, narrator.ErrorCode(authErr)
		}
	}
	if code == narrator.EUNAUTHORIZED || code == narrator.ENOTFOUND {
		s.known.forget(c.keyHash, c.project.ID)
	}
	return err
}

// audioOp is a store operation on one audio of a project.
type audioOp func(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)

// oneAudio answers with the audio that op returns for the path's project
// and audio_id.
func (s *Server) oneAudio(op audioOp) func(w http.ResponseWriter, r *http.Request, c *call) error {
	return func(w http.ResponseWriter, r *http.Request, c *call) error {
		p, err := s.project(r, c)
		if err != nil {
			return err
		}
		a, err := op(r.Context(), p.ID, r.PathValue("audio_id"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, s.audioJSON(a, singleOrder))
		return nil
	}
}

func (s *Server) updateAudio(w http.ResponseWriter, r *http.Request, c *call) error {
	return s.oneAudio(func(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
		u, err := readUpdate(c.params)
		if err != nil {
			return nil, err
		}
		if err := s.checkLength(u); err != nil {
			return nil, err
		}
		return s.store.UpdateAudio(ctx, projectID, ref, u)
	})(w, r, c)
}

func (s *Server) deleteAudio(w http.ResponseWriter, r *http.Request, c *call) error {
	return s.oneAudio(func(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
		a, err := s.store.DeleteAudio(ctx, projectID, ref)
		if err == nil {
			a.Deleted = true
		}
		return a, err
	})(w, r, c)
}

// periods maps the list period names to how far back they reach; 0 is all.
var periods = map[string]time.Duration{
	"daily":   24 * time.Hour,
	"weekly":  7 * 24 * time.Hour,
	"monthly": 30 * 24 * time.Hour,
	"all":     0,
}

func (s *Server) listAudios(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	period, ok, err := c.params.str("period", false)
	if err != nil {
		return err
	}
	if !ok || period == "" {
		period = "all"
	}
	back, known := periods[period]
	if !known {
		return narrator.Errorf(narrator.EINVALID, "period must be one of daily, weekly, monthly or all")
	}
	var since time.Time
	if back > 0 {
		since = s.now().Add(-back)
	}
	page := 1
	if v, ok, err := c.params.str("page", true); err != nil {
		return err
	} else if ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return narrator.Errorf(narrator.EINVALID, "page must be a whole number from 1 up")
		}
		page = n
	}
	audios, err := s.store.ListAudios(r.Context(), p.ID, since, page, AudiosPerPage)
	if err != nil {
		return err
	}
	out := make([]audioJSON, 0, len(audios))
	for _, a := range audios {
		out = append(out, s.audioJSON(a, listOrder))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// checkLength refuses, with EINVALID, an update that gives a body whose
// audio would clearly be longer than the cap (narrator.LengthCheck on
// speak.Estimate), before the store is asked: synthesis would fail it. The
// fields it does not give count as empty, so the estimate stays low.
func (s *Server) checkLength(u narrator.AudioUpdate) error {
	if u.Body == nil {
		return nil // a title and a byline alone are far too short
	}
	return s.length.Text(deref(u.Title), deref(u.Author), *u.Body)
}

// deref returns *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
