package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/narrator/narrator"
)

// SourcePoller reads a project's feed at once, for the poll extension;
// source.Poller satisfies it.
type SourcePoller interface {
	// Poll returns the feed with the state its read left: a feed that
	// could not be read is no error, its state says why. It returns
	// ENOTFOUND for no such feed and ECONFLICT while another read holds it.
	Poll(ctx context.Context, id int64) (*narrator.Source, error)
}

// sourceJSON is a feed of an rss project on the wire (an extension of v3).
type sourceJSON struct {
	ID              int64             `json:"id"`
	ProjectID       int64             `json:"project_id"`
	URL             string            `json:"url"`
	Headers         []string          `json:"headers"`
	Mapping         map[string]string `json:"mapping"`
	FullText        bool              `json:"full_text"`
	BackfillItems   int               `json:"backfill_items"`
	BackfillDays    float64           `json:"backfill_days"`
	IntervalMinutes float64           `json:"interval_minutes"`
	CreatedAt       time.Time         `json:"created_at"`
	Status          string            `json:"status"`
	LastError       string            `json:"last_error"`
	LastFetchAt     *time.Time        `json:"last_fetch_at"`
	NextPollAt      time.Time         `json:"next_poll_at"`
	Failures        int               `json:"failures"`
	ItemsSeen       int64             `json:"items_seen"`
	Created         int64             `json:"created"`
	Updated         int64             `json:"updated"`
}

// SourceJSON converts a feed to its wire form: its headers by name only,
// as they may hold credentials. It is exported for the CLI.
func SourceJSON(s *narrator.Source) any {
	mapping := s.Mapping
	if mapping == nil {
		mapping = map[string]string{}
	}
	return sourceJSON{ID: s.ID, ProjectID: s.ProjectID, URL: s.URL, Headers: s.HeaderNames(), Mapping: mapping, FullText: s.FullText,
		BackfillItems: s.BackfillItems, BackfillDays: s.BackfillSince.Hours() / 24, IntervalMinutes: s.Interval.Minutes(),
		CreatedAt: s.CreatedAt.UTC(), Status: s.State.Status, LastError: s.State.LastError, LastFetchAt: timeOrNil(s.State.LastFetchAt),
		NextPollAt: s.State.NextPollAt.UTC(), Failures: s.State.Failures, ItemsSeen: s.State.ItemsSeen, Created: s.State.Created, Updated: s.State.Updated}
}

// object returns a parameter that holds a JSON object of strings, and
// whether it was given; in forms as name[key]=value pairs.
func (p *params) object(name string) (map[string]string, bool, error) {
	if raw, ok := p.json[name]; ok {
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, false, narrator.Errorf(narrator.EINVALID, "%s must be an object of string values", name)
		}
		return m, m != nil, nil
	}
	var m map[string]string
	for k, vs := range p.form {
		if len(k) > len(name)+2 && k[:len(name)+1] == name+"[" && k[len(k)-1] == ']' {
			if m == nil {
				m = map[string]string{}
			}
			m[k[len(name)+1:len(k)-1]] = vs[0]
		}
	}
	return m, m != nil, nil
}

// number returns a numeric parameter within [lo, hi], and whether it was
// given.
func (p *params) number(name string, lo, hi float64) (float64, bool, error) {
	v, ok, err := p.str(name, true)
	if err != nil || !ok || v == "" {
		return 0, false, err
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < lo || n > hi {
		return 0, false, narrator.Errorf(narrator.EINVALID, "%s must be a number from %g to %g", name, lo, hi)
	}
	return n, true, nil
}

// source resolves the path's project and source_id within the caller's
// account.
func (s *Server) source(r *http.Request, c *call) (*narrator.Source, error) {
	p, err := s.project(r, c)
	if err != nil {
		return nil, err
	}
	id, err := pathID(r, "source_id")
	if err != nil {
		return nil, err
	}
	return s.store.FindSource(r.Context(), p.ID, id)
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	list, err := s.store.ListSources(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeList(w, list, SourceJSON)
	return nil
}

func (s *Server) createSource(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	u, _, err := c.params.str("url", false)
	if err != nil {
		return err
	}
	src := narrator.NewSource(p.ID, u)
	if src.Header, _, err = c.params.object("headers"); err != nil {
		return err
	}
	if src.Mapping, _, err = c.params.object("mapping"); err != nil {
		return err
	}
	if src.FullText, err = c.params.boolean("full_text"); err != nil {
		return err
	}
	n, _, err := c.params.number("backfill_items", 0, narrator.MaxItemsPerSource)
	if err != nil {
		return err
	}
	src.BackfillItems = int(n)
	days, _, err := c.params.number("backfill_days", 0, 100*365)
	if err != nil {
		return err
	}
	src.BackfillSince = time.Duration(days * float64(24*time.Hour))
	minutes, ok, err := c.params.number("interval_minutes", narrator.MinPollInterval.Minutes(), narrator.MaxPollInterval.Minutes())
	if err != nil {
		return err
	}
	if ok {
		src.Interval = time.Duration(minutes * float64(time.Minute))
	}
	if err := s.store.CreateSource(r.Context(), src); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, SourceJSON(src))
	return nil
}

func (s *Server) getSource(w http.ResponseWriter, r *http.Request, c *call) error {
	src, err := s.source(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, SourceJSON(src))
	return nil
}

func (s *Server) deleteSource(w http.ResponseWriter, r *http.Request, c *call) error {
	src, err := s.source(r, c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteSource(r.Context(), src.ProjectID, src.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, SourceJSON(src))
	return nil
}

// pollSource reads a feed while the request waits (the fetcher's timeout
// bounds it) and answers with the state the read left: a feed that could
// not be read is a 200 whose status and last_error say why.
func (s *Server) pollSource(w http.ResponseWriter, r *http.Request, c *call) error {
	if s.sources == nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such route")
	}
	src, err := s.source(r, c)
	if err != nil {
		return err
	}
	if src, err = s.sources.Poll(r.Context(), src.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, SourceJSON(src))
	return nil
}
