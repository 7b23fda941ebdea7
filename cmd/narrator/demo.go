package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
)

// Names of what the demo creates.
const (
	demoAccount = "Demo"
	demoProject = "Demo project"
	demoEmail   = "demo@narrator.local"
	// demoLanguage is the demo project's language, whose recommended neural voice the
	// quickstart installs (voices setup-default).
	demoLanguage = "en_US"
)

// demoCommand is `narrator demo`.
type demoCommand struct{ e *env }

// Run makes sure a demo account and project exist, gives them a fresh
// API key (keys are shown only once, so every run makes a new one) and
// prints ready-to-paste commands. The quickstart runs it before serve.
func (cmd demoCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "demo", "demo [[--data DIR|--database URL]|--database URL] [--public-url URL]")
	data := config.BackendFlags(fs, e.getenv)
	publicURL := fs.String("public-url", e.getenv(config.EnvPublicURL), "base `URL` the server will answer on (default http://"+config.DefaultAddr+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	base := strings.TrimRight(*publicURL, "/")
	if base == "" {
		addr := e.getenv(config.EnvAddr)
		if addr == "" {
			addr = config.DefaultAddr
		}
		base = "http://" + addr
	}
	b, err := data()
	if err != nil {
		return usagef("demo: %v", err)
	}
	st, err := openStore(ctx, e, func() (config.Backends, error) { return b, nil })
	if err != nil {
		return err
	}
	defer st.Close()

	accountID, key, err := demoAccountID(ctx, st)
	if err != nil {
		return err
	}
	projects, err := st.ListProjects(ctx, accountID)
	if err != nil {
		return fmt.Errorf("list demo projects: %w", err)
	}
	var p *narrator.Project
	for _, cand := range projects {
		if cand.Title == demoProject {
			p = cand
			break
		}
	}
	if p == nil {
		cat, err := loadCatalog(ctx, st)
		if err != nil {
			return err
		}
		title, body, _ := cat.Defaults(demoLanguage)
		p = &narrator.Project{AccountID: accountID, Title: demoProject, Type: narrator.ProjectTypeAPI, Language: demoLanguage, TitleVoice: title.Name, BodyVoice: body.Name}
		if err := st.CreateProject(ctx, p); err != nil {
			return fmt.Errorf("create demo project: %w", err)
		}
	}
	if key == "" {
		if key, _, err = createKey(ctx, st, accountID); err != nil {
			return err
		}
	}
	dashboard, err := demoUser(ctx, st, p.AccountID, storeFlags(b), base)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, `Demo account %d, project %d (%q, %s).
A new API key for it (shown only now): %s

Once the server is up, create an audio:

  curl -s -X POST %s/api/v3/projects/%d/audio -H 'Content-Type: application/json' \
    -d '{"api_key": "%s", "external_id": "hello-narrator", "title": "Hello from Narrator", "author": "The Narrator team", "body": "<p>Narrator turns articles into speech. On October 3rd, 2026, the council approved a budget of $3.5 million.</p>"}'

and fetch it (state "processed" and media URLs after a few seconds):

  curl -s '%s/api/v3/projects/%d/audio/hello-narrator?api_key=%s'

%s
`, p.AccountID, p.ID, p.Title, p.Language, key, base, p.ID, key, base, p.ID, key, dashboard)
	return nil
}

// demoAccountID returns the demo account: the account of the demo user,
// which an earlier run made, or else a new account, with its first API key.
// The demo user, not a project's title, says which account is the demo's:
// other accounts may have a project titled like the demo's.
func demoAccountID(ctx context.Context, st dataStore) (id int64, key string, err error) {
	u, err := st.FindUserByEmail(ctx, demoEmail)
	switch {
	case err == nil:
		return u.AccountID, "", nil
	case narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return 0, "", fmt.Errorf("find demo user: %w", err)
	}
	a, key, err := createAccount(ctx, st, demoAccount)
	if err != nil {
		return 0, "", err
	}
	return a.ID, key, nil
}

// demoUser makes sure the demo account has a dashboard user and returns
// what to print about signing in. The password is generated and printed
// only when the user is created; later runs say how to reset it.
func demoUser(ctx context.Context, st dataStore, accountID int64, flags, base string) (string, error) {
	u, err := st.FindUserByEmail(ctx, demoEmail)
	switch {
	case err == nil:
		return fmt.Sprintf(`Dashboard: open %s/ and sign in as %s
Its password was printed when it was created. To set a new one, run
  bin/narrator users create %s --account %d --email %s
which prints a new password (or pipe one in on standard input).
`, base, demoEmail, flags, u.AccountID, demoEmail), nil
	case narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return "", fmt.Errorf("find demo user: %w", err)
	}
	u, password, _, err := upsertUser(ctx, st, accountID, demoEmail, "")
	if err != nil {
		return "", fmt.Errorf("create demo user: %w", err)
	}
	return fmt.Sprintf(`Dashboard: open %s/ and sign in with
  email:    %s
  password: %s
(shown only now; bin/narrator users create %s --account %d --email %s resets it).
`, base, u.Email, password, flags, accountID, demoEmail), nil
}

// storeFlags returns the flags that name b's database for another command.
func storeFlags(b config.Backends) string {
	if kind, _, _ := config.ParseDatabase(b.Database); kind == config.SQLite {
		return "--data " + b.DataDir
	}
	return "--database '" + b.Database + "'"
}
