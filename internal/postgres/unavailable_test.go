package postgres_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// proxy forwards TCP connections to a server until it is cut: then it
// closes its listener and every connection, as a database server's outage
// does to its clients.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); io.Copy(s, c); s.Close() }()
			go func() { defer p.wg.Done(); io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

// cut closes the listener and every connection, and waits for the copies.
func (p *proxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestUnavailable checks that when the database cannot be reached, reads
// and writes fail with narrator.EUNAVAILABLE, which the edges answer with
// 503, and that a missing object is still ENOTFOUND while it can.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.NewDatabase(t, migrated))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	rec := &storetest.Recorder{}
	s := mustOpen(t, u.String(), withJobs(recorderJobs{rec}))
	ctx := t.Context()
	acct := &narrator.Account{Name: "Acme", CreatedAt: time.Now()}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	pr := &narrator.Project{AccountID: acct.ID, Title: "Daily", Type: narrator.ProjectTypeAPI, Language: "en_US",
		TitleVoice: "Richard", BodyVoice: "Sally"}
	if err := s.CreateProject(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindAudio(ctx, pr.ID, "missing"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Fatalf("FindAudio before the outage: %v, want ENOTFOUND", err)
	}

	p.cut()
	for name, call := range map[string]func() error{
		"FindAudio": func() error { _, err := s.FindAudio(ctx, pr.ID, "missing"); return err },
		"CreateAudio": func() error {
			_, err := s.CreateAudio(ctx, &narrator.Audio{ProjectID: pr.ID, Title: "T", Body: "B."})
			return err
		},
		"AccountUsage":           func() error { _, err := s.AccountUsage(ctx, acct.ID); return err },
		"AuthorizeProject":       func() error { _, err := s.AuthorizeProject(ctx, []byte("hash"), pr.ID); return err },
		"Ping":                   func() error { return s.Ping(ctx) },
		"ListAudios":             func() error { _, err := s.ListAudios(ctx, pr.ID, time.Time{}, 1, 50); return err },
		"ReleaseSynthesisLeases": func() error { return s.ReleaseSynthesisLeases(ctx) },
	} {
		err := call()
		if code := narrator.ErrorCode(err); code != narrator.EUNAVAILABLE {
			t.Errorf("%s during the outage: %v (code %q), want %s", name, err, code, narrator.EUNAVAILABLE)
		}
		var ne *narrator.Error
		if errors.As(err, &ne) && ne.Message == "" {
			t.Errorf("%s: no message for clients", name)
		}
	}
}

// TestDeadlockIsUnavailable: the transaction PostgreSQL rolls back to
// break a deadlock between two writes is EUNAVAILABLE, which the API
// answers with a 503 and Retry-After, since the request, made again, goes
// through.
func TestDeadlockIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t, migrated))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // after the transactions' rollbacks
	if _, err := pool.Exec(ctx, `CREATE TABLE rows (id int PRIMARY KEY); INSERT INTO rows VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	// Each transaction locks one row, then the other's.
	begin := func(id int) pgx.Tx {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(ctx)) })
		if _, err := tx.Exec(ctx, `SET LOCAL deadlock_timeout = '20ms'`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT id FROM rows WHERE id = $1 FOR UPDATE`, id); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	txs := []pgx.Tx{begin(1), begin(2)}
	errs := make(chan error, 2)
	for i, tx := range txs {
		go func() {
			_, err := tx.Exec(ctx, `SELECT id FROM rows WHERE id = $1 FOR UPDATE`, 2-i)
			if err != nil {
				// The victim's rollback lets the other through.
				_ = tx.Rollback(ctx)
			}
			errs <- err
		}()
	}
	var victims int
	for range txs {
		if err := <-errs; err != nil {
			victims++
			marked := postgres.Unavailable(err)
			if got := narrator.ErrorCode(marked); got != narrator.EUNAVAILABLE {
				t.Errorf("deadlock error %v: code %q, want %q", err, got, narrator.EUNAVAILABLE)
			}
			if msg := narrator.ErrorMessage(marked); !strings.Contains(msg, "concurrent change") {
				t.Errorf("deadlock error's message %q, want one of a concurrent change", msg)
			}
		}
	}
	if victims != 1 {
		t.Fatalf("%d transactions rolled back, want 1", victims)
	}
}
