package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/narrator/narrator"
)

// Cookie and form field names.
const (
	sessionCookie = "narrator_session"
	signinCookie  = "narrator_signin" // the sign-in form's double-submit token
	flashCookie   = "narrator_flash"
	csrfField     = "csrf_token"
)

// Password limits. bcrypt reads at most 72 bytes.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 72
)

// ValidatePassword reports whether a password can be used: 8 to 72 bytes
// of UTF-8.
func ValidatePassword(pw string) error {
	switch {
	case len(pw) < MinPasswordLen:
		return narrator.Errorf(narrator.EINVALID, "the password must be at least %d characters", MinPasswordLen)
	case len(pw) > MaxPasswordLen:
		return narrator.Errorf(narrator.EINVALID, "the password must be at most %d bytes", MaxPasswordLen)
	case !utf8.ValidString(pw):
		return narrator.Errorf(narrator.EINVALID, "the password must be valid UTF-8")
	}
	return nil
}

// HashPassword validates a password and returns its bcrypt hash, which is
// salted and slow by design.
func HashPassword(pw string) ([]byte, error) {
	if err := ValidatePassword(pw); err != nil {
		return nil, err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// GeneratePassword returns a random password of 20 characters from an
// unambiguous alphabet (about 100 bits).
func GeneratePassword() (string, error) {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}

// dummy returns the hash compared against when an email is unknown, so
// that a wrong email takes as long as a wrong password. It is made on first
// use, from a random password nobody knows.
func (s *Server) dummy() []byte {
	s.dummyOnce.Do(func() {
		pw, err := newToken()
		if err == nil {
			s.dummyHash, err = bcrypt.GenerateFromPassword([]byte(pw[:40]), bcrypt.DefaultCost)
		}
		if err != nil {
			s.logger.Error("make dummy password hash", "err", err)
		}
	})
	return s.dummyHash
}

// newToken returns 32 random bytes, base64url-encoded.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("read random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// hashToken is how session tokens are stored.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// secureRequest reports whether cookies set in answer to r must be Secure.
func (s *Server) secureRequest(r *http.Request) bool {
	return s.secure || r.TLS != nil
}

// setCookie sets an HttpOnly, SameSite=Lax cookie on the whole site;
// maxAge < 0 deletes it.
func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   s.secureRequest(r),
		SameSite: http.SameSiteLaxMode,
	})
}

// request is a signed-in request.
type request struct {
	session *narrator.Session
	account *narrator.Account
}

// errCSRF is the code of a state-changing request without a valid token.
const errCSRF = "csrf"

// authed resolves the session cookie before calling h. Without a valid
// session, GET requests are redirected to the sign-in page (which brings
// the user back afterwards) and others to the sign-in page itself. A POST
// must carry the session's CSRF token.
func (s *Server) authed(h func(w http.ResponseWriter, r *http.Request, q *request) error) handlerFunc {
	return s.authedWith(s.parseForm, h)
}

// authedUpload is authed for a form that uploads a file: a multipart
// body of at most narrator.MaxClipBytes and a form's worth more.
func (s *Server) authedUpload(h func(w http.ResponseWriter, r *http.Request, q *request) error) handlerFunc {
	return s.authedWith(s.parseUpload, h)
}

// authedWith is authed reading a POST's body with parse.
func (s *Server) authedWith(parse func(w http.ResponseWriter, r *http.Request) error, h func(w http.ResponseWriter, r *http.Request, q *request) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		sess, err := s.session(r)
		if err != nil {
			if narrator.ErrorCode(err) != narrator.EUNAUTHORIZED {
				return err
			}
			target := "/signin"
			if r.Method == http.MethodGet && r.URL.Path != "/" {
				target += "?next=" + url.QueryEscape(r.URL.RequestURI())
			}
			http.Redirect(w, r, target, http.StatusSeeOther)
			return nil
		}
		if r.Method == http.MethodPost {
			if err := parse(w, r); err != nil {
				return err
			}
			if !tokenEqual(r.PostForm.Get(csrfField), sess.CSRFToken) {
				return narrator.Errorf(errCSRF, "the form's security token is missing or does not match")
			}
		}
		acct, err := s.store.FindAccount(r.Context(), sess.AccountID)
		if err != nil {
			return fmt.Errorf("find account of session: %w", err)
		}
		return h(w, r, &request{session: sess, account: acct})
	}
}

