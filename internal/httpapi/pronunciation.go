package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/narrator/narrator"
)

// pronunciationJSON is a pronunciation rule on the wire (an extension of v3).
type pronunciationJSON struct {
	ID        int64     `json:"id"`
	Phrase    string    `json:"phrase"`
	Say       string    `json:"say"`
	CreatedAt time.Time `json:"created_at"`
	// Resynthesis is "queued" in answers to changes that asked for one
	// (narrator.ResynthesisJob): the audios with the phrase are re-queued
	// in the background.
	Resynthesis string `json:"resynthesis,omitempty"`
}

// ResynthesisQueue queues the resynthesis of a project's audios, after a
// pronunciation change or of all of them.
type ResynthesisQueue interface {
	// QueueResynthesis returns ECONFLICT while the project has one
	// queued or running.
	QueueResynthesis(ctx context.Context, job narrator.ResynthesisJob) error
}

func toPronunciationJSON(p *narrator.Pronunciation) pronunciationJSON {
	return pronunciationJSON{ID: p.ID, Phrase: p.Phrase, Say: p.Say, CreatedAt: p.CreatedAt.UTC()}
}

func (s *Server) listPronunciations(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	rules, err := s.store.ListPronunciations(r.Context(), p.ID)
	if err != nil {
		return err
	}
	out := make([]pronunciationJSON, 0, len(rules))
	for _, rule := range rules {
		out = append(out, toPronunciationJSON(rule))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) setPronunciation(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	rule := &narrator.Pronunciation{ProjectID: p.ID}
	for name, dst := range map[string]*string{"phrase": &rule.Phrase, "say": &rule.Say} {
		v, _, err := c.params.str(name, false)
		if err != nil {
			return err
		}
		*dst = v
	}
	again, err := c.params.boolean("resynthesize")
	if err != nil {
		return err
	}
	if err := s.store.SetPronunciation(r.Context(), rule); err != nil {
		return err
	}
	return s.answerRuleChange(w, r, rule, again)
}

func (s *Server) removePronunciation(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("rule_id"), 10, 64)
	if err != nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such rule")
	}
	again, err := c.params.boolean("resynthesize")
	if err != nil {
		return err
	}
	rule, err := s.store.RemovePronunciation(r.Context(), p.ID, id)
	if err != nil {
		return err
	}
	return s.answerRuleChange(w, r, rule, again)
}

// answerRuleChange queues the resynthesis of the audios that contain the
// rule's phrase, when asked, and writes the rule. The rule is changed
// already; a resynthesis already under way for the project refuses the
// new one with 409, saying so.
func (s *Server) answerRuleChange(w http.ResponseWriter, r *http.Request, rule *narrator.Pronunciation, again bool) error {
	out := toPronunciationJSON(rule)
	if again {
		if s.resynth == nil {
			return narrator.Errorf(narrator.EINVALID, "this server does not resynthesise audios")
		}
		err := s.resynth.QueueResynthesis(r.Context(), narrator.ResynthesisJob{ProjectID: rule.ProjectID, Phrase: rule.Phrase})
		if narrator.ErrorCode(err) == narrator.ECONFLICT {
			return narrator.Errorf(narrator.ECONFLICT, "the rule for %q was saved, but a resynthesis of this project is already under way; ask again with resynthesize once it has finished", rule.Phrase)
		}
		if err != nil {
			return err
		}
		out.Resynthesis = "queued"
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// voiceJSON is a voice of the catalog (an extension of v3).
type voiceJSON struct {
	Name     string   `json:"name"`
	Label    string   `json:"label"`
	Gender   string   `json:"gender"`
	Language string   `json:"language"`
	Engine   string   `json:"engine"`
	Default  []string `json:"default_for"`
}

func (s *Server) listVoices(w http.ResponseWriter, r *http.Request, c *call) error {
	language, _, err := c.params.str("language", false)
	if err != nil {
		return err
	}
	out := []voiceJSON{}
	cat := s.catalog(r.Context())
	for _, v := range cat.Voices() {
		if language != "" && v.Language != language {
			continue
		}
		title, body, _ := cat.Defaults(v.Language)
		roles := []string{}
		if title.Name == v.Name {
			roles = append(roles, "title")
		}
		if body.Name == v.Name {
			roles = append(roles, "body")
		}
		out = append(out, voiceJSON{Name: v.Name, Label: v.Label(), Gender: v.Gender, Language: v.Language, Engine: v.Engine, Default: roles})
	}
	if language != "" && len(out) == 0 {
		return narrator.Errorf(narrator.EINVALID, "language %q has no voices", language)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
