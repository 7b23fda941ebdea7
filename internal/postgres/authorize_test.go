package postgres_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
)

// TestAuthorizeGroupEndsWithItsCallers: a group of AuthorizeProject calls
// whose statement is stuck (here, behind a lock on the keys) ends once
// all its callers have left, and does not hold up the line after them.
func TestAuthorizeGroupEndsWithItsCallers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	s := mustOpen(t, url, withJobs(nil))
	p := mustProject(t, s)
	hash := sha256.Sum256([]byte("key"))
	if _, err := s.CreateAPIKey(ctx, p.AccountID, hash[:], "nk_key"); err != nil {
		t.Fatal(err)
	}
	other, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := lock.Exec(ctx, `LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	// waiting waits until a statement like pattern waits for the lock.
	waiting := func(pattern string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var n int
			if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND query LIKE $1`, pattern).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no statement like %q waits for the lock", pattern)
			}
		}
	}
	authorize := func(ctx context.Context, n int) chan error {
		errs := make(chan error, n)
		for range n {
			go func() {
				_, err := s.AuthorizeProject(ctx, hash[:], p.ID)
				errs <- err
			}()
		}
		return errs
	}
	// A first call leads alone, and waits; the calls that come meanwhile
	// wait in line, then run as a group once it has left.
	first, leave := context.WithCancel(ctx)
	firstErr := authorize(first, 1)
	waiting("%WHERE id = $1 AND account_id%")
	group, leaveGroup := context.WithCancel(ctx)
	groupErrs := authorize(group, 6)
	for deadline := time.Now().Add(10 * time.Second); postgres.AuthorizeWaiting(s) < 6; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls wait in line, want 6", postgres.AuthorizeWaiting(s))
		}
	}
	leave()
	if err := <-firstErr; err == nil {
		t.Fatal("the first call was authorized behind the lock")
	}
	waiting("%WITH ORDINALITY AS r(asked_id%")
	leaveGroup()
	timeout := time.After(10 * time.Second)
	for range 6 {
		select {
		case err := <-groupErrs:
			if err == nil {
				t.Fatal("a call of the group was authorized behind the lock")
			}
		case <-timeout:
			t.Fatal("the group's calls are still waiting 10 s after they all left")
		}
	}
}
