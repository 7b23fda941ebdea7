package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

const insertUserSQL = `
INSERT INTO users (account_id, email, password_hash, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
RETURNING id`

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
	defer rollback(ctx, tx)
	if _, err := findAccount(ctx, tx, u.AccountID); err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	now := s.now()
	var id int64
	if err := tx.QueryRow(ctx, insertUserSQL, u.AccountID, u.Email, u.PasswordHash, now).Scan(&id); err != nil {
		return fmt.Errorf("create user: %w", formatError(err, "a user with email "+u.Email))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create user: commit: %w", err)
	}
	u.ID, u.CreatedAt, u.UpdatedAt = id, now, now
	return nil
}

const userColumns = `id, account_id, email, password_hash, created_at, updated_at`

func scanUser(row pgx.Row) (*narrator.User, error) {
	var u narrator.User
	if err := row.Scan(&u.ID, &u.AccountID, &u.Email, &u.PasswordHash, &u.CreatedAt, &u.UpdatedAt); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return &u, nil
}

const findUserByEmailSQL = `SELECT ` + userColumns + ` FROM users WHERE email = $1`

// FindUserByEmail returns the user with that email, compared after
// narrator.NormalizeEmail, password hash included. It returns ENOTFOUND if
// there is none.
func (s *Store) FindUserByEmail(ctx context.Context, email string) (*narrator.User, error) {
	email = narrator.NormalizeEmail(email)
	notFound := narrator.Errorf(narrator.ENOTFOUND, "user %q not found", email)
	if !narrator.ValidText(email) {
		return nil, notFound
	}
	u, err := scanUser(s.queryRow(ctx, findUserByEmailSQL, email))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	return u, nil
}

const setUserPasswordSQL = `UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3`

const deleteUserSessionsSQL = `DELETE FROM sessions WHERE user_id = $1`

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
	defer rollback(ctx, tx)
	tag, err := tx.Exec(ctx, setUserPasswordSQL, passwordHash, s.now(), userID)
	if err != nil {
		return fmt.Errorf("set password of user %d: %w", userID, err)
	}
	if tag.RowsAffected() == 0 {
		return narrator.Errorf(narrator.ENOTFOUND, "user %d not found", userID)
	}
	if _, err := tx.Exec(ctx, deleteUserSessionsSQL, userID); err != nil {
		return fmt.Errorf("set password of user %d: end sessions: %w", userID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("set password of user %d: commit: %w", userID, err)
	}
	return nil
}
