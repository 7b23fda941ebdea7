package web

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/speak"
)

// audioForm is the values of the new-audio and edit-audio forms.
type audioForm struct {
	Title, Body, Author, ArticleURL, ExternalID, Metadata string
}

// audioFormData is the new-audio and edit-audio pages.
type audioFormData struct {
	Project *narrator.Project
	Audio   *narrator.Audio // nil on the new-audio page
	Form    audioForm
	Error   string
}

func readAudioForm(r *http.Request) audioForm {
	f := r.PostForm
	return audioForm{
		Title:      strings.TrimSpace(f.Get("title")),
		Body:       f.Get("body"),
		Author:     strings.TrimSpace(f.Get("author")),
		ArticleURL: strings.TrimSpace(f.Get("article_url")),
		ExternalID: strings.TrimSpace(f.Get("external_id")),
		Metadata:   f.Get("metadata"),
	}
}

func (s *Server) newAudioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "audio_form", userPage(q, "New audio", "projects", audioFormData{Project: p}))
}

// createAudio goes through the store's CreateAudio, as the API does: a
// repeated external ID updates that audio instead of making a duplicate.
func (s *Server) createAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	f := readAudioForm(r)
	a := &narrator.Audio{
		ProjectID: p.ID, Title: f.Title, Body: f.Body, Author: f.Author,
		ArticleURL: f.ArticleURL, ExternalID: f.ExternalID,
	}
	created, err := s.store.CreateAudio(r.Context(), a)
	if err != nil {
		if code := narrator.ErrorCode(err); code == narrator.EINVALID || code == narrator.ECONFLICT {
			d := audioFormData{Project: p, Form: f, Error: sentence(narrator.ErrorMessage(err))}
			return s.render(w, r, http.StatusBadRequest, "audio_form", userPage(q, "New audio", "projects", d))
		}
		return err
	}
	msg := "Audio created. It is being processed."
	if !created {
		msg = fmt.Sprintf("An audio with external ID %q existed, so it was updated.", a.ExternalID)
	}
	s.setFlash(w, r, msg)
	http.Redirect(w, r, fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID), http.StatusSeeOther)
	return nil
}

// audio loads the request's {aid} audio of a project.
func (s *Server) audio(r *http.Request, p *narrator.Project) (*narrator.Audio, error) {
	return s.store.FindAudio(r.Context(), p.ID, r.PathValue("aid"))
}

// spokenBlock is a paragraph of the text as read.
type spokenBlock struct {
	Title bool // read in the title voice
	Text  string
}

// spokenText groups an audio's synthesis units, read with the project's
// pronunciation rules, into paragraphs: a unit followed by a
// paragraph-sized pause ends one.
func spokenText(p *narrator.Project, a *narrator.Audio, prons []*narrator.Pronunciation) []spokenBlock {
	rules := make([]speak.Rule, len(prons))
	for i, r := range prons {
		rules[i] = speak.Rule{Phrase: r.Phrase, Say: r.Say}
	}
	var out []spokenBlock
	var cur []string
	role := speak.RoleTitle
	flush := func() {
		if len(cur) > 0 {
			out = append(out, spokenBlock{Title: role == speak.RoleTitle, Text: strings.Join(cur, " ")})
			cur = nil
		}
	}
	for _, u := range speak.Script(p.Language, a.Title, a.Author, a.Body, rules) {
		if u.Role != role {
			flush()
			role = u.Role
		}
		cur = append(cur, u.Text)
		if u.Pause >= speak.PauseParagraph {
			flush()
		}
	}
	flush()
	return out
}

// kv is a metadata entry.
type kv struct{ Key, Value string }

func sortedKV(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// audioData is the audio page.
type audioData struct {
	Project  *narrator.Project
	Audio    *narrator.Audio
	Spoken   []spokenBlock
	MP3URL   string
	M3U8URL  string
	Metadata []kv
	BaseURL  string
}

func (s *Server) audioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a, err := s.audio(r, p)
	if err != nil {
		return err
	}
	prons, err := s.store.ListPronunciations(r.Context(), p.ID)
	if err != nil {
		return err
	}
	d := audioData{Project: p, Audio: a, Spoken: spokenText(p, a, prons), Metadata: sortedKV(a.Metadata),
		BaseURL: fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID)}
	if a.State == narrator.StateProcessed {
		if m, ok := a.MediaOf(narrator.ContentTypeMP3); ok && m.Key != "" {
			d.MP3URL = s.mediaURL(m.Key)
		}
		if m, ok := a.MediaOf(narrator.ContentTypeM3U8); ok && m.Key != "" {
			d.M3U8URL = s.mediaURL(m.Key)
		}
	}
	return s.render(w, r, http.StatusOK, "audio", userPage(q, untitled(a.Title), "projects", d))
}

