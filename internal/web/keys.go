package web

import (
	"net/http"
	"strconv"

	"github.com/narrator/narrator"
)

// keysData is the API keys page.
type keysData struct {
	Keys []*narrator.APIKey
	// NewKey is the secret of the key just created, shown this once.
	NewKey string
	// Active counts the keys not revoked.
	Active int
}

func (s *Server) keysPage(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderKeys(w, r, q, "")
}

func (s *Server) renderKeys(w http.ResponseWriter, r *http.Request, q *request, newKey string) error {
	keys, err := s.store.ListAPIKeys(r.Context(), q.account.ID)
	if err != nil {
		return err
	}
	d := keysData{Keys: keys, NewKey: newKey}
	for _, k := range keys {
		if k.RevokedAt == nil {
			d.Active++
		}
	}
	return s.render(w, r, http.StatusOK, "keys", userPage(q, "API keys", "keys", d))
}

// createKey makes a key and shows its secret on the page it answers with,
// never again: only its hash is stored.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request, q *request) error {
	secret, prefix, hash, err := narrator.NewAPIKey()
	if err != nil {
		return err
	}
	if _, err := s.store.CreateAPIKey(r.Context(), q.account.ID, hash, prefix); err != nil {
		return err
	}
	return s.renderKeys(w, r, q, secret)
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := strconv.ParseInt(r.PathValue("kid"), 10, 64)
	if err != nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such key")
	}
	if err := s.store.RevokeAPIKey(r.Context(), q.account.ID, id); err != nil {
		return err
	}
	s.setFlash(w, r, "The key is revoked. The API refuses it from now on.")
	http.Redirect(w, r, "/keys", http.StatusSeeOther)
	return nil
}
