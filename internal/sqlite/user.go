package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	defer tx.Rollback()
	if _, err := findAccount(ctx, tx, u.AccountID); err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	now := s.now()
	res, err := tx.ExecContext(ctx, insertUserSQL, u.AccountID, u.Email, u.PasswordHash, micros(now), micros(now))
	if err != nil {
		return fmt.Errorf("create user: %w", formatError(err, "a user with email "+u.Email))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("create user: commit: %w", err)
	}
	u.ID, u.CreatedAt, u.UpdatedAt = id, now, now
	return nil
}

const userColumns = `id, account_id, email, password_hash, created_at, updated_at`

func scanUser(sc interface{ Scan(...any) error }) (*narrator.User, error) {
	var u narrator.User
	var created, updated int64
	if err := sc.Scan(&u.ID, &u.AccountID, &u.Email, &u.PasswordHash, &created, &updated); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &u, nil
}

const findUserByEmailSQL = `SELECT ` + userColumns + ` FROM users WHERE email = ?`

// FindUserByEmail returns the user with that email, compared after
// narrator.NormalizeEmail, password hash included. It returns ENOTFOUND if
// there is none.
func (s *Store) FindUserByEmail(ctx context.Context, email string) (*narrator.User, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	defer tx.Rollback()
	u, err := scanUser(tx.QueryRowContext(ctx, findUserByEmailSQL, narrator.NormalizeEmail(email)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "user %q not found", narrator.NormalizeEmail(email))
	}
	if err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	return u, nil
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
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("set password of user %d: %w", userID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, setUserPasswordSQL, passwordHash, micros(s.now()), userID)
	if err != nil {
		return fmt.Errorf("set password of user %d: %w", userID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set password of user %d: %w", userID, err)
	} else if n == 0 {
		return narrator.Errorf(narrator.ENOTFOUND, "user %d not found", userID)
	}
	if _, err := tx.ExecContext(ctx, deleteUserSessionsSQL, userID); err != nil {
		return fmt.Errorf("set password of user %d: end sessions: %w", userID, err)
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("set password of user %d: commit: %w", userID, err)
	}
	return nil
}
