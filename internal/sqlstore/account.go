package sqlstore

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
	now := s.now()
	id, err := WriteV(ctx, s, "create account", func(tx Tx) (int64, error) {
		id, err := tx.Insert(ctx, insertAccountSQL, a.Name, now)
		if err != nil {
			return 0, fmt.Errorf("create account: %w", s.db.Conflict(err, "account"))
		}
		return id, nil
	})
	if err != nil {
		return err
	}
	a.ID, a.CreatedAt = id, now
	return nil
}

// FindAccount returns an account; ENOTFOUND if there is none with that ID.
func (s *Store) FindAccount(ctx context.Context, id int64) (*narrator.Account, error) {
	return ReadV(ctx, s, fmt.Sprintf("find account %d", id), func(tx Tx) (*narrator.Account, error) {
		a, err := findAccount(ctx, tx, id)
		if err != nil {
			return nil, fmt.Errorf("find account %d: %w", id, err)
		}
		return a, nil
	})
}

const findAccountSQL = `SELECT id, name, created_at FROM accounts WHERE id = ?`

// findAccount returns an account, or ENOTFOUND.
func findAccount(ctx context.Context, tx Tx, id int64) (*narrator.Account, error) {
	a, err := ScanAccount(tx.QueryRow(ctx, findAccountSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "account %d not found", id)
	}
	return a, err
}

// ScanAccount reads a row of an account's id, name and created_at.
func ScanAccount(row Row) (*narrator.Account, error) {
	var a narrator.Account
	if err := row.Scan(&a.ID, &a.Name, &a.CreatedAt); err != nil {
		return nil, err
	}
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
	name := fmt.Sprintf("create api key for account %d", accountID)
	return WriteV(ctx, s, name, func(tx Tx) (*narrator.APIKey, error) {
		if _, err := findAccount(ctx, tx, accountID); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		now := s.now()
		id, err := tx.Insert(ctx, insertAPIKeySQL, accountID, hash, prefix, now)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, s.db.Conflict(err, "api key"))
		}
		return &narrator.APIKey{ID: id, AccountID: accountID, Prefix: prefix, CreatedAt: now}, nil
	})
}

const listAPIKeysSQL = `
SELECT id, account_id, prefix, created_at, revoked_at
FROM api_keys
WHERE account_id = ?
ORDER BY created_at DESC, id DESC`

// ListAPIKeys returns an account's keys, newest first, revoked ones included.
// An account without keys, or a missing account, gives an empty slice.
func (s *Store) ListAPIKeys(ctx context.Context, accountID int64) ([]*narrator.APIKey, error) {
	name := fmt.Sprintf("list api keys of account %d", accountID)
	return ReadV(ctx, s, name, func(tx Tx) ([]*narrator.APIKey, error) {
		rows, err := tx.Query(ctx, listAPIKeysSQL, accountID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		keys, err := collect(rows, func(row Row) (*narrator.APIKey, error) {
			var k narrator.APIKey
			if err := row.Scan(&k.ID, &k.AccountID, &k.Prefix, &k.CreatedAt, &k.RevokedAt); err != nil {
				return nil, err
			}
			return &k, nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return keys, nil
	})
}

const revokeAPIKeySQL = `
UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?)
WHERE id = ? AND account_id = ?`

// RevokeAPIKey revokes one of an account's keys. It returns ENOTFOUND if the
// key does not exist or belongs to another account. Revoking a revoked key
// succeeds and keeps the first revocation time.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, keyID int64) error {
	name := fmt.Sprintf("revoke api key %d", keyID)
	return s.write(ctx, name, func(tx Tx) error {
		n, err := tx.Exec(ctx, revokeAPIKeySQL, s.now(), keyID, accountID)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if n == 0 {
			return narrator.Errorf(narrator.ENOTFOUND, "api key %d not found", keyID)
		}
		return nil
	})
}

const authenticateAPIKeySQL = `SELECT account_id FROM api_keys WHERE hash = ? AND revoked_at IS NULL`

// AuthenticateAPIKey returns the account owning the key with this hash. It
// returns EUNAUTHORIZED if no such key exists or it is revoked.
func (s *Store) AuthenticateAPIKey(ctx context.Context, hash []byte) (int64, error) {
	return ReadV(ctx, s, "authenticate api key", func(tx Tx) (int64, error) {
		var accountID int64
		err := tx.QueryRow(ctx, authenticateAPIKeySQL, hash).Scan(&accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, narrator.Errorf(narrator.EUNAUTHORIZED, "The authentication token was not recognised")
		}
		if err != nil {
			return 0, fmt.Errorf("authenticate api key: %w", err)
		}
		return accountID, nil
	})

}
