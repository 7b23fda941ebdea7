package web

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/speak"
)

// audioForm is the values of the new-audio and edit-audio forms.
type audioForm struct {
	Title, Body, Author, ArticleURL, ExternalID string
	// Metadata is the edit form's rows, one per entry, then blank ones.
	Metadata []metaRow
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
		Metadata:   readMetaRows(f),
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
	err = s.length.Text(a.Title, a.Author, a.Body)
	created := false
	if err == nil {
		created, err = s.store.CreateAudio(r.Context(), a)
	}
	if err != nil {
		if status, ok := formStatus(err); ok {
			d := audioFormData{Project: p, Form: f, Error: formError(err, audioLabels)}
			return s.render(w, r, status, "audio_form", userPage(q, "New audio", "projects", d))
		}
		return err
	}
	return s.showCreated(w, r, a, created, "Audio created. It is being processed.", "An audio with external ID %q existed, so it was updated.")
}

// showCreated redirects to the page of audio a, which the store's CreateAudio created, or
// updated if it had a's external ID, with the notice made (or updated, a format of the
// external ID).
func (s *Server) showCreated(w http.ResponseWriter, r *http.Request, a *narrator.Audio, created bool, made, updated string) error {
	msg := made
	if !created {
		msg = fmt.Sprintf(updated, a.ExternalID)
	}
	s.setFlash(w, r, msg)
	http.Redirect(w, r, fmt.Sprintf("/projects/%d/audios/%d", a.ProjectID, a.ID), http.StatusSeeOther)
	return nil
}

// projectAudio resolves the path's project, within the user's account, and
// the path's audio within it.
func (s *Server) projectAudio(r *http.Request, q *request) (*narrator.Project, *narrator.Audio, error) {
	p, err := s.project(r, q)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.store.FindAudio(r.Context(), p.ID, r.PathValue("aid"))
	if err != nil {
		return nil, nil, err
	}
	return p, a, nil
}

// spokenBlock is a paragraph of the text as read.
type spokenBlock struct {
	Title bool // read in the title voice
	Text  string
}

// spokenText groups an audio's synthesis units, read with the project's
// pronunciation rules, into paragraphs: a unit followed by a
// paragraph-sized pause ends one.
func (s *Server) spokenText(p *narrator.Project, a *narrator.Audio, prons []*narrator.Pronunciation) []spokenBlock {
	set := make([]speak.Rule, len(prons))
	for i, r := range prons {
		set[i] = speak.Rule{Phrase: r.Phrase, Say: r.Say}
	}
	rules := s.rules.Rules(p.ID, set)
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

// blankMetaRows is how many empty rows the edit form offers for new
// metadata entries. More can be added by saving and editing again.
const blankMetaRows = 3

// metaRow is a row of the edit form's metadata editor.
type metaRow struct {
	Key, Value string
	// Orig is the stored entry the row shows, encoded by encodeOrig; "" for
	// a new row. It lets an unchanged entry be saved byte for byte, though
	// browsers drop line breaks from inputs and send those of text areas
	// as CRLF.
	Orig string
}

// Rows is the height of the row's value box.
func (m metaRow) Rows() int {
	return min(max(strings.Count(m.Value, "\n")+1, 1), 8)
}

// metaRows returns the editor's rows for stored metadata, sorted by key,
// followed by blank rows.
func metaRows(m map[string]string) []metaRow {
	var rows []metaRow
	for _, e := range sortedKV(m) {
		rows = append(rows, metaRow{Key: e.Key, Value: e.Value, Orig: encodeOrig(e.Key, e.Value)})
	}
	return withBlankRows(rows)
}

// withBlankRows drops the blank rows of rows and appends blankMetaRows new ones.
func withBlankRows(rows []metaRow) []metaRow {
	out := make([]metaRow, 0, len(rows)+blankMetaRows)
	for _, r := range rows {
		if r.Key != "" || r.Value != "" || r.Orig != "" {
			out = append(out, r)
		}
	}
	return append(out, make([]metaRow, blankMetaRows)...)
}

// encodeOrig packs a stored entry into a hidden field's value. Base64
// survives every normalisation browsers apply to form values.
func encodeOrig(k, v string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(k)) + "." + enc.EncodeToString([]byte(v))
}

// decodeOrig unpacks encodeOrig's value.
func decodeOrig(s string) (k, v string, ok bool) {
	ek, ev, found := strings.Cut(s, ".")
	if !found {
		return "", "", false
	}
	enc := base64.RawURLEncoding
	bk, err1 := enc.DecodeString(ek)
	bv, err2 := enc.DecodeString(ev)
	if err1 != nil || err2 != nil {
		return "", "", false
	}
	return string(bk), string(bv), true
}

// readMetaRows reads the metadata editor's rows: the repeated fields
// metadata_key, metadata_value and metadata_orig, in order. Keys and
// values are kept as typed, without trimming. A value's CRLF line breaks,
// which browsers send for text areas, become LF. A row that still shows
// its stored entry, as far as a browser can show it, keeps that entry
// byte for byte.
func readMetaRows(f url.Values) []metaRow {
	keys, values, origs := f["metadata_key"], f["metadata_value"], f["metadata_orig"]
	rows := make([]metaRow, 0, len(keys))
	for i, k := range keys {
		var m metaRow
		m.Key = k
		if i < len(values) {
			m.Value = strings.ReplaceAll(values[i], "\r\n", "\n")
		}
		if i < len(origs) {
			m.Orig = origs[i]
			if ok, ov, valid := decodeOrig(origs[i]); valid {
				if m.Key == ok || m.Key == strings.NewReplacer("\r", "", "\n", "").Replace(ok) {
					m.Key = ok
				}
				if m.Value == ov || m.Value == normalizeNewlines(ov) {
					m.Value = ov
				}
			}
		}
		rows = append(rows, m)
	}
	return rows
}

