package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
)

const insertAccountSQL = `INSERT INTO accounts (name, created_at) VALUES (?, ?)`

// CreateAccount validates and inserts an account, setting its ID and
// CreatedAt.
func (s *Store) CreateAccount(ctx context.Context, a *narrator.Account) error {
	if err := a.Validate(); err != nil {
		return err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	defer tx.Rollback()
	now := s.now()
	res, err := tx.ExecContext(ctx, insertAccountSQL, a.Name, micros(now))
	if err != nil {
		return fmt.Errorf("create account: %w", formatError(err, "account"))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("create account: commit: %w", err)
	}
	a.ID, a.CreatedAt = id, now
	return nil
}

// FindAccount returns an account; ENOTFOUND if there is none with that ID.
func (s *Store) FindAccount(ctx context.Context, id int64) (*narrator.Account, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("find account %d: %w", id, err)
	}
	defer tx.Rollback()
	a, err := findAccount(ctx, tx, id)
	if err != nil {
		return nil, fmt.Errorf("find account %d: %w", id, err)
	}
	return a, nil
}

const findAccountSQL = `SELECT id, name, created_at FROM accounts WHERE id = ?`

func findAccount(ctx context.Context, tx *sql.Tx, id int64) (*narrator.Account, error) {
	a, err := scanAccount(tx.QueryRowContext(ctx, findAccountSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "account %d not found", id)
	}
	return a, err
}

func scanAccount(sc interface{ Scan(...any) error }) (*narrator.Account, error) {
	var a narrator.Account
	var created int64
	if err := sc.Scan(&a.ID, &a.Name, &created); err != nil {
		return nil, err
	}
	a.CreatedAt = fromMicros(created)
	return &a, nil
}

const insertAPIKeySQL = `INSERT INTO api_keys (account_id, hash, prefix, created_at) VALUES (?, ?, ?, ?)`

// CreateAPIKey stores the hash and display prefix of a new key of an account.
// It returns ENOTFOUND if the account does not exist and ECONFLICT if a key
// with the same hash exists.
func (s *Store) CreateAPIKey(ctx context.Context, accountID int64, hash []byte, prefix string) (*narrator.APIKey, error) {
	if len(hash) == 0 {
		return nil, narrator.Errorf(narrator.EINVALID, "api key hash is required")
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("create api key for account %d: %w", accountID, err)
	}
	defer tx.Rollback()
	if _, err := findAccount(ctx, tx, accountID); err != nil {
		return nil, fmt.Errorf("create api key for account %d: %w", accountID, err)
	}
	now := s.now()
	res, err := tx.ExecContext(ctx, insertAPIKeySQL, accountID, hash, prefix, micros(now))
	if err != nil {
		return nil, fmt.Errorf("create api key for account %d: %w", accountID, formatError(err, "api key"))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("create api key for account %d: %w", accountID, err)
	}
	if err := commit(tx); err != nil {
		return nil, fmt.Errorf("create api key for account %d: commit: %w", accountID, err)
	}
	return &narrator.APIKey{ID: id, AccountID: accountID, Prefix: prefix, CreatedAt: now}, nil
}

const listAPIKeysSQL = `
SELECT id, account_id, prefix, created_at, revoked_at
FROM api_keys
WHERE account_id = ?
ORDER BY created_at DESC, id DESC`

// ListAPIKeys returns an account's keys, newest first, revoked ones included.
// An account without keys, or a missing account, gives an empty slice.
func (s *Store) ListAPIKeys(ctx context.Context, accountID int64) ([]*narrator.APIKey, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("list api keys of account %d: %w", accountID, err)
	}
	defer tx.Rollback()
	keys, err := listAPIKeys(ctx, tx, accountID)
	if err != nil {
		return nil, fmt.Errorf("list api keys of account %d: %w", accountID, err)
	}
	return keys, nil
}

func listAPIKeys(ctx context.Context, tx *sql.Tx, accountID int64) ([]*narrator.APIKey, error) {
	rows, err := tx.QueryContext(ctx, listAPIKeysSQL, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys := []*narrator.APIKey{}
	for rows.Next() {
		var k narrator.APIKey
		var created int64
		var revoked sql.NullInt64
		if err := rows.Scan(&k.ID, &k.AccountID, &k.Prefix, &created, &revoked); err != nil {
			return nil, err
		}
		k.CreatedAt = fromMicros(created)
		if revoked.Valid {
			t := fromMicros(revoked.Int64)
			k.RevokedAt = &t
		}
		keys = append(keys, &k)
	}
	return keys, rows.Err()
}

const revokeAPIKeySQL = `
UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?)
WHERE id = ? AND account_id = ?`

// RevokeAPIKey revokes one of an account's keys. It returns ENOTFOUND if the
// key does not exist or belongs to another account. Revoking a revoked key
// succeeds and keeps the first revocation time.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, keyID int64) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("revoke api key %d: %w", keyID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, revokeAPIKeySQL, micros(s.now()), keyID, accountID)
	if err != nil {
		return fmt.Errorf("revoke api key %d: %w", keyID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("revoke api key %d: %w", keyID, err)
	}
	if n == 0 {
		return narrator.Errorf(narrator.ENOTFOUND, "api key %d not found", keyID)
	}
	if err := commit(tx); err != nil {
		return fmt.Errorf("revoke api key %d: commit: %w", keyID, err)
	}
	return nil
}

const authenticateAPIKeySQL = `SELECT account_id FROM api_keys WHERE hash = ? AND revoked_at IS NULL`

// AuthenticateAPIKey returns the account owning the key with this hash. It
// returns EUNAUTHORIZED if no such key exists or it is revoked.
func (s *Store) AuthenticateAPIKey(ctx context.Context, hash []byte) (int64, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return 0, fmt.Errorf("authenticate api key: %w", err)
	}
	defer tx.Rollback()
	var accountID int64
	err = tx.QueryRowContext(ctx, authenticateAPIKeySQL, hash).Scan(&accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, narrator.Errorf(narrator.EUNAUTHORIZED, "The authentication token was not recognised")
	}
	if err != nil {
		return 0, fmt.Errorf("authenticate api key: %w", err)
	}
	return accountID, nil
}
