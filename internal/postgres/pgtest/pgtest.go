// Package pgtest gives each test a PostgreSQL database of its own on the
// server at TEST_POSTGRES_URL, a copy of a template database that is
// prepared (migrated) once per test binary, so that a test starts from a
// migrated schema in milliseconds. It is for tests only.
//
// A package that uses it runs its tests through Main, which drops the
// templates at the end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/proctest"
)

// Template is a database that tests get copies of.
type Template struct {
	// Name tells the templates of one test binary apart.
	Name string
	// Prepare fills a new template database, given its URL: it migrates
	// the schema and creates whatever tables the tests need.
	Prepare func(ctx context.Context, url string) error
}

// prepared is a template database made by this process.
type prepared struct {
	once sync.Once
	name string
	err  error
}

// server is the test server as this process uses it. Tests of one binary
// share it; it is guarded by mu.
var server struct {
	mu        sync.Mutex
	admin     *postgres.Store // on the database of TEST_POSTGRES_URL
	templates map[string]*prepared
	next      int
}

// URL returns TEST_POSTGRES_URL, a superuser URL to the test server, such
// as postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable. When it
// is unset, it skips tb, or fails it if NARRATOR_TEST_FULL=1 is set (the
// complete test command must never skip these tests).
func URL(tb testing.TB) string {
	tb.Helper()
	return proctest.NeedEnv(tb, "TEST_POSTGRES_URL", "PostgreSQL", "scripts/test.sh starts a server and sets TEST_POSTGRES_URL")
}

// baseURL returns URL(tb), parsed.
func baseURL(tb testing.TB) *url.URL {
	tb.Helper()
	u, err := url.Parse(URL(tb))
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("pgtest: TEST_POSTGRES_URL must be a postgres:// URL")
	}
	return u
}

// NewDatabase creates a database for tb, a copy of tmpl (empty when
// tmpl.Prepare is nil), and returns its URL. The database is dropped at
// tb's cleanup; close connections to it in cleanups registered later.
func NewDatabase(tb testing.TB, tmpl Template) string {
	tb.Helper()
	base := baseURL(tb)
	admin, err := adminStore(tb.Context(), base.String())
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	source := "template0"
	if tmpl.Prepare != nil {
		if source, err = templateDatabase(tb.Context(), admin, base, tmpl); err != nil {
			tb.Fatalf("pgtest: template %s: %v", tmpl.Name, err)
		}
	}
	server.mu.Lock()
	server.next++
	name := fmt.Sprintf("narrator_test_%d_%d", os.Getpid(), server.next)
	server.mu.Unlock()
	if _, err := admin.Pool().Exec(tb.Context(), fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, source)); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Pool().Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return withDatabase(base, name)
}

// Migrated returns a Template named name whose database has the store's
// schema, then whatever then adds on the store (River's tables, a table of
// a test's own): the one recipe of a migrated PostgreSQL database for
// tests.
func Migrated(name string, then func(context.Context, *postgres.Store) error) Template {
	return Template{Name: name, Prepare: func(ctx context.Context, url string) error {
		s, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.Migrate(ctx); err != nil {
			return err
		}
		return then(ctx, s)
	}}
}

// Main runs the tests, drops the templates they made, and exits with the
// tests' status.
func Main(m *testing.M) {
	code := m.Run()
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for _, t := range server.templates {
			if t.name == "" {
				continue
			}
			if _, err := server.admin.Pool().Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, t.name)); err != nil {
				fmt.Fprintf(os.Stderr, "pgtest: drop template %s: %v\n", t.name, err)
				code = max(code, 1)
			}
		}
		cancel()
		server.admin.Close()
	}
	os.Exit(code)
}

// adminStore returns the connection to the database of base, opened once.
func adminStore(ctx context.Context, base string) (*postgres.Store, error) {
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.admin == nil {
		// Cleanups and other tests outlive the test that opens it.
		st, err := postgres.Open(context.WithoutCancel(ctx), base, postgres.Options{})
		if err != nil {
			return nil, err
		}
		server.admin = st
		server.templates = map[string]*prepared{}
	}
	return server.admin, nil
}

// templateDatabase returns the name of tmpl's database, creating and
// preparing it the first time.
func templateDatabase(ctx context.Context, admin *postgres.Store, base *url.URL, tmpl Template) (string, error) {
	server.mu.Lock()
	t := server.templates[tmpl.Name]
	if t == nil {
		t = &prepared{}
		server.templates[tmpl.Name] = t
	}
	server.mu.Unlock()
	t.once.Do(func() {
		// The template serves later tests too: it must not depend on the
		// first test's context.
		ctx := context.WithoutCancel(ctx)
		name := fmt.Sprintf("narrator_tmpl_%d_%s", os.Getpid(), tmpl.Name)
		if _, err := admin.Pool().Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE template0`, name)); err != nil {
			t.err = err
			return
		}
		t.name = name
		t.err = tmpl.Prepare(ctx, withDatabase(base, name))
	})
	return t.name, t.err
}

// withDatabase returns the URL base with its database replaced by name.
func withDatabase(base *url.URL, name string) string {
	u := *base
	u.Path = "/" + name
	return u.String()
}

// Groups is a postgres.GroupRecorder that keeps how each group of creates
// ran, for a test to take.
type Groups struct {
	mu    sync.Mutex
	plans []string
}

// CreateGroup records how a group ran.
func (g *Groups) CreateGroup(plan string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.plans = append(g.plans, plan)
}

// Take returns how the groups recorded since the last Take ran, in order.
func (g *Groups) Take() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	plans := g.plans
	g.plans = nil
	return plans
}