// normalizeNewlines turns CRLF and CR into LF, as HTML does with the text
// of a text area.
func normalizeNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// metadataOf turns the editor's rows into metadata. A row with an empty key
// is dropped; a key given twice is an error.
func metadataOf(rows []metaRow) (map[string]string, error) {
	m := map[string]string{}
	for _, r := range rows {
		if r.Key == "" {
			continue
		}
		if _, dup := m[r.Key]; dup {
			return nil, narrator.Errorf(narrator.EINVALID, "metadata key %q is given twice; each key can be used once", r.Key)
		}
		m[r.Key] = r.Value
	}
	return m, nil
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
	// Progress is there while the audio is unprocessed.
	Progress *progressJSON
	// TranscriptURL and Duration (seconds) feed the embed's player, which
	// the page shows too.
	TranscriptURL string
	Duration      float64
	Embed         embedSnippets
	Listens       listensData
	// Publication is the audio's publication as it stands now, and Public
	// whether anonymous listeners reach it.
	Publication narrator.Publication
	Public      bool
}

func (s *Server) audioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, a, err := s.projectAudio(r, q)
	if err != nil {
		return err
	}
	prons, err := s.store.ListPronunciations(r.Context(), p.ID)
	if err != nil {
		return err
	}
	d := audioData{Project: p, Audio: a, Spoken: s.spokenText(p, a, prons), Metadata: sortedKV(a.Metadata),
		BaseURL: fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID)}
	if a.State == narrator.StateUnprocessed {
		if d.Progress, err = s.progressOf(r.Context(), a); err != nil {
			return err
		}
	}
	access, err := s.store.ProjectAccess(r.Context(), p.ID)
	if err != nil {
		return err
	}
	pub, err := s.store.AudioPublication(r.Context(), a.ID)
	if err != nil {
		return err
	}
	now := s.now()
	d.Publication, d.Public = pub.Effective(now), pub.Public(now)
	if a.State == narrator.StateProcessed {
		mediaURL := s.mediaURLs(access, time.Duration(a.DurationMS)*time.Millisecond)
		if m, ok := a.MediaOf(narrator.ContentTypeMP3); ok && m.Key != "" {
			d.MP3URL = mediaURL(m.Key)
			jsonKey, _ := narrator.TranscriptKeys(m.Key)
			d.TranscriptURL = mediaURL(jsonKey)
			d.Duration = float64(a.DurationMS) / 1000
		}
		if m, ok := a.MediaOf(narrator.ContentTypeM3U8); ok && m.Key != "" && access.Mode != narrator.AccessSigned {
			d.M3U8URL = mediaURL(m.Key)
		}
	}
	d.Embed = newEmbedSnippets(s.baseURL(r), a)
	counts, err := s.store.AudioListens(r.Context(), a.ID)
	if err != nil {
		return err
	}
	d.Listens = newListensData(counts)
	return s.render(w, r, http.StatusOK, "audio", userPage(q, untitled(a.Title), "projects", d))
}

func (s *Server) editAudioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, a, err := s.projectAudio(r, q)
	if err != nil {
		return err
	}
	f := audioForm{Title: a.Title, Body: a.Body, Author: a.Author, ArticleURL: a.ArticleURL,
		ExternalID: a.ExternalID, Metadata: metaRows(a.Metadata)}
	return s.render(w, r, http.StatusOK, "audio_form", userPage(q, "Edit audio", "projects", audioFormData{Project: p, Audio: a, Form: f}))
}

func (s *Server) updateAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	p, a, err := s.projectAudio(r, q)
	if err != nil {
		return err
	}
	f := readAudioForm(r)
	fail := func(err error) error {
		status, _ := formStatus(err)
		f.Metadata = withBlankRows(f.Metadata)
		d := audioFormData{Project: p, Audio: a, Form: f, Error: formError(err, audioLabels)}
		return s.render(w, r, status, "audio_form", userPage(q, "Edit audio", "projects", d))
	}
	if err := s.length.Text(f.Title, f.Author, f.Body); err != nil {
		return fail(err)
	}
	u := narrator.AudioUpdate{
		Title: &f.Title, Body: &f.Body, Author: &f.Author, ArticleURL: &f.ArticleURL,
		ExternalID: &f.ExternalID,
	}
	// A post without metadata rows did not come from the edit form, which
	// always has some: it leaves the metadata as it is.
	if _, ok := r.PostForm["metadata_key"]; ok {
		meta, err := metadataOf(f.Metadata)
		if err != nil {
			return fail(err)
		}
		u.Metadata, u.MetadataSet = meta, true
	}
	got, err := s.store.UpdateAudio(r.Context(), p.ID, fmt.Sprint(a.ID), u)
	if err != nil {
		if _, ok := formStatus(err); ok {
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

func (s *Server) resynthesizeAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	p, a, err := s.projectAudio(r, q)
	if err != nil {
		return err
	}
	if _, err := s.store.ResynthesizeAudio(r.Context(), p.ID, fmt.Sprint(a.ID)); err != nil {
		return err
	}
	s.setFlash(w, r, "The audio is being generated again.")
	http.Redirect(w, r, fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID), http.StatusSeeOther)
	return nil
}

func (s *Server) deleteAudioPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, a, err := s.projectAudio(r, q)
	if err != nil {
		return err
	}
	d := audioData{Project: p, Audio: a, BaseURL: fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID)}
	return s.render(w, r, http.StatusOK, "audio_delete", userPage(q, "Delete audio", "projects", d))
}

func (s *Server) deleteAudio(w http.ResponseWriter, r *http.Request, q *request) error {
	p, a, err := s.projectAudio(r, q)
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