// session returns the request's live session, or EUNAUTHORIZED.
func (s *Server) session(r *http.Request) (*narrator.Session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 200 {
		return nil, narrator.Errorf(narrator.EUNAUTHORIZED, "not signed in")
	}
	return s.store.FindSession(r.Context(), hashToken(c.Value))
}

// tokenEqual compares tokens in constant time; an empty token never matches.
func tokenEqual(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// parseForm reads a form body of at most maxFormBytes.
func (s *Server) parseForm(w http.ResponseWriter, r *http.Request) error {
	return s.parseFormMax(w, r, maxFormBytes)
}

// parseFormMax reads a form body of at most max bytes.
func (s *Server) parseFormMax(w http.ResponseWriter, r *http.Request, max int64) error {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	return bodyError(r.ParseForm(), max)
}

// parseUpload reads a multipart form body that uploads a file, kept in
// memory: at most narrator.MaxClipBytes and maxFormBytes more. Any other
// body is read as parseForm reads it: a form that uploads nothing.
func (s *Server) parseUpload(w http.ResponseWriter, r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return s.parseForm(w, r)
	}
	max := int64(narrator.MaxClipBytes + maxFormBytes)
	r.Body = http.MaxBytesReader(w, r.Body, max)
	return bodyError(r.ParseMultipartForm(max), max)
}

// bodyError says why a form body of at most max bytes could not be read,
// if err says it could not.
func bodyError(err error, max int64) error {
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return narrator.Errorf(narrator.ETOOLARGE, "the form is larger than %d bytes", max)
		}
		if err := narrator.BodyError(err); narrator.ErrorCode(err) == narrator.ETIMEOUT {
			return err
		}
		return narrator.Errorf(narrator.EINVALID, "the form could not be read")
	}
	return nil
}

// signinData is the sign-in page.
type signinData struct {
	Email string
	Next  string
	Error string
}

func (s *Server) signinPage(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.session(r); err == nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return nil
	}
	return s.renderSignin(w, r, http.StatusOK, signinData{Next: safeNext(r.URL.Query().Get("next"))})
}

// renderSignin renders the sign-in form with its double-submit token: the
// browser's current one, so that several open sign-in tabs all work, or a
// fresh one.
func (s *Server) renderSignin(w http.ResponseWriter, r *http.Request, status int, d signinData) error {
	var tok string
	if c, err := r.Cookie(signinCookie); err == nil && len(c.Value) == 43 {
		tok = c.Value
	} else if tok, err = newToken(); err != nil {
		return err
	}
	s.setCookie(w, r, signinCookie, tok, 3600)
	return s.render(w, r, status, "signin", &page{Title: "Sign in", CSRF: tok, Data: d})
}

func (s *Server) signin(w http.ResponseWriter, r *http.Request) error {
	// The form has three short fields: a large body is refused before
	// anything is done with it.
	if err := s.parseFormMax(w, r, maxSigninFormBytes); err != nil {
		return err
	}
	// Sign-in has no session to tie a token to: the form's token must match
	// its cookie, and a browser's Origin header, when sent, this site.
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || (u.Host != r.Host && o != s.publicOrigin) {
			return narrator.Errorf(errCSRF, "the sign-in form was posted from another site")
		}
	}
	c, err := r.Cookie(signinCookie)
	if err != nil || !tokenEqual(r.PostForm.Get(csrfField), c.Value) {
		return narrator.Errorf(errCSRF, "the sign-in form's security token is missing or does not match")
	}
	email := narrator.NormalizeEmail(r.PostForm.Get("email"))
	password := r.PostForm.Get("password")
	d := signinData{Email: email, Next: safeNext(r.PostForm.Get("next"))}
	if email == "" || password == "" || len(email) > narrator.MaxEmailChars {
		d.Error = "Enter your email and password."
		return s.renderSignin(w, r, http.StatusBadRequest, d)
	}
	// The limits count an IPv6 client by its /64.
	ip := s.clients.Key(r)
	u, attempt, ok, err := s.checkPassword(w, r, ip, email, password)
	if err != nil || !ok {
		return err
	}
	if err := s.limiter.Succeed(r.Context(), attempt, ip, email); err != nil {
		return err
	}
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	s.setCookie(w, r, signinCookie, "", -1)
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
	return nil
}

