package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/narrator/narrator"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// staticHandler serves the embedded CSS, JavaScript and icons. Their names
// do not change between builds, so they are cached for an hour only.
func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// pages holds one parsed template set per page, each with the layout.
type pages struct {
	sets map[string]*template.Template
}

// parsePages parses every page template with the layout.
func parsePages() (*pages, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	p := &pages{sets: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// page is what every template gets.
type page struct {
	Title   string
	Nav     string // the active navigation item
	CSRF    string // the token the page's forms carry
	Flash   string
	Account *narrator.Account // nil when signed out
	Email   string
	Data    any
	Catalog *narrator.Catalog // the voice catalog, for voice labels; render sets it
}

// render writes a page with the layout.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) error {
	t, ok := s.pages.sets[name]
	if !ok {
		return fmt.Errorf("render: no template %q", name)
	}
	if p.Flash == "" {
		p.Flash = s.takeFlash(w, r)
	}
	p.Catalog = s.catalog(r.Context())
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// userPage returns the page of a signed-in request.
func userPage(q *request, title, nav string, data any) *page {
	return &page{Title: title, Nav: nav, CSRF: q.session.CSRFToken, Account: q.account, Email: q.session.Email, Data: data}
}

// handlerFunc is a handler that reports failure by returning an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc: a returned error becomes an error page, and
// is logged here, once, if it is not the client's mistake.
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// errorPages maps error codes to a status and a heading. The message is
// the error's own, except for internal errors, whose text stays in the log.
var errorPages = map[string]struct {
	status  int
	heading string
	message string
}{
	narrator.EINVALID:     {http.StatusBadRequest, "That did not work", ""},
	narrator.ETOOLARGE:    {http.StatusRequestEntityTooLarge, "Too large", ""},
	narrator.ETIMEOUT:     {http.StatusRequestTimeout, "Took too long", ""},
	narrator.ENOTFOUND:    {http.StatusNotFound, "Not found", "This page does not exist, or it belongs to another account."},
	narrator.ECONFLICT:    {http.StatusConflict, "Conflict", ""},
	narrator.EQUEUEFULL:   {http.StatusTooManyRequests, "Too many audios waiting", ""},
	narrator.EQUOTA:       {http.StatusForbidden, "Storage quota full", ""},
	narrator.EUNAVAILABLE: {http.StatusServiceUnavailable, "Not available just now", ""},
	narrator.EUNREADABLE:  {http.StatusUnprocessableEntity, "The page could not be imported", ""},
	narrator.ERATELIMITED: {http.StatusTooManyRequests, "Too many requests", ""},
	errCSRF: {http.StatusForbidden, "Request refused",
		"This form's security token is missing or out of date, so it was not accepted. Go back, reload the page and try again."},
	narrator.EINTERNAL: {http.StatusInternalServerError, "Something went wrong", "The server could not complete the request. Try again in a moment."},
}

// writeError answers with the error page of err's code.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	err = narrator.ClientGone(r.Context(), err)
	code := narrator.ErrorCode(err)
	if code == narrator.EUNAUTHORIZED {
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	e, ok := errorPages[code]
	if !ok {
		e = errorPages[narrator.EINTERNAL]
	}
	switch e.status {
	case http.StatusInternalServerError:
		s.logger.ErrorContext(r.Context(), "dashboard request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(int(narrator.UnavailableRetryAfter.Seconds())))
	}
	msg := e.message
	if msg == "" {
		msg = narrator.Sentence(narrator.ErrorMessage(err))
	}
	s.renderError(w, r, e.status, e.heading, msg)
}

// renderError writes an error page; if even that fails, plain text.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, heading, msg string) {
	d := struct {
		Status  int
		Heading string
		Message string
	}{status, heading, msg}
	if err := s.render(w, r, status, "error", &page{Title: heading, Data: d}); err != nil {
		s.logger.Error("render error page", "err", err)
		http.Error(w, msg, status)
	}
}

func (s *Server) notFoundPage(w http.ResponseWriter, r *http.Request) error {
	if s.notFound != nil && !strings.Contains(r.Header.Get("Accept"), "text/html") {
		s.notFound.ServeHTTP(w, r)
		return nil
	}
	return narrator.Errorf(narrator.ENOTFOUND, "no such page")
}

// fieldLabel pairs a field name, as the domain's messages use it, with the
// label of the form field that holds it.
type fieldLabel struct{ field, label string }

// projectLabels and audioLabels are the labels of the project and audio
// forms. Longer names come first, so that "title_voice" is not read as
// "title".
var (
	projectLabels = []fieldLabel{
		{"title_voice", "Title voice"}, {"body_voice", "Body voice"}, {"language", "Language"},
		{"speech_rate", "Speaking rate"}, {"title", "Title"}, {"url", "Website"},
	}
	audioLabels = []fieldLabel{
		{"article_url", "Article URL"}, {"external_id", "External ID"}, {"metadata", "Metadata"},
		{"title", "Title"}, {"body", "Text"}, {"author", "Author"},
	}
)

// formError is a form's message for a validation error. The domain's
// messages, written for API clients, name fields as the API does
// ("external_id is …") and may point to the CLI; here the field's name
// becomes the form's label and hints about commands are dropped.
func formError(err error, labels []fieldLabel) string {
	msg := narrator.ErrorMessage(err)
	// Hints such as "; run `narrator voices` for the list" are for the CLI.
	if i := strings.Index(msg, "; run `"); i >= 0 {
		msg = msg[:i]
	}
	for _, l := range labels {
		rest, ok := strings.CutPrefix(msg, l.field)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != ':') {
			continue
		}
		msg = l.label + strings.TrimPrefix(rest, ":")
		break
	}
	return narrator.Sentence(msg)
}

// formStatus returns the status of a form shown again with err's message,
// and whether err is one to show on the form (a mistake in it, or an
// account limit) rather than on an error page.
func formStatus(err error) (int, bool) {
	switch code := narrator.ErrorCode(err); code {
	case narrator.EINVALID, narrator.ECONFLICT:
		return http.StatusBadRequest, true
	case narrator.EQUEUEFULL, narrator.EQUOTA, narrator.EUNREADABLE, narrator.EUNAVAILABLE:
		return errorPages[code].status, true
	}
	return 0, false
}

// funcs are the template functions.
var funcs = template.FuncMap{
	"datetime":    formatTime,
	"isotime":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"duration":    formatDuration,
	"every":       every,
	"language":    languageName,
	"voicelabel":  voiceLabel,
	"add":         func(a, b int) int { return a + b },
	"stateLabel":  stateLabel,
	"isProcessed": func(a *narrator.Audio) bool { return a.State == narrator.StateProcessed },
	"isFailed":    func(a *narrator.Audio) bool { return a.State == narrator.StateFailed },
	"isPending":   func(a *narrator.Audio) bool { return a.State == narrator.StateUnprocessed },
	"untitled":    untitled,
	"dict":        dict,
	"has":         slices.Contains[[]string],
}

// dict builds a map from alternating keys and values, to pass several
// values to a template.
func dict(kvs ...any) (map[string]any, error) {
	if len(kvs)%2 != 0 {
		return nil, fmt.Errorf("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kvs)/2)
	for i := 0; i < len(kvs); i += 2 {
		k, ok := kvs[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kvs[i])
		}
		m[k] = kvs[i+1]
	}
	return m, nil
}

// formatTime shows a time to people, in UTC.
func formatTime(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") }

// formatDuration shows milliseconds as m:ss, or "—" for none.
func formatDuration(ms int64) string {
	if ms <= 0 {
		return "—"
	}
	// Whole seconds, rounded down as players show them: 10.55 s is 0:10.
	sec := ms / 1000
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}

// every says how often something recurs, every d, as a person writes it:
// "Every 10 minutes", "Every hour", "Every 1 hour 30 minutes", "Every day".
func every(d time.Duration) string {
	switch d {
	case time.Second:
		return "Every second"
	case time.Minute:
		return "Every minute"
	case time.Hour:
		return "Every hour"
	case 24 * time.Hour:
		return "Every day"
	}
	return "Every " + humanDuration(d)
}

// humanDuration writes d in days, hours, minutes and seconds, the units it
// has, largest first: "10 minutes", "1 hour 30 minutes", "2 days". It
// drops what is under a second.
func humanDuration(d time.Duration) string {
	if d < time.Second {
		return "0 seconds"
	}
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		n := d / u.d
		d -= n * u.d
		switch {
		case n == 1:
			parts = append(parts, "1 "+u.name)
		case n > 1:
			parts = append(parts, strconv.FormatInt(int64(n), 10)+" "+u.name+"s")
		}
	}
	return strings.Join(parts, " ")
}

// stateLabel is how a state reads in the dashboard.
func stateLabel(state string) string {
	switch state {
	case narrator.StateUnprocessed:
		return "Unprocessed"
	case narrator.StateProcessed:
		return "Processed"
	case narrator.StateFailed:
		return "Failed"
	}
	return state
}

// untitled returns the title as one line of text, or a placeholder for
// none. Line breaks and tabs become spaces and other control characters are
// dropped, which fonts would draw as boxes.
func untitled(title string) string {
	title = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, title)
	if strings.TrimSpace(title) == "" {
		return "(untitled)"
	}
	return title
}

// voiceLabel returns the label ("Sally (Female)") of a project's voice for
// role ("title" or "body"). A voice the catalog no longer has (the operator
// removed it) is named with the default that speaks instead.
func voiceLabel(cat *narrator.Catalog, language, name, role string) string {
	v, fellBack, ok := cat.Resolve(language, name, role == "title")
	switch {
	case !ok:
		return name
	case fellBack:
		return name + " (removed; " + v.Label() + " speaks instead)"
	}
	return v.Label()
}
