package jobs_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/sqlite"
)

// TestSQLiteSynthesisRowAsRiverWritesIt: on SQLite a create writes its
// synthesis job itself; the row is the one River writes for an update's
// job, but for its ID, arguments and times, whose formats match, and the
// nonce River's full insert adds to the metadata.
func TestSQLiteSynthesisRowAsRiverWritesIt(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite)
	ctx := t.Context()
	// An update of the body queues the new revision through River's insert.
	if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: ptr("Hello again.")}); err != nil {
		t.Fatal(err)
	}
	rows, err := b.store.(*sqlite.Store).DB().QueryContext(ctx, `
SELECT kind, max_attempts, priority, queue, state, attempt, json_remove(metadata, '$."river:unique_nonce"'), json(tags),
	unique_key IS NULL, unique_states IS NULL, attempted_at IS NULL, finalized_at IS NULL, errors IS NULL,
	typeof(args), typeof(created_at), length(created_at), typeof(scheduled_at), length(scheduled_at),
	created_at <= datetime('now', 'subsec'), scheduled_at < created_at
FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got [][]any
	for rows.Next() {
		row := make([]any, 20)
		ptrs := make([]any, len(row))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		got = append(got, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d jobs, want the create's and the update's", len(got))
	}
	if diff := cmp.Diff(got[1], got[0]); diff != "" {
		t.Errorf("the create's job differs from River's (-River +create):\n%s", diff)
	}
}

// TestSQLiteCreateAnnouncesItsJob: a create announces its job to the
// workers of the synthesis queue as River announces its own inserts, in
// River's table of notifications.
func TestSQLiteCreateAnnouncesItsJob(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite)
	var payload string
	err := b.store.(*sqlite.Store).DB().QueryRowContext(t.Context(),
		`SELECT payload FROM river_notification WHERE topic = 'river_insert'`).Scan(&payload)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"queue": "synthesize"}`; payload != want {
		t.Errorf("payload %s, want %s", payload, want)
	}
}

// TestInsertOnlyQueueSetsMaxAttempts: jobs inserted by a node that does
// not work them (--role api) get the configured attempts, not River's
// default, both through River's insert (an update) and the store's own
// (a create).
func TestInsertOnlyQueueSetsMaxAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t, func(t *testing.T) (store, queue, riverDB) {
		return openSQLiteWith(t, jobs.Config{MaxAttempts: 3})
	})
	ctx := t.Context()
	if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: ptr("Hello again.")}); err != nil {
		t.Fatal(err)
	}
	rows, err := b.store.(*sqlite.Store).DB().QueryContext(ctx, `SELECT max_attempts FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []int{3, 3}; !slices.Equal(got, want) {
		t.Errorf("max_attempts of the create's and the update's jobs = %v, want %v", got, want)
	}
}
