package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

const insertUserSQL = `
INSERT INTO users (account_id, email, password_hash, created_at, updated_at)
VALUES (?, ?, ?, ?, ?)`

// CreateUser validates and inserts a dashboard user, setting its ID and
// times. It returns ENOTFOUND if the account does not exist and ECONFLICT
// if a user with that email exists (emails are unique across accounts).
func (s *Store) CreateUser(ctx context.Context, u *narrator.User) error {
	if err := u.Validate(); err != nil {
		return err
	}
	var id int64
	var now time.Time
	err := s.write(ctx, "create user", func(tx Tx) error {
		if _, err := findAccount(ctx, tx, u.AccountID); err != nil {
			return fmt.Errorf("create user: %w", err)
		}
		now = s.now()
		var err error
		id, err = tx.Insert(ctx, insertUserSQL, u.AccountID, u.Email, u.PasswordHash, now, now)
		if err != nil {
			return fmt.Errorf("create user: %w", s.db.Conflict(err, "a user with email "+u.Email))
		}
		return nil
	})
	if err != nil {
		return err
	}
	u.ID, u.CreatedAt, u.UpdatedAt = id, now, now
	return nil
}

// UserColumns are the columns ScanUser reads.
const UserColumns = `id, account_id, email, password_hash, created_at, updated_at`

// ScanUser reads a row of UserColumns.
func ScanUser(row Row) (*narrator.User, error) {
	var u narrator.User
	if err := row.Scan(&u.ID, &u.AccountID, &u.Email, &u.PasswordHash, &u.CreatedAt, &u.UpdatedAt); err != nil {
		return nil, err
	}
	return &u, nil
}

const findUserByEmailSQL = `SELECT ` + UserColumns + ` FROM users WHERE email = ?`

// FindUserByEmail returns the user with that email, compared after
// narrator.NormalizeEmail, password hash included. It returns ENOTFOUND if
// there is none.
func (s *Store) FindUserByEmail(ctx context.Context, email string) (*narrator.User, error) {
	email = narrator.NormalizeEmail(email)
	notFound := narrator.Errorf(narrator.ENOTFOUND, "user %q not found", email)
	if !narrator.ValidText(email) {
		return nil, notFound
	}
	return ReadV(ctx, s, "find user", func(tx Tx) (*narrator.User, error) {
		u, err := ScanUser(tx.QueryRow(ctx, findUserByEmailSQL, email))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound
		}
		if err != nil {
			return nil, fmt.Errorf("find user: %w", err)
		}
		return u, nil
	})
}

const setUserPasswordSQL = `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`

const deleteUserSessionsSQL = `DELETE FROM sessions WHERE user_id = ?`

// SetUserPassword replaces a user's password hash and, in the same
// transaction, ends every session of the user, so that a reset password
// signs out whoever used the old one. It returns ENOTFOUND if the user does
// not exist.
func (s *Store) SetUserPassword(ctx context.Context, userID int64, passwordHash []byte) error {
	if len(passwordHash) == 0 {
		return narrator.Errorf(narrator.EINVALID, "password hash is required")
	}
	return s.write(ctx, fmt.Sprintf("set password of user %d", userID), func(tx Tx) error {
		n, err := tx.Exec(ctx, setUserPasswordSQL, passwordHash, s.now(), userID)
		if err != nil {
			return fmt.Errorf("set password of user %d: %w", userID, err)
		}
		if n == 0 {
			return narrator.Errorf(narrator.ENOTFOUND, "user %d not found", userID)
		}
		if _, err := tx.Exec(ctx, deleteUserSessionsSQL, userID); err != nil {
			return fmt.Errorf("set password of user %d: end sessions: %w", userID, err)
		}
		return nil
	})
}

const userExistsSQL = `SELECT COUNT(*) FROM users WHERE id = ?`

const insertSessionSQL = `
INSERT INTO sessions (hash, user_id, csrf_token, created_at, expires_at)
VALUES (?, ?, ?, ?, ?)`

const deleteExpiredSessionsSQL = `DELETE FROM sessions WHERE expires_at <= ?`

// CreateSession stores a dashboard session under the hash of its token,
// setting its ID and CreatedAt (ExpiresAt is the caller's, kept to the
// microsecond). It also removes expired sessions of every user, which keeps
// the table small. It returns ENOTFOUND if the user does not exist.
func (s *Store) CreateSession(ctx context.Context, sess *narrator.Session, tokenHash []byte) error {
	if len(tokenHash) == 0 || sess.CSRFToken == "" {
		return narrator.Errorf(narrator.EINVALID, "session token hash and CSRF token are required")
	}
	var id int64
	var now time.Time
	expires := sess.ExpiresAt.UTC().Truncate(time.Microsecond)
	err := s.write(ctx, "create session", func(tx Tx) error {
		var n int
		if err := tx.QueryRow(ctx, userExistsSQL, sess.UserID).Scan(&n); err != nil {
			return fmt.Errorf("create session: %w", err)
		}
		if n == 0 {
			return narrator.Errorf(narrator.ENOTFOUND, "user %d not found", sess.UserID)
		}
		now = s.now()
		if _, err := tx.Exec(ctx, deleteExpiredSessionsSQL, now); err != nil {
			return fmt.Errorf("create session: remove expired: %w", err)
		}
		var err error
		id, err = tx.Insert(ctx, insertSessionSQL, tokenHash, sess.UserID, sess.CSRFToken, now, expires)
		if err != nil {
			return fmt.Errorf("create session: %w", s.db.Conflict(err, "session"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sess.ID, sess.CreatedAt, sess.ExpiresAt = id, now, expires

	return nil
}

const findSessionSQL = `
SELECT s.id, s.user_id, u.account_id, u.email, s.csrf_token, s.created_at, s.expires_at
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.hash = ? AND s.expires_at > ?`

// FindSession returns the live session stored under a token hash, with its
// user's account and email. It returns EUNAUTHORIZED if there is none or it
// has expired.
func (s *Store) FindSession(ctx context.Context, tokenHash []byte) (*narrator.Session, error) {
	return ReadV(ctx, s, "find session", func(tx Tx) (*narrator.Session, error) {
		var err error
		var sess narrator.Session
		err = tx.QueryRow(ctx, findSessionSQL, tokenHash, s.now()).Scan(
			&sess.ID, &sess.UserID, &sess.AccountID, &sess.Email, &sess.CSRFToken, &sess.CreatedAt, &sess.ExpiresAt)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, narrator.Errorf(narrator.EUNAUTHORIZED, "no such session, or it has expired")
		}
		if err != nil {
			return nil, fmt.Errorf("find session: %w", err)
		}
		return &sess, nil
	})
}

const deleteSessionSQL = `DELETE FROM sessions WHERE hash = ?`

// DeleteSession ends the session stored under a token hash. Ending a
// session that does not exist succeeds: signing out twice is harmless.
func (s *Store) DeleteSession(ctx context.Context, tokenHash []byte) error {
	return s.write(ctx, "delete session", func(tx Tx) error {
		if _, err := tx.Exec(ctx, deleteSessionSQL, tokenHash); err != nil {
			return fmt.Errorf("delete session: %w", err)
		}
		return nil
	})
}
