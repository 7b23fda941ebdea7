package postgres_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// A write to a live audio (here a delete) locks the audio before its
// account, and a group of creates locks its accounts before it inserts:
// the group must not insert an external ID that such a write holds, or
// each waits for the other. These tests stop one side at the point where
// the other would then wait, on two nodes of one database, and fail on a
// deadlock or an error of either.

// A delete of an audio that has set deleted_at and is about to write its
// account's usage (DeleteAudio's order: audio row, then account), while
// another node's group of creates, holding that account, inserts the same
// external ID.
func TestGroupCreateBesideDelete(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	rec := &storetest.Recorder{}
	node1 := mustOpen(t, url, withJobs(recorderJobs{rec}))
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts := withJobs(recorderJobs{rec})
	armed := false
	var mu sync.Mutex
	opts.EffectFunc = func(step narrator.EffectStep) {
		mu.Lock()
		a := armed
		mu.Unlock()
		if a && step == narrator.StepUsage {
			once.Do(func() { close(reached); <-release })
		}
	}
	node2 := mustOpen(t, url, opts)
	p := mustProject(t, node1)
	if _, err := node1.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: "X", Title: "T", Body: "B", Author: "A"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	armed = true
	mu.Unlock()
	var delErr error
	var wg sync.WaitGroup
	wg.Go(func() { _, delErr = node2.DeleteAudio(ctx, p.ID, "X") })
	<-reached
	start := time.Now()
	var createErr error
	var created bool
	wg.Go(func() {
		created, createErr = node1.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: "X", Title: "T2", Body: "B2", Author: "A"})
	})
	time.Sleep(300 * time.Millisecond)
	close(release)
	wg.Wait()
	t.Logf("delete: %v; create: created=%v err=%v; create took %v", delErr, created, createErr, time.Since(start))
	if delErr != nil {
		t.Errorf("DeleteAudio failed: %v", delErr)
	}
	if createErr != nil {
		t.Errorf("CreateAudio failed: %v", createErr)
	}
	wantNoDeadlock(t, node1)
}

// hookJobs pauses a group of creates after it has locked its accounts (the
// synthesis head is read in the same batch), until released.
type hookJobs struct {
	recorderJobs
	locked, release chan struct{}
	once            *sync.Once
}

func (j hookJobs) QueueSynthesisHead(b *pgx.Batch, head *int64) {
	b.Queue(`SELECT 0::bigint`).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(head); err != nil {
			return err
		}
		j.once.Do(func() { close(j.locked); <-j.release })
		return nil
	})
}

// The other order: the group holds the account when the delete updates the
// audio row; the delete then waits for the account, and an insert of the
// same external ID by the group would wait for the delete.
func TestDeleteBesideGroupCreate(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	rec := &storetest.Recorder{}
	plain := mustOpen(t, url, withJobs(recorderJobs{rec}))
	hj := hookJobs{recorderJobs{rec}, make(chan struct{}), make(chan struct{}), &sync.Once{}}
	node1 := mustOpen(t, url, withJobs(hj))
	node2 := mustOpen(t, url, withJobs(recorderJobs{rec}))
	p := mustProject(t, plain)
	if _, err := plain.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: "X", Title: "T", Body: "B", Author: "A"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var createErr, delErr error
	var created bool
	start := time.Now()
	wg.Go(func() {
		created, createErr = node1.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: "X", Title: "T2", Body: "B2", Author: "A"})
	})
	<-hj.locked
	wg.Go(func() { _, delErr = node2.DeleteAudio(ctx, p.ID, "X") })
	time.Sleep(300 * time.Millisecond)
	close(hj.release)
	wg.Wait()
	t.Logf("delete: %v; create: created=%v err=%v; took %v", delErr, created, createErr, time.Since(start))
	if delErr != nil {
		t.Errorf("DeleteAudio failed (code %s): %v", narrator.ErrorCode(delErr), delErr)
	}
	if createErr != nil {
		t.Errorf("CreateAudio failed: %v", createErr)
	}
	wantNoDeadlock(t, plain)
}

// wantNoDeadlock fails if PostgreSQL has broken a deadlock in the test's
// database (a deadlock may resolve itself by failing a transaction that
// the store then retries, unseen by its caller).
func wantNoDeadlock(t *testing.T, s interface{ Pool() *pgxpool.Pool }) {
	t.Helper()
	var deadlocks int64
	if err := s.Pool().QueryRow(t.Context(), `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&deadlocks); err != nil {
		t.Fatal(err)
	}
	if deadlocks > 0 {
		t.Errorf("%d deadlocks in the test's database", deadlocks)
	}
}

// An external ID taken between a group's lookup and its insert, here by a
// row written without the account's lock, fails the group's writes before
// their commit: the group is rolled back and its creates run alone, the
// one whose ID was taken then updating the audio that holds it.
func TestGroupInsertMeetsTakenExternalID(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts := withJobs(recorderJobs{&storetest.Recorder{}})
	opts.EffectFunc = func(step narrator.EffectStep) {
		if step == narrator.StepUsage {
			once.Do(func() { close(reached); <-release })
		}
	}
	s := mustOpen(t, url, opts)
	p := mustProject(t, s)
	type outcome struct {
		created bool
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		created, err := s.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: "X", Title: "Mine", Body: "B", Author: "A"})
		done <- outcome{created, err}
	}()
	<-reached
	_, err := s.Pool().Exec(ctx, `
INSERT INTO audios (project_id, external_id, title, body, author, article_url, state, created_at, updated_at, seq)
VALUES ($1, 'X', 'Theirs', 'B', 'A', '', 'unprocessed', now(), now(), 1000)`, p.ID)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil {
		t.Fatalf("CreateAudio: %v", got.err)
	}
	if got.created {
		t.Error("created = true, want false: the create updates the audio that took its external ID")
	}
	a, err := s.FindAudio(ctx, p.ID, "X")
	if err != nil {
		t.Fatal(err)
	}
	if a.Title != "Mine" {
		t.Errorf("title %q, want the create's, %q", a.Title, "Mine")
	}
	if n := audioRows(t, s.Pool(), p.ID); n != 1 {
		t.Errorf("%d audios, want 1", n)
	}
}
