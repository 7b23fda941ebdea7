package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"
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

// newKeyCookie carries the secret of a session's new API key from the POST
// that creates it to the GET that shows it, once (POST, redirect, GET:
// reloading the page neither creates another key nor shows it again). Any
// node may answer the GET, so the secret cannot wait in one node's memory;
// and the server keeps no copy of it, so it travels sealed (AES-GCM) under
// a key derived from the session's token, which only the browser holds:
// the database keeps the token's hash. Another session, a tampered cookie
// or an expired one shows nothing.
const newKeyCookie = "narrator_new_key"

// Purposes of sealed secrets: each has a cipher of its own.
const (
	purposeAPIKey        = "narrator: the new API key of this session"
	purposeWebhookSecret = "narrator: the new webhook secret of this session"
)

// newKeyAEAD returns the cipher that seals a new secret for a purpose and a
// session token.
func newKeyAEAD(sessionToken, purpose string) (cipher.AEAD, error) {
	mac := hmac.New(sha256.New, []byte(sessionToken))
	mac.Write([]byte(purpose))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("new key cipher: %w", err)
	}
	return cipher.NewGCM(block)
}

// sealNewKey seals secret, to be shown before expires, for the session
// whose token is given.
func sealNewKey(sessionToken, purpose, secret string, expires time.Time) (string, error) {
	aead, err := newKeyAEAD(sessionToken, purpose)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal new key: %w", err)
	}
	plain := binary.BigEndian.AppendUint64(nil, uint64(expires.Unix()))
	plain = append(plain, secret...)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, nil)), nil
}

// openNewKey returns the secret sealed in value for the session, or "" if
// it is not this session's, was tampered with, or has expired.
func openNewKey(sessionToken, purpose, value string, now time.Time) string {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return ""
	}
	aead, err := newKeyAEAD(sessionToken, purpose)
	if err != nil || len(raw) < aead.NonceSize() {
		return ""
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil || len(plain) < 8 {
		return ""
	}
	if now.Unix() > int64(binary.BigEndian.Uint64(plain[:8])) {
		return ""
	}
	return string(plain[8:])
}

// setNewKeyCookie sets, or with maxAge < 0 deletes, the new key's cookie,
// which only the keys page receives.
func (s *Server) setNewKeyCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: newKeyCookie, Value: value, Path: "/keys", MaxAge: maxAge,
		HttpOnly: true, Secure: s.secureRequest(r), SameSite: http.SameSiteLaxMode,
	})
}

// takeNewKey returns the secret the request's new-key cookie carries for
// its session, "" if none, and deletes the cookie.
func (s *Server) takeNewKey(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(newKeyCookie)
	if err != nil {
		return ""
	}
	s.setNewKeyCookie(w, r, "", -1)
	token, err := r.Cookie(sessionCookie)
	if err != nil {
		return ""
	}
	return openNewKey(token.Value, purposeAPIKey, c.Value, s.now())
}

// keysPage lists the account's keys, and shows the secret of the key this
// session just created, once.
func (s *Server) keysPage(w http.ResponseWriter, r *http.Request, q *request) error {
	keys, err := s.store.ListAPIKeys(r.Context(), q.account.ID)
	if err != nil {
		return err
	}
	d := keysData{Keys: keys, NewKey: s.takeNewKey(w, r)}
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
	token, err := r.Cookie(sessionCookie)
	if err != nil {
		return fmt.Errorf("create key: no session cookie: %w", err)
	}
	sealed, err := sealNewKey(token.Value, purposeAPIKey, secret, s.now().Add(newKeyTTL))
	if err != nil {
		return err
	}
	s.setNewKeyCookie(w, r, sealed, int(newKeyTTL/time.Second))
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