// checkPassword reserves a sign-in attempt under the limits, then checks
// the password. If the attempt is refused or the password wrong, it
// renders the sign-in page with the reason and returns ok false.
func (s *Server) checkPassword(w http.ResponseWriter, r *http.Request, ip, email, password string) (u *narrator.User, attempt string, ok bool, err error) {
	d := signinData{Email: email, Next: safeNext(r.PostForm.Get("next"))}
	attempt, ref, err := s.limiter.Reserve(r.Context(), ip, email)
	if err != nil {
		return nil, "", false, err
	}
	if ref != nil {
		if ref.First {
			// Logged once per lockout. The email's domain says whose
			// accounts are targeted without naming a person.
			s.logger.Warn("sign-in attempts refused by the rate limit",
				"limit", ref.By, "client_ip", ip, "email_domain", emailDomain(email),
				"retry_after", ref.Wait.Round(time.Second).String())
		}
		wait := ref.Wait
		minutes := int(wait.Round(time.Minute) / time.Minute)
		if minutes < 1 {
			minutes = 1
		}
		w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
		d.Error = fmt.Sprintf("Too many sign-in attempts. Try again in %d minute%s.", minutes, plural(minutes))
		return nil, "", false, s.renderSignin(w, r, http.StatusTooManyRequests, d)
	}
	u, err = s.store.FindUserByEmail(r.Context(), email)
	hash := s.dummy()
	switch {
	case err == nil:
		hash = u.PasswordHash
	case narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return nil, "", false, err
	}
	// bcrypt is slow by design: the checks under way are bounded, and an
	// attempt beyond them is answered at once rather than queued. The slot
	// is taken only now, so that no check waits on the limiter's write;
	// an attempt refused here is forgotten, as no password was checked.
	select {
	case s.checks <- struct{}{}:
	default:
		if err := s.limiter.Forget(r.Context(), attempt); err != nil {
			return nil, "", false, err
		}
		w.Header().Set("Retry-After", "1")
		d.Error = "The server is busy checking other sign-ins. Try again in a moment."
		return nil, "", false, s.renderSignin(w, r, http.StatusServiceUnavailable, d)
	}
	wrong := s.compare(hash, []byte(password)) != nil
	<-s.checks
	// A failed attempt stays recorded: it was counted when reserved.
	if wrong || u == nil {
		d.Error = "The email or password is not right."
		return nil, "", false, s.renderSignin(w, r, http.StatusUnauthorized, d)
	}
	return u, attempt, true, nil
}

// startSession creates a session for u and sets its cookie.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u *narrator.User) error {
	token, err := newToken()
	if err != nil {
		return err
	}
	csrf, err := newToken()
	if err != nil {
		return err
	}
	sess := &narrator.Session{UserID: u.ID, CSRFToken: csrf, ExpiresAt: s.now().Add(s.ttl)}
	if err := s.store.CreateSession(r.Context(), sess, hashToken(token)); err != nil {
		return fmt.Errorf("sign in user %d: %w", u.ID, err)
	}
	s.setCookie(w, r, sessionCookie, token, int(s.ttl/time.Second))
	return nil
}

func (s *Server) signout(w http.ResponseWriter, r *http.Request, q *request) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := s.store.DeleteSession(context.WithoutCancel(r.Context()), hashToken(c.Value)); err != nil {
			return err
		}
	}
	s.setCookie(w, r, sessionCookie, "", -1)
	s.setFlash(w, r, "You are signed out.")
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
	return nil
}

// safeNext returns next if it is a path on this site, else /projects, so
// that sign-in never redirects elsewhere.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n\t") || strings.HasPrefix(next, "/signin") {
		return "/projects"
	}
	return next
}

// setFlash leaves a one-time message for the next page.
func (s *Server) setFlash(w http.ResponseWriter, r *http.Request, msg string) {
	s.setCookie(w, r, flashCookie, url.QueryEscape(msg), 60)
}

// takeFlash returns and clears the pending one-time message.
func (s *Server) takeFlash(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	s.setCookie(w, r, flashCookie, "", -1)
	msg, err := url.QueryUnescape(c.Value)
	if err != nil || len(msg) > 300 {
		return ""
	}
	return msg
}

// emailDomain is the part of an email after its last @, or "" if none.
func emailDomain(email string) string {
	i := strings.LastIndexByte(email, '@')
	if i < 0 {
		return ""
	}
	return email[i+1:]
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
