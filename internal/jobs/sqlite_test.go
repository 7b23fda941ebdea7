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
	// The create's job is written by the store's own statement; an update
	// of the body replaces it (narrator.Effects.Supersede) with one
	// through River's insert.
	created := sqliteJobRows(t, b)
	if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: ptr("Hello again.")}); err != nil {
		t.Fatal(err)
	}
	updated := sqliteJobRows(t, b)
	if len(created) != 1 || len(updated) != 1 {
		t.Fatalf("%d jobs after the create, %d after the update; want 1 each", len(created), len(updated))
	}
	if diff := cmp.Diff(updated[0], created[0]); diff != "" {
		t.Errorf("the create's job differs from River's (-River +create):\n%s", diff)
	}
}

// sqliteJobRows returns the columns of River's jobs that must not depend
// on who wrote them, oldest first.
func sqliteJobRows(t *testing.T, b *testBundle) [][]any {
	t.Helper()
	rows, err := b.store.(*sqlite.Store).DB().QueryContext(t.Context(), `
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
	return got
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
	maxAttempts := func() []int {
		t.Helper()
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
		return got
	}
	got := maxAttempts()
	if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: ptr("Hello again.")}); err != nil {
		t.Fatal(err)
	}
	got = append(got, maxAttempts()...) // the update's job replaced the create's
	if want := []int{3, 3}; !slices.Equal(got, want) {
		t.Errorf("max_attempts of the create's and the update's jobs = %v, want %v", got, want)
	}
}
