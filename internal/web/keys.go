package web

import (
	"net/http"
	"strconv"
	"sync"
	"time"

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

// newKeyTTL is how long the secret of a new key waits for the page that
// shows it.
const newKeyTTL = 5 * time.Minute

// newKeys holds the secret of each session's newly created API key between
// the POST that creates it and the GET that shows it, once (POST, redirect,
// GET: reloading the page neither creates another key nor shows it again).
// The secret stays in this process's memory only, never in a URL or cookie.
// Behind a load balancer without sticky sessions the GET may reach another
// node and find nothing; the key then must be revoked and made again.
type newKeys struct {
	mu   sync.Mutex
	keys map[int64]pendingKey // session ID → its new key
}

type pendingKey struct {
	secret  string
	expires time.Time
}

// put keeps secret for the session, replacing any it had, and forgets
// expired ones.
func (n *newKeys) put(sessionID int64, secret string, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.keys == nil {
		n.keys = map[int64]pendingKey{}
	}
	for id, k := range n.keys {
		if now.After(k.expires) {
			delete(n.keys, id)
		}
	}
	n.keys[sessionID] = pendingKey{secret: secret, expires: now.Add(newKeyTTL)}
}

// take returns and forgets the session's pending secret, "" if none.
func (n *newKeys) take(sessionID int64, now time.Time) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	k, ok := n.keys[sessionID]
	if !ok {
		return ""
	}
	delete(n.keys, sessionID)
	if now.After(k.expires) {
		return ""
	}
	return k.secret
}

// keysPage lists the account's keys, and shows the secret of the key this
// session just created, once.
func (s *Server) keysPage(w http.ResponseWriter, r *http.Request, q *request) error {
	keys, err := s.store.ListAPIKeys(r.Context(), q.account.ID)
	if err != nil {
		return err
	}
	d := keysData{Keys: keys, NewKey: s.newKeys.take(q.session.ID, s.now())}
	for _, k := range keys {
		if k.RevokedAt == nil {
			d.Active++
		}
	}
	return s.render(w, r, http.StatusOK, "keys", userPage(q, "API keys", "keys", d))
}

// createKey makes a key and redirects to the keys page, which shows its
// secret once: only its hash is stored.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request, q *request) error {
	secret, prefix, hash, err := narrator.NewAPIKey()
	if err != nil {
		return err
	}
	if _, err := s.store.CreateAPIKey(r.Context(), q.account.ID, hash, prefix); err != nil {
		return err
	}
	s.newKeys.put(q.session.ID, secret, s.now())
	http.Redirect(w, r, "/keys", http.StatusSeeOther)
	return nil
}

// accountKey returns the request's {kid} key of the signed-in account.
func (s *Server) accountKey(r *http.Request, q *request) (*narrator.APIKey, error) {
	id, err := strconv.ParseInt(r.PathValue("kid"), 10, 64)
	if err != nil {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "no such key")
	}
	keys, err := s.store.ListAPIKeys(r.Context(), q.account.ID)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return nil, narrator.Errorf(narrator.ENOTFOUND, "no such key")
}

// revokeKeyPage asks for confirmation before a key is revoked.
func (s *Server) revokeKeyPage(w http.ResponseWriter, r *http.Request, q *request) error {
	k, err := s.accountKey(r, q)
	if err != nil {
		return err
	}
	if k.RevokedAt != nil {
		s.setFlash(w, r, "That key is already revoked.")
		http.Redirect(w, r, "/keys", http.StatusSeeOther)
		return nil
	}
	return s.render(w, r, http.StatusOK, "key_revoke", userPage(q, "Revoke API key", "keys", k))
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
