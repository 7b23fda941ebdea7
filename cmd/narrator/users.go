package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/web"
)

const usersUsage = `Usage:
  narrator users create [--data DIR|--database URL] --account ID --email EMAIL

The password is read from the first line of standard input when it is piped
or redirected; otherwise a random one is generated and printed once. If a
user with that email exists in the account, its password is reset and its
sessions end.`

// usersCommand is `narrator users`.
func usersCommand(e *env) group {
	return group{e: e, name: "users", usage: usersUsage, subs: []namedCommand{
		{name: "create", command: usersCreateCommand{e}},
	}}
}

// userJSON is how the CLI prints a dashboard user. Password appears only
// when it was generated.
type userJSON struct {
	ID        int64     `json:"id"`
	AccountID int64     `json:"account_id"`
	Email     string    `json:"email"`
	Password  string    `json:"password,omitempty"`
	Reset     bool      `json:"reset"`
	CreatedAt time.Time `json:"created_at"`
}

// usersCreateCommand is `narrator users create`.
type usersCreateCommand struct{ e *env }

// Run runs `narrator users create`.
func (cmd usersCreateCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "users create", "users create [--data DIR|--database URL] --account ID --email EMAIL  (password on stdin, or generated)")
	data := config.BackendFlags(fs, e.getenv)
	account := fs.Int64("account", 0, "account `ID` (required)")
	email := fs.String("email", "", "the user's `email` (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *account <= 0 {
		return required(fs, "account")
	}
	if strings.TrimSpace(*email) == "" {
		return required(fs, "email")
	}
	password, given, err := readPassword(e.stdin)
	if err != nil {
		return err
	}
	if given {
		if err := web.ValidatePassword(password); err != nil {
			return usagef("users create: %s", narrator.ErrorMessage(err))
		}
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		u, generated, reset, err := upsertUser(ctx, st, *account, *email, password)
		if err != nil {
			return nil, err
		}
		out := userJSON{ID: u.ID, AccountID: u.AccountID, Email: u.Email, Reset: reset, CreatedAt: u.CreatedAt}
		if !given {
			out.Password = generated
		}
		return out, nil
	})
}

// readPassword reads the first line of stdin if stdin is not a terminal.
// given is false when there is no password there.
func readPassword(stdin io.Reader) (pw string, given bool, err error) {
	if stdin == nil {
		return "", false, nil
	}
	if f, ok := stdin.(*os.File); ok {
		fi, err := f.Stat()
		if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return "", false, nil // a terminal: generate instead of waiting
		}
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", false, fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	return line, line != "", nil
}

// upsertUser creates a dashboard user of an account, or resets the password
// of the account's user with that email. An empty password is generated
// and returned.
func upsertUser(ctx context.Context, st dataStore, accountID int64, email, password string) (u *narrator.User, generated string, reset bool, err error) {
	if password == "" {
		if password, err = web.GeneratePassword(); err != nil {
			return nil, "", false, err
		}
		generated = password
	}
	hash, err := web.HashPassword(password)
	if err != nil {
		return nil, "", false, err
	}
	email = narrator.NormalizeEmail(email)
	cur, err := st.FindUserByEmail(ctx, email)
	switch {
	case err == nil:
		if cur.AccountID != accountID {
			return nil, "", false, fmt.Errorf("a user with email %s exists in account %d, not %d", email, cur.AccountID, accountID)
		}
		if err := st.SetUserPassword(ctx, cur.ID, hash); err != nil {
			return nil, "", false, fmt.Errorf("reset password: %w", err)
		}
		return cur, generated, true, nil
	case narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return nil, "", false, err
	}
	u = &narrator.User{AccountID: accountID, Email: email, PasswordHash: hash}
	if err := st.CreateUser(ctx, u); err != nil {
		if narrator.ErrorCode(err) == narrator.EINVALID {
			return nil, "", false, usagef("users create: %s", narrator.ErrorMessage(err))
		}
		return nil, "", false, fmt.Errorf("create user: %w", err)
	}
	return u, generated, false, nil
}
