package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
)

// TestPostgresSynthesisRowAsRiverWritesIt: on PostgreSQL a group of
// creates writes its synthesis jobs with its other writes; the row is the
// one River writes for an update's job, but for its ID, arguments and
// times, and the nonce River's full insert adds to the metadata.
func TestPostgresSynthesisRowAsRiverWritesIt(t *testing.T) {
	t.Parallel()
	b := setup(t, openPostgres)
	ctx := t.Context()
	created := postgresJobRows(t, b)
	if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: ptr("Hello again.")}); err != nil {
		t.Fatal(err)
	}
	updated := postgresJobRows(t, b)
	if len(created) != 1 || len(updated) != 1 {
		t.Fatalf("%d jobs after the create, %d after the update; want 1 each", len(created), len(updated))
	}
	if diff := cmp.Diff(updated[0], created[0]); diff != "" {
		t.Errorf("the create's job differs from River's (-River +create):\n%s", diff)
	}
}

// postgresJobRows returns the columns of River's jobs that must not depend
// on who wrote them, oldest first.
func postgresJobRows(t *testing.T, b *testBundle) [][]any {
	t.Helper()
	rows, err := b.store.(*postgres.Store).Pool().Query(t.Context(), `
SELECT kind, max_attempts, priority, queue, state::text, attempt, (metadata - 'river:unique_nonce')::text, tags::text,
	unique_key IS NULL, unique_states IS NULL, attempted_at IS NULL, attempted_by IS NULL, finalized_at IS NULL,
	cardinality(errors) IS NULL, jsonb_typeof(args), created_at <= now(), scheduled_at < created_at
FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([]any, error) { return row.Values() })
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// listenInserts returns a connection of pool that listens to River's
// announcements of inserts, released when the test ends.
func listenInserts(t *testing.T, pool *pgxpool.Pool) *pgxpool.Conn {
	t.Helper()
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release)
	if _, err := conn.Exec(t.Context(), `LISTEN "public.river_insert"`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestPostgresCreateAnnouncesItsJob: a group of creates announces its jobs
// to the workers of the synthesis queue as River announces its own
// inserts, on the topic River's notifier listens to.
func TestPostgresCreateAnnouncesItsJob(t *testing.T) {
	t.Parallel()
	b := setup(t, openPostgres)
	ctx := t.Context()
	conn := listenInserts(t, b.store.(*postgres.Store).Pool())
	// A queue announces its inserts at most once per its fetch cooldown:
	// creates go on until one is announced.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		if _, err := b.store.CreateAudio(ctx, &narrator.Audio{ProjectID: b.audio.ProjectID, ExternalID: fmt.Sprint("n", i), Body: "Hello."}); err != nil {
			t.Fatal(err)
		}
		wait, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		n, err := conn.Conn().WaitForNotification(wait)
		cancel()
		if err == nil {
			if want := `{"queue": "synthesize"}`; n.Payload != want {
				t.Errorf("payload %s, want %s", n.Payload, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no announcement after %d creates: %v", i+1, err)
		}
	}
}

// TestPostgresMissAnnounces: a group planned ahead that misses rolls back
// with the announcement it queued; the group that runs the long way after
// it announces its jobs, although the cooldown since the last announcement
// has not passed, or idle workers would learn of them only at their next
// poll.
func TestPostgresMissAnnounces(t *testing.T) {
	t.Parallel()
	b := setup(t, openPostgres)
	ctx := t.Context()
	// A store of its own, on the same database and queue, that says how
	// each group ran.
	groups := &pgtest.Groups{}
	st := postgres.New(b.store.(*postgres.Store).Pool(), postgres.Options{Jobs: b.queue.(*jobs.Queue[pgx.Tx]), EventBody: eventBody, Groups: groups})
	t.Cleanup(func() { st.Close() })
	conn := listenInserts(t, st.Pool())
	create := func(externalID string) {
		t.Helper()
		if _, err := st.CreateAudio(ctx, &narrator.Audio{ProjectID: b.audio.ProjectID, ExternalID: externalID, Body: "Hello."}); err != nil {
			t.Fatal(err)
		}
	}
	// drain waits out the cooldown and takes every announcement made.
	drain := func() {
		t.Helper()
		time.Sleep(100 * time.Millisecond)
		for {
			wait, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			_, err := conn.Conn().WaitForNotification(wait)
			cancel()
			if err != nil {
				return
			}
		}
	}
	// The store's first group runs the long way; the next plans ahead,
	// and holds.
	create("first")
	create("ahead")
	drain()
	// A worker took one of the account's audios off the queue: the next
	// plan ahead misses, after its announcement was queued.
	if _, err := st.Pool().Exec(ctx, `UPDATE accounts SET queued = queued - 1 WHERE id = (SELECT account_id FROM projects WHERE id = $1)`, b.audio.ProjectID); err != nil {
		t.Fatal(err)
	}
	create("missed")
	if got, want := groups.Take(), []string{"read", "ahead", "ahead_missed"}; !slices.Equal(got, want) {
		t.Fatalf("the groups ran %v; want %v", got, want)
	}
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := conn.Conn().WaitForNotification(wait); err != nil {
		t.Fatalf("no announcement of the create that missed its plan: %v", err)
	}
}

// TestPostgresExpectSynthesisHead checks QueueExpectSynthesisHead against
// QueueSynthesisHead's read, on River's table: it passes for the head
// read, and fails its transaction, with narrator_expect's code, for any
// other round, and once the head has moved on.
func TestPostgresExpectSynthesisHead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	opened, queued, _ := openPostgres(t)
	st, q := opened.(*postgres.Store), queued.(*jobs.Queue[pgx.Tx])
	pool := st.Pool()
	read := func() int64 {
		t.Helper()
		var head int64
		b := &pgx.Batch{}
		q.QueueSynthesisHead(b, &head)
		if err := pool.SendBatch(ctx, b).Close(); err != nil {
			t.Fatal(err)
		}
		return head
	}
	expect := func(head int64) error {
		b := &pgx.Batch{}
		q.QueueExpectSynthesisHead(b, head)
		return pool.SendBatch(ctx, b).Close()
	}
	wantHeld := func(what string, head int64, held bool) {
		t.Helper()
		err := expect(head)
		var pgErr *pgconn.PgError
		switch {
		case held && err != nil:
			t.Fatalf("%s: expecting head %d: %v", what, head, err)
		case !held && (!errors.As(err, &pgErr) || pgErr.Code != "NR001"):
			t.Fatalf("%s: expecting head %d: %v, want narrator_expect's error", what, head, err)
		}
	}
	wantHeld("no job", read(), true)
	wantHeld("no job", 1, false)

	p := mustProject(t, st, "Acme", "P")
	for range 3 {
		if _, err := st.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, Title: "T", Body: "B."}); err != nil {
			t.Fatal(err)
		}
	}
	head := read()
	wantHeld("three jobs", head, true)
	wantHeld("three jobs", head+1, false)
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running' WHERE id = (SELECT min(id) FROM river_job)`); err != nil {
		t.Fatal(err)
	}
	if next := read(); next == head {
		t.Fatalf("head %d after the first job started, want another", next)
	}
	wantHeld("the head moved on", head, false)
	wantHeld("the head moved on", read(), true)
}
