package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/sqlite"
	"golang.org/x/crypto/bcrypt"
)

// runCLIStdin runs a command in-process with the given standard input.
func runCLIStdin(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

// storedHash reads a user's password hash from the data directory.
func storedHash(t *testing.T, data, email string) []byte {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(data, "narrator.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := st.FindUserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.PasswordHash
}

func TestUsersCreate(t *testing.T) {
	t.Parallel()
	data, acct, _ := fixture(t)
	account := fmt.Sprint(acct.ID)

	// A piped password is used and not printed.
	out, err := runCLIStdin(t, "a long enough password\n", "users", "create", "--data", data, "--account", account, "--email", "Ed@Acme.test")
	if err != nil {
		t.Fatal(err)
	}
	u := mustJSON[userJSON](t, out)
	if u.Email != "ed@acme.test" || u.AccountID != acct.ID || u.Password != "" || u.Reset || u.CreatedAt.IsZero() {
		t.Errorf("created %+v", u)
	}
	if bcrypt.CompareHashAndPassword(storedHash(t, data, "ed@acme.test"), []byte("a long enough password")) != nil {
		t.Error("stored hash does not match the piped password")
	}

	// Without stdin, a password is generated and printed once; the same
	// email resets it.
	out, err = runCLIStdin(t, "", "users", "create", "--data", data, "--account", account, "--email", "ed@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	u = mustJSON[userJSON](t, out)
	if !u.Reset || len(u.Password) < 16 {
		t.Errorf("reset %+v", u)
	}
	if bcrypt.CompareHashAndPassword(storedHash(t, data, "ed@acme.test"), []byte(u.Password)) != nil {
		t.Error("stored hash does not match the generated password")
	}

	other := mustJSON[accountOut](t, mustCLI(t, "accounts", "create", "--data", data, "--name", "Other"))
	bad := []struct {
		name, stdin string
		args        []string
	}{
		{"short password", "short\n", []string{"--account", account, "--email", "x@acme.test"}},
		{"no email", "", []string{"--account", account}},
		{"no account", "", []string{"--email", "x@acme.test"}},
		{"bad email", "", []string{"--account", account, "--email", "not-an-email"}},
		{"missing account", "", []string{"--account", "999", "--email", "x@acme.test"}},
		{"email of another account", "", []string{"--account", fmt.Sprint(other.ID), "--email", "ed@acme.test"}},
	}
	for _, tt := range bad {
		args := append([]string{"users", "create", "--data", data}, tt.args...)
		if _, err := runCLIStdin(t, tt.stdin, args...); err == nil {
			t.Errorf("%s: users create succeeded", tt.name)
		}
	}
	if _, err := runCLIStdin(t, "", "users"); err == nil || exitCode(err) != 2 {
		t.Errorf("users without subcommand: %v", err)
	}
}

func TestDemoUser(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	first, err := runCLIStdin(t, "", "demo", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, "email:    "+demoEmail) || !strings.Contains(first, "password: ") {
		t.Errorf("first demo run does not print the dashboard credentials:\n%s", first)
	}
	second, err := runCLIStdin(t, "", "demo", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(second, "password: ") || !strings.Contains(second, "users create") {
		t.Errorf("second demo run:\n%s", second)
	}
}

// TestDemoOwnProject checks that demo never picks another account's project that happens to
// be titled like the demo's, and finds its own again on a second run.
func TestDemoOwnProject(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	other := mustJSON[accountOut](t, mustCLI(t, "accounts", "create", "--data", data, "--name", "Other"))
	otherProj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(other.ID), "--title", demoProject, "--language", "en_US"))
	demoIDs := func() (account, project int64) {
		t.Helper()
		out, err := runCLIStdin(t, "", "demo", "--data", data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscanf(out, "Demo account %d, project %d", &account, &project); err != nil {
			t.Fatalf("demo output %q: %v", out, err)
		}
		return account, project
	}
	account, project := demoIDs()
	if account == other.ID || project == otherProj.ID {
		t.Errorf("demo chose account %d, project %d: the other account's (%d, %d)", account, project, other.ID, otherProj.ID)
	}
	if a2, p2 := demoIDs(); a2 != account || p2 != project {
		t.Errorf("second demo run chose account %d, project %d; the first made %d, %d", a2, p2, account, project)
	}
}
