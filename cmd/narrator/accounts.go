package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
)

const accountsUsage = `Usage:
  narrator accounts create [--data DIR|--database URL] --name NAME
  narrator accounts keys create [--data DIR|--database URL] --account ID
  narrator accounts keys list   [--data DIR|--database URL] --account ID
  narrator accounts keys revoke [--data DIR|--database URL] --account ID --key KEY_ID|PREFIX|KEY`

// accountsCommand is `narrator accounts`.
func accountsCommand(e *env) group {
	return group{e: e, name: "accounts", usage: accountsUsage, subs: []namedCommand{
		{name: "create", command: accountsCreateCommand{e}},
		{name: "keys", command: group{e: e, name: "accounts keys", usage: accountsUsage, listMissing: true, subs: []namedCommand{
			{name: "create", command: keysCreateCommand{e}},
			{name: "list", command: keysListCommand{e}},
			{name: "revoke", command: keysRevokeCommand{e}},
		}}},
	}}
}

// accountsCreateCommand is `narrator accounts create`.
type accountsCreateCommand struct{ e *env }

// Run runs `narrator accounts create`.
func (cmd accountsCreateCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "accounts create", "accounts create [--data DIR|--database URL] --name NAME")
	data := config.BackendFlags(fs, e.getenv)
	name := fs.String("name", "", "account `name` (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return required(fs, "name")
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		a, key, err := createAccount(ctx, st, *name)
		if err != nil {
			return nil, err
		}
		return struct {
			ID     int64  `json:"id"`
			Name   string `json:"name"`
			APIKey string `json:"api_key"`
		}{a.ID, a.Name, key}, nil
	})
}

// createAccount creates an account with a first API key, returned in clear.
func createAccount(ctx context.Context, st dataStore, name string) (*narrator.Account, string, error) {
	a := &narrator.Account{Name: name}
	if err := st.CreateAccount(ctx, a); err != nil {
		return nil, "", fmt.Errorf("create account: %w", err)
	}
	key, _, err := createKey(ctx, st, a.ID)
	if err != nil {
		return nil, "", err
	}
	return a, key, nil
}

// createKey makes a new API key for an account. Only its hash is stored.
func createKey(ctx context.Context, st dataStore, accountID int64) (string, *narrator.APIKey, error) {
	secret, prefix, hash, err := narrator.NewAPIKey()
	if err != nil {
		return "", nil, err
	}
	k, err := st.CreateAPIKey(ctx, accountID, hash, prefix)
	if err != nil {
		return "", nil, fmt.Errorf("create API key: %w", err)
	}
	return secret, k, nil
}

// keyJSON is how the CLI prints an API key. The secret appears only when
// the key is created.
type keyJSON struct {
	ID        int64      `json:"id"`
	AccountID int64      `json:"account_id"`
	Prefix    string     `json:"prefix"`
	APIKey    string     `json:"api_key,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func toKeyJSON(k *narrator.APIKey, secret string) keyJSON {
	return keyJSON{ID: k.ID, AccountID: k.AccountID, Prefix: k.Prefix, APIKey: secret, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}

// keyFlags are the flags the key commands share.
func keyFlags(e *env, name, synopsis string) (*flag.FlagSet, func() (config.Backends, error), *int64) {
	fs := newFlagSet(e, name, synopsis)
	data := config.BackendFlags(fs, e.getenv)
	account := fs.Int64("account", 0, "account `id` (required)")
	return fs, data, account
}

// keysCreateCommand is `narrator accounts keys create`.
type keysCreateCommand struct{ e *env }

// Run runs `narrator accounts keys create`.
func (cmd keysCreateCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs, data, account := keyFlags(e, "accounts keys create", "accounts keys create [--data DIR|--database URL] --account ID")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *account <= 0 {
		return required(fs, "account")
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		secret, k, err := createKey(ctx, st, *account)
		if err != nil {
			return nil, err
		}
		return toKeyJSON(k, secret), nil
	})
}

// keysListCommand is `narrator accounts keys list`.
type keysListCommand struct{ e *env }

// Run runs `narrator accounts keys list`.
func (cmd keysListCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs, data, account := keyFlags(e, "accounts keys list", "accounts keys list [--data DIR|--database URL] --account ID")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *account <= 0 {
		return required(fs, "account")
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		if _, err := st.FindAccount(ctx, *account); err != nil {
			return nil, fmt.Errorf("account %d: %w", *account, err)
		}
		keys, err := st.ListAPIKeys(ctx, *account)
		if err != nil {
			return nil, err
		}
		out := make([]keyJSON, 0, len(keys))
		for _, k := range keys {
			out = append(out, toKeyJSON(k, ""))
		}
		return out, nil
	})
}

// keysRevokeCommand is `narrator accounts keys revoke`.
type keysRevokeCommand struct{ e *env }

// Run runs `narrator accounts keys revoke`.
func (cmd keysRevokeCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newFlagSet(e, "accounts keys revoke", "accounts keys revoke [--data DIR|--database URL] [--account ID] --key KEY_ID|PREFIX|KEY")
	data := config.BackendFlags(f, e.getenv)
	account := f.Int64("account", 0, "account `id` (required unless --key is the whole key)")
	keyArg := f.String("key", "", "the key to revoke: its id, its prefix, or the key itself")
	f.StringVar(keyArg, "id", "", "same as --key")
	if err := parse(f, args); err != nil {
		return err
	}
	if *keyArg == "" {
		return required(f, "key")
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		k, err := findKey(ctx, st, *account, *keyArg)
		if err != nil {
			return nil, err
		}
		if err := st.RevokeAPIKey(ctx, k.AccountID, k.ID); err != nil {
			return nil, fmt.Errorf("revoke key %d: %w", k.ID, err)
		}
		if k, err = findKey(ctx, st, k.AccountID, fmt.Sprint(k.ID)); err != nil {
			return nil, err
		}
		return toKeyJSON(k, ""), nil
	})
}

// findKey resolves a key given by id, display prefix or in full.
func findKey(ctx context.Context, st dataStore, accountID int64, ref string) (*narrator.APIKey, error) {
	if strings.HasPrefix(ref, "nk_") && len(ref) > 3+narrator.APIKeyPrefixLen {
		id, err := st.AuthenticateAPIKey(ctx, narrator.HashAPIKey(ref))
		if err != nil {
			return nil, fmt.Errorf("that key is unknown or already revoked")
		}
		accountID, ref = id, ref[:3+narrator.APIKeyPrefixLen]
	}
	if accountID <= 0 {
		return nil, usagef("accounts keys revoke: --account is required unless --key is the whole key")
	}
	keys, err := st.ListAPIKeys(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("list keys of account %d: %w", accountID, err)
	}
	for _, k := range keys {
		if fmt.Sprint(k.ID) == ref || k.Prefix == ref {
			return k, nil
		}
	}
	return nil, fmt.Errorf("account %d has no key %q", accountID, ref)
}
