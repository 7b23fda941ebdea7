package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

const userExistsSQL = `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1)`

const insertSessionSQL = `
INSERT INTO sessions (hash, user_id, csrf_token, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5)
RETURNING id`

const deleteExpiredSessionsSQL = `DELETE FROM sessions WHERE expires_at <= $1`

// CreateSession stores a dashboard session under the hash of its token,
// setting its ID and CreatedAt (ExpiresAt is the caller's, kept to the
// microsecond). It also removes expired sessions of every user, which keeps
// the table small. It returns ENOTFOUND if the user does not exist.
func (s *Store) CreateSession(ctx context.Context, sess *narrator.Session, tokenHash []byte) error {
	if len(tokenHash) == 0 || sess.CSRFToken == "" {
		return narrator.Errorf(narrator.EINVALID, "session token hash and CSRF token are required")
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	defer rollback(ctx, tx)
	var exists bool
	if err := tx.QueryRow(ctx, userExistsSQL, sess.UserID).Scan(&exists); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if !exists {
		return narrator.Errorf(narrator.ENOTFOUND, "user %d not found", sess.UserID)
	}
	now := s.now()
	if _, err := tx.Exec(ctx, deleteExpiredSessionsSQL, now); err != nil {
		return fmt.Errorf("create session: remove expired: %w", err)
	}
	expires := sess.ExpiresAt.UTC().Truncate(time.Microsecond)
	var id int64
	if err := tx.QueryRow(ctx, insertSessionSQL, tokenHash, sess.UserID, sess.CSRFToken, now, expires).Scan(&id); err != nil {
		return fmt.Errorf("create session: %w", formatError(err, "session"))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create session: commit: %w", err)
	}
	sess.ID, sess.CreatedAt, sess.ExpiresAt = id, now, expires
	return nil
}

const findSessionSQL = `
SELECT s.id, s.user_id, u.account_id, u.email, s.csrf_token, s.created_at, s.expires_at
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.hash = $1 AND s.expires_at > $2`

// FindSession returns the live session stored under a token hash, with its
// user's account and email. It returns EUNAUTHORIZED if there is none or it
// has expired.
func (s *Store) FindSession(ctx context.Context, tokenHash []byte) (*narrator.Session, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	defer rollback(ctx, tx)
	var sess narrator.Session
	err = tx.QueryRow(ctx, findSessionSQL, tokenHash, s.now()).Scan(
		&sess.ID, &sess.UserID, &sess.AccountID, &sess.Email, &sess.CSRFToken, &sess.CreatedAt, &sess.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, narrator.Errorf(narrator.EUNAUTHORIZED, "no such session, or it has expired")
	}
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	sess.CreatedAt, sess.ExpiresAt = sess.CreatedAt.UTC(), sess.ExpiresAt.UTC()
	return &sess, nil
}

const deleteSessionSQL = `DELETE FROM sessions WHERE hash = $1`

// DeleteSession ends the session stored under a token hash. Ending a
// session that does not exist succeeds: signing out twice is harmless.
func (s *Store) DeleteSession(ctx context.Context, tokenHash []byte) error {
	if _, err := s.exec(ctx, deleteSessionSQL, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
