package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// TestGroupLocksAccountsInTheirOrder: a group whose projects belong to
// two accounts locks them in the accounts' order, whatever its projects'
// order, so that two groups on two nodes never hold one account each
// while waiting for the other's. Here the group's projects come in the
// order of account B, then account A; with A's lock held elsewhere, the
// group waits for A without holding B.
func TestGroupLocksAccountsInTheirOrder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	s := mustOpen(t, url, withJobs(recorderJobs{&storetest.Recorder{}}))
	var accounts [3]*narrator.Account // A, B, C, in the order of their IDs
	for i := range accounts {
		accounts[i] = &narrator.Account{Name: "Acme"}
		if err := s.CreateAccount(ctx, accounts[i]); err != nil {
			t.Fatal(err)
		}
	}
	pB, pA, pC := mustProjectOf(t, s, accounts[1].ID).ID, mustProjectOf(t, s, accounts[0].ID).ID, mustProjectOf(t, s, accounts[2].ID).ID

	other, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock := func(account *narrator.Account) pgx.Tx {
		tx, err := other.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, account.ID); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	holdA, holdC := lock(accounts[0]), lock(accounts[2])
	defer func() { _ = holdA.Rollback(context.WithoutCancel(ctx)) }()
	// waitForLock waits until one of the store's statements waits for a lock.
	waitForLock := func() {
		t.Helper()
		eventually(t, "a statement of the store waits for a lock", func() bool { return lockWaiters(t, other, "%") > 0 })
	}
	errs := make(chan error, 3)
	create := func(projectID int64) {
		go func() {
			_, err := s.CreateAudio(ctx, &narrator.Audio{ProjectID: projectID, Title: "T", Body: "B", Author: "A"})
			errs <- err
		}()
	}
	// A first group, of project C, leads and waits for C; the creates of
	// B and A wait in line behind it, then form the next group.
	create(pC)
	waitForLock()
	create(pB)
	create(pA)
	eventually(t, "two creates wait in line", func() bool { return postgres.CreatesWaiting(s) == 2 })
	if err := holdC.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	waitForLock()
	// The group waits for A: it must not hold B.
	if _, err := holdA.Exec(ctx, `SELECT id FROM accounts WHERE id = $1 FOR UPDATE NOWAIT`, accounts[1].ID); err != nil {
		t.Fatalf("account B, locked by a group waiting for account A: %v", err)
	}
	if err := holdA.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