// formatMetadata writes metadata as the edit form shows it: one
// "key: value" line per entry, sorted by key.
func formatMetadata(m map[string]string) string {
	var b strings.Builder
	for _, e := range sortedKV(m) {
		fmt.Fprintf(&b, "%s: %s\n", e.Key, e.Value)
	}
	return b.String()
}

// parseMetadata reads the edit form's metadata lines. Blank lines are
// skipped; every other line must be "key: value".
func parseMetadata(text string) (map[string]string, error) {
	m := map[string]string{}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, narrator.Errorf(narrator.EINVALID, "metadata line %d must be written as key: value", i+1)
		}
		if _, dup := m[k]; dup {
			return nil, narrator.Errorf(narrator.EINVALID, "metadata key %q is given twice", k)
		}
		m[k] = strings.TrimSpace(v)
	}
	return m, nil
}

func (s *Server) editAudioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a, err := s.audio(r, p)
	if err != nil {
		return err
	}
	f := audioForm{Title: a.Title, Body: a.Body, Author: a.Author, ArticleURL: a.ArticleURL,
		ExternalID: a.ExternalID, Metadata: formatMetadata(a.Metadata)}
	return s.render(w, r, http.StatusOK, "audio_form", userPage(q, "Edit audio", "projects", audioFormData{Project: p, Audio: a, Form: f}))
}

func (s *Server) updateAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a, err := s.audio(r, p)
	if err != nil {
		return err
	}
	f := readAudioForm(r)
	fail := func(err error) error {
		d := audioFormData{Project: p, Audio: a, Form: f, Error: sentence(narrator.ErrorMessage(err))}
		return s.render(w, r, http.StatusBadRequest, "audio_form", userPage(q, "Edit audio", "projects", d))
	}
	meta, err := parseMetadata(f.Metadata)
	if err != nil {
		return fail(err)
	}
	u := narrator.AudioUpdate{
		Title: &f.Title, Body: &f.Body, Author: &f.Author, ArticleURL: &f.ArticleURL,
		ExternalID: &f.ExternalID, Metadata: meta, MetadataSet: true,
	}
	got, err := s.store.UpdateAudio(r.Context(), p.ID, fmt.Sprint(a.ID), u)
	if err != nil {
		if code := narrator.ErrorCode(err); code == narrator.EINVALID || code == narrator.ECONFLICT {
			return fail(err)
		}
		return err
	}
	msg := "Changes saved."
	if got.Revision != a.Revision {
		msg = "Changes saved. The audio is being generated again."
	}
	s.setFlash(w, r, msg)
	http.Redirect(w, r, fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID), http.StatusSeeOther)
	return nil
}

func (s *Server) regenerateAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a, err := s.audio(r, p)
	if err != nil {
		return err
	}
	if _, err := s.store.RegenerateAudio(r.Context(), p.ID, fmt.Sprint(a.ID)); err != nil {
		return err
	}
	s.setFlash(w, r, "The audio is being generated again.")
	http.Redirect(w, r, fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID), http.StatusSeeOther)
	return nil
}

func (s *Server) deleteAudioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a, err := s.audio(r, p)
	if err != nil {
		return err
	}
	d := audioData{Project: p, Audio: a, BaseURL: fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID)}
	return s.render(w, r, http.StatusOK, "audio_delete", userPage(q, "Delete audio", "projects", d))
}

func (s *Server) deleteAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	a, err := s.audio(r, p)
	if err != nil {
		return err
	}
	if _, err := s.store.DeleteAudio(r.Context(), p.ID, fmt.Sprint(a.ID)); err != nil {
		return err
	}
	s.setFlash(w, r, fmt.Sprintf("Audio %q deleted.", untitled(a.Title)))
	http.Redirect(w, r, fmt.Sprintf("/projects/%d", p.ID), http.StatusSeeOther)
	return nil
}
