package postgres_test

import (
	"context"
	"testing"
	"time"

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
	project := func(a *narrator.Account) int64 {
		p := &narrator.Project{AccountID: a.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
		if err := s.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	pB, pA, pC := project(accounts[1]), project(accounts[0]), project(accounts[2])

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
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var n int
			if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name = 'narrator'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("no statement of the store waits for a lock")
			}
		}
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
	for deadline := time.Now().Add(10 * time.Second); postgres.CreatesWaiting(s) < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d creates wait in line, want 2", postgres.CreatesWaiting(s))
		}
	}
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
