package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

func (s *Server) home(w http.ResponseWriter, r *http.Request, q *request) error {
	http.Redirect(w, r, "/projects", http.StatusSeeOther)
	return nil
}

// projectForm is the create-project form's values.
type projectForm struct {
	Title, Type, Language, URL, TitleVoice, BodyVoice, SpeechRate string
}

// projectsData is the projects page.
type projectsData struct {
	Projects  []*narrator.Project
	Languages []languageOption
	Form      projectForm
	Error     string
}

func (s *Server) projectsPage(w http.ResponseWriter, r *http.Request, q *request) error {
	t, b, _ := s.catalog(r.Context()).Defaults("en_US")
	return s.renderProjects(w, r, q, http.StatusOK, projectForm{Language: "en_US", TitleVoice: t.Name, BodyVoice: b.Name, SpeechRate: "1"}, "")
}

func (s *Server) renderProjects(w http.ResponseWriter, r *http.Request, q *request, status int, f projectForm, formErr string) error {
	ps, err := s.store.ListProjects(r.Context(), q.account.ID)
	if err != nil {
		return err
	}
	d := projectsData{Projects: ps, Languages: languageOptions(s.catalog(r.Context())), Form: f, Error: formErr}
	return s.render(w, r, status, "projects", userPage(q, "Projects", "projects", d))
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request, q *request) error {
	f := projectForm{
		Title:      strings.TrimSpace(r.PostForm.Get("title")),
		Type:       orDefault(r.PostForm.Get("type"), narrator.ProjectTypeAPI),
		Language:   r.PostForm.Get("language"),
		URL:        strings.TrimSpace(r.PostForm.Get("url")),
		TitleVoice: r.PostForm.Get("title_voice"),
		BodyVoice:  r.PostForm.Get("body_voice"),
		SpeechRate: strings.TrimSpace(r.PostForm.Get("speech_rate")),
	}
	p := &narrator.Project{
		AccountID: q.account.ID, Title: f.Title, Type: f.Type,
		Language: f.Language, URL: f.URL, SpeechRate: parseRate(f.SpeechRate),
	}
	cat := s.catalog(r.Context())
	dt, db, ok := cat.Defaults(f.Language)
	if ok {
		p.TitleVoice, p.BodyVoice = orDefault(f.TitleVoice, dt.Name), orDefault(f.BodyVoice, db.Name)
		// Store canonical names, whatever case the form sent.
		if v, ok := cat.Lookup(f.Language, p.TitleVoice); ok {
			p.TitleVoice = v.Name
		}
		if v, ok := cat.Lookup(f.Language, p.BodyVoice); ok {
			p.BodyVoice = v.Name
		}
	}
	err := cat.CheckProject(p)
	if err == nil {
		err = p.Validate()
	}
	if err == nil {
		err = s.store.CreateProject(r.Context(), p)
	}
	if err != nil {
		if narrator.ErrorCode(err) == narrator.EINVALID {
			return s.renderProjects(w, r, q, http.StatusBadRequest, f, formError(err, projectLabels))
		}
		return err
	}
	s.setFlash(w, r, fmt.Sprintf("Project %q created.", p.Title))
	http.Redirect(w, r, fmt.Sprintf("/projects/%d", p.ID), http.StatusSeeOther)
	return nil
}

// project loads the request's {pid} project of the signed-in account.
func (s *Server) project(r *http.Request, q *request) (*narrator.Project, error) {
	id, err := strconv.ParseInt(r.PathValue("pid"), 10, 64)
	if err != nil || id <= 0 {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "no such project")
	}
	return s.store.FindProject(r.Context(), q.account.ID, id)
}

// periods are the list filters, as in the API, with their labels.
var periods = []struct {
	Name, Label string
	Back        time.Duration
}{
	{"all", "All time", 0},
	{"daily", "Last 24 hours", 24 * time.Hour},
	{"weekly", "Last 7 days", 7 * 24 * time.Hour},
	{"monthly", "Last 30 days", 30 * 24 * time.Hour},
}

// projectData is the project page.
type projectData struct {
	Project *narrator.Project
	Audios  []audioRow
	Total   int
	Page    int
	Pages   int
	Period  string
	Query   string
	Periods []struct {
		Name, Label string
		Back        time.Duration
	}
	PrevURL, NextURL string
	Listens          listensData
	// CanImport shows the "Import from URL" form.
	CanImport bool
}

// audioRow is an audio as a list row.
type audioRow struct {
	*narrator.Audio
	URL string
}

