package narrator

import (
	"strings"
	"time"
	"unicode"
)

// MaxEmailChars bounds a dashboard user's email address (RFC 5321's limit).
const MaxEmailChars = 254

// User is a person who signs in to the dashboard. A user belongs to one
// account and sees only that account's projects, audios and keys.
type User struct {
	ID        int64
	AccountID int64
	Email     string // normalised with NormalizeEmail
	// PasswordHash is a slow, salted hash of the password (bcrypt). The
	// password itself is never stored.
	PasswordHash []byte
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// NormalizeEmail returns the form in which emails are stored and compared:
// trimmed and lower-cased.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Validate checks a user's email and that a password hash is set.
func (u *User) Validate() error {
	e := u.Email
	local, domain, ok := strings.Cut(e, "@")
	switch {
	case e == "" || len(e) > MaxEmailChars:
		return Errorf(EINVALID, "email must be 1 to %d characters", MaxEmailChars)
	case e != NormalizeEmail(e):
		return Errorf(EINVALID, "email must be lower-case without surrounding spaces")
	case !ok || local == "" || domain == "" || strings.Contains(domain, "@"):
		return Errorf(EINVALID, "email %q is not an email address", e)
	case strings.ContainsFunc(e, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return Errorf(EINVALID, "email must not contain spaces or control characters")
	case len(u.PasswordHash) == 0:
		return Errorf(EINVALID, "password hash is required")
	}
	return nil
}

// Session is a signed-in dashboard session. The session token lives only in
// the browser's cookie; stores keep its SHA-256 hash.
type Session struct {
	ID        int64
	UserID    int64
	AccountID int64  // the user's account, filled in by reads
	Email     string // the user's email, filled in by reads
	// CSRFToken is the synchronizer token every state-changing form of this
	// session must carry.
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}
