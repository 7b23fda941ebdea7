package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

const userExistsSQL = `SELECT COUNT(*) FROM users WHERE id = ?`

const insertSessionSQL = `
INSERT INTO sessions (hash, user_id, csrf_token, created_at, expires_at)
VALUES (?, ?, ?, ?, ?)`

// CreateSession stores a dashboard session under the hash of its token,
// setting its ID and CreatedAt (ExpiresAt is the caller's). It also removes
// expired sessions of every user, which keeps the table small. It returns
// ENOTFOUND if the user does not exist.
func (s *Store) CreateSession(ctx context.Context, sess *narrator.Session, tokenHash []byte) error {
	if len(tokenHash) == 0 || sess.CSRFToken == "" {
		return narrator.Errorf(narrator.EINVALID, "session token hash and CSRF token are required")
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, userExistsSQL, sess.UserID).Scan(&n); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if n == 0 {
		return narrator.Errorf(narrator.ENOTFOUND, "user %d not found", sess.UserID)
	}
	now := s.now()
	if _, err := tx.ExecContext(ctx, deleteExpiredSessionsSQL, micros(now)); err != nil {
		return fmt.Errorf("create session: remove expired: %w", err)
	}
	res, err := tx.ExecContext(ctx, insertSessionSQL, tokenHash, sess.UserID, sess.CSRFToken, micros(now), micros(sess.ExpiresAt))
	if err != nil {
		return fmt.Errorf("create session: %w", formatError(err, "session"))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("create session: commit: %w", err)
	}
	sess.ID, sess.CreatedAt = id, now
	sess.ExpiresAt = fromMicros(micros(sess.ExpiresAt))
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
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	defer tx.Rollback()
	var sess narrator.Session
	var created, expires int64
	err = tx.QueryRowContext(ctx, findSessionSQL, tokenHash, micros(s.now())).Scan(
		&sess.ID, &sess.UserID, &sess.AccountID, &sess.Email, &sess.CSRFToken, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.EUNAUTHORIZED, "no such session, or it has expired")
	}
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	sess.CreatedAt, sess.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &sess, nil
}

const deleteSessionSQL = `DELETE FROM sessions WHERE hash = ?`

// DeleteSession ends the session stored under a token hash. Ending a
// session that does not exist succeeds: signing out twice is harmless.
func (s *Store) DeleteSession(ctx context.Context, tokenHash []byte) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, deleteSessionSQL, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("delete session: commit: %w", err)
	}
	return nil
}

const deleteExpiredSessionsSQL = `DELETE FROM sessions WHERE expires_at <= ?`
