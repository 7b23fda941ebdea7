package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
)

// TestAuthorizeLineWithAStuckStatement: while AuthorizeProject's statement
// is stuck (here, behind a lock on the keys), a call waiting in line
// returns when its own context ends, and a group's statement runs until
// the last of its callers has left, and no longer.
func TestAuthorizeLineWithAStuckStatement(t *testing.T) {
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
	waiters := func(pattern string) int { return lockWaiters(t, other, pattern) }
	const alone, together = "%WHERE id = $1 AND account_id%", "%WITH ORDINALITY AS r(asked_id%"
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
	returns := func(what string, errs chan error, n int, want error) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for range n {
			select {
			case err := <-errs:
				if !errors.Is(err, want) {
					t.Fatalf("%s: %v, want %v", what, err, want)
				}
			case <-timeout:
				t.Fatalf("%s: still waiting after 10 s", what)
			}
		}
	}

	// A first call leads alone, and waits.
	first, leaveFirst := context.WithCancel(ctx)
	firstErr := authorize(first, 1)
	eventually(t, "the first call waits for the lock", func() bool { return waiters(alone) == 1 })
	// A call in line behind it returns at its deadline.
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	returns("a call in line past its deadline", authorize(short, 1), 1, context.DeadlineExceeded)

	// Six calls wait in line, then run as a group once the first has left;
	// the first of them in line leads it.
	five, leaveFive := context.WithCancel(ctx)
	last, leaveLast := context.WithCancel(ctx)
	lastErr := authorize(last, 1)
	eventually(t, "the group's leader waits in line", func() bool { return postgres.AuthorizeWaiting(s) == 1 })
	fiveErrs := authorize(five, 5)
	eventually(t, "six calls wait in line", func() bool { return postgres.AuthorizeWaiting(s) == 6 })
	leaveFirst()
	returns("the first call", firstErr, 1, context.Canceled)
	eventually(t, "the group's statement waits for the lock", func() bool { return waiters(together) == 1 })
	// Five of its callers leave: they return, and the statement goes on
	// for the sixth.
	leaveFive()
	returns("five calls of the group", fiveErrs, 5, context.Canceled)
	time.Sleep(200 * time.Millisecond)
	if waiters(together) != 1 {
		t.Fatal("the group's statement ended while one of its callers still waited")
	}
	// The last one, which leads, leaves: the statement ends.
	leaveLast()
	returns("the last call of the group", lastErr, 1, context.Canceled)
	eventually(t, "the group's statement has ended", func() bool { return waiters(together) == 0 })
}