func (s *Server) projectPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	period := v.Get("period")
	if period == "" {
		period = "all"
	}
	var since time.Time
	known := false
	for _, pd := range periods {
		if pd.Name == period {
			known = true
			if pd.Back > 0 {
				since = s.now().Add(-pd.Back)
			}
		}
	}
	if !known {
		return narrator.Errorf(narrator.EINVALID, "period must be one of all, daily, weekly or monthly")
	}
	pageNum := 1
	if sp := v.Get("page"); sp != "" {
		n, err := strconv.Atoi(sp)
		if err != nil || n < 1 || n > 1_000_000 {
			return narrator.Errorf(narrator.EINVALID, "page must be a whole number from 1 up")
		}
		pageNum = n
	}
	query := strings.TrimSpace(v.Get("q"))
	if len(query) > 500 {
		return narrator.Errorf(narrator.EINVALID, "the search is too long")
	}
	audios, total, err := s.store.SearchAudios(r.Context(), p.ID, query, since, pageNum, AudiosPerPage)
	if err != nil {
		return err
	}
	d := projectData{Project: p, Total: total, Page: pageNum, Period: period, Query: query, Periods: periods, CanImport: s.importer != nil}
	now := s.now()
	listens, err := s.store.ProjectListens(r.Context(), p.ID, now.AddDate(0, 0, -chartDays))
	if err != nil {
		return err
	}
	d.Listens = newListensData(listens.Total)
	d.Listens.Chart = newPlaysChart(listens.Days, now)
	d.Pages = max(1, (total+AudiosPerPage-1)/AudiosPerPage)
	for _, a := range audios {
		d.Audios = append(d.Audios, audioRow{Audio: a, URL: fmt.Sprintf("/projects/%d/audios/%d", p.ID, a.ID)})
	}
	link := func(n int) string {
		lv := url.Values{}
		if period != "all" {
			lv.Set("period", period)
		}
		if query != "" {
			lv.Set("q", query)
		}
		if n > 1 {
			lv.Set("page", strconv.Itoa(n))
		}
		u := fmt.Sprintf("/projects/%d", p.ID)
		if enc := lv.Encode(); enc != "" {
			u += "?" + enc
		}
		return u
	}
	if pageNum > 1 {
		d.PrevURL = link(min(pageNum-1, d.Pages))
	}
	if pageNum < d.Pages {
		d.NextURL = link(pageNum + 1)
	}
	return s.render(w, r, http.StatusOK, "project", userPage(q, p.Title, "projects", d))
}

// audioStatusJSON is one audio in the status endpoint's answer.
type audioStatusJSON struct {
	ID         int64  `json:"id"`
	State      string `json:"state"`
	StateLabel string `json:"state_label"`
	Duration   string `json:"duration"`
	Updated    string `json:"updated"`
	UpdatedISO string `json:"updated_iso"`
	Error      string `json:"error"`
	// Progress is there while the audio is unprocessed.
	Progress *progressJSON `json:"progress,omitempty"`
}

// maxStatusIDs bounds the audios one status request asks about.
const maxStatusIDs = 200

// audioStatus answers the project page's polling: the current state of the
// audios whose IDs are listed in ?ids=1,2,3. Audios that are gone are
// reported with state "deleted".
func (s *Server) audioStatus(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	var ids []int64
	for f := range strings.SplitSeq(r.URL.Query().Get("ids"), ",") {
		if f == "" {
			continue
		}
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || len(ids) >= maxStatusIDs {
			return narrator.Errorf(narrator.EINVALID, "ids must be up to %d audio IDs separated by commas", maxStatusIDs)
		}
		ids = append(ids, id)
	}
	audios, err := s.store.FindAudiosByID(r.Context(), p.ID, ids)
	if err != nil {
		return err
	}
	found := map[int64]*narrator.Audio{}
	for _, a := range audios {
		found[a.ID] = a
	}
	out := make([]audioStatusJSON, 0, len(ids))
	for _, id := range ids {
		a, ok := found[id]
		if !ok {
			out = append(out, audioStatusJSON{ID: id, State: "deleted", StateLabel: "Deleted"})
			continue
		}
		st := audioStatusJSON{
			ID: a.ID, State: a.State, StateLabel: stateLabel(a.State), Duration: formatDuration(a.DurationMS),
			Updated: formatTime(a.UpdatedAt), UpdatedISO: a.UpdatedAt.UTC().Format(time.RFC3339),
		}
		switch a.State {
		case narrator.StateFailed:
			st.Error = a.Error
		case narrator.StateUnprocessed:
			if st.Progress, err = s.progressOf(r.Context(), a); err != nil {
				return err
			}
		}
		out = append(out, st)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode audio status: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
	return nil
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}
