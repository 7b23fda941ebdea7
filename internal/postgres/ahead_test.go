package postgres_test

import (
	"crypto/sha256"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// TestPlanAheadChecksWhatItAssumed creates audios one at a time, each a
// group of one, which plans ahead against what the last group left. Between
// creates, the test changes what such a plan assumed, as a worker or
// another node would: the account's usage, the queue's head, an external
// ID, an API key. Each change must make the plan miss, write nothing, and
// leave the create to run the long way with the outcome it would have had
// without planning ahead.
func TestPlanAheadChecksWhatItAssumed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	rec := &storetest.Recorder{}
	opts := withJobs(recorderJobs{rec})
	groups := &pgtest.Groups{}
	opts.Groups = groups
	s := mustOpen(t, url, opts)
	other := mustOpen(t, url, withJobs(recorderJobs{&storetest.Recorder{}}))
	p := mustProject(t, s)
	hash := sha256.Sum256([]byte("key"))
	key, err := s.CreateAPIKey(ctx, p.AccountID, hash[:], "nk_key")
	if err != nil {
		t.Fatal(err)
	}
	n := 0 // audios created by s
	create := func(externalID string) (*narrator.Audio, bool, error) {
		t.Helper()
		a := &narrator.Audio{ProjectID: p.ID, ExternalID: externalID, Title: "T", Body: "B", Author: "A"}
		created, err := s.CreateAudioWithKey(ctx, hash[:], a)
		if created {
			n++
		}
		return a, created, err
	}
	// wantPlanned creates an audio and checks that it planned ahead and hit
	// (want 0 misses) or missed (1), and that the store recorded so.
	wantPlanned := func(what string, wantMisses int) *narrator.Audio {
		t.Helper()
		if ready, _ := postgres.PlanAhead(s); !ready {
			t.Fatalf("%s: the store is not ready to plan ahead", what)
		}
		a, created, err := create("")
		if err != nil || !created {
			t.Fatalf("%s: created %v, %v", what, created, err)
		}
		if _, misses := postgres.PlanAhead(s); misses != wantMisses {
			t.Fatalf("%s: %d misses in a row, want %d", what, misses, wantMisses)
		}
		wantGroup(t, groups, what, map[int]string{0: "ahead", 1: "ahead_missed"}[wantMisses])
		return a
	}
	usage := func() (queued int, round int64) {
		t.Helper()
		if err := s.Pool().QueryRow(ctx, `SELECT queued, synthesis_round FROM accounts WHERE id = $1`, p.AccountID).Scan(&queued, &round); err != nil {
			t.Fatal(err)
		}
		return queued, round
	}
	// skipOne runs the group that a miss sends the long way.
	skipOne := func() {
		t.Helper()
		if _, created, err := create(""); err != nil || !created {
			t.Fatalf("created %v, %v", created, err)
		}
		wantGroup(t, groups, "the group after a miss", "read")
	}

	if _, created, err := create(""); err != nil || !created {
		t.Fatalf("first create: created %v, %v", created, err)
	}
	wantGroup(t, groups, "first create", "read")
	wantPlanned("nothing changed", 0)

	// A worker finished two audios of the account.
	if _, err := s.Pool().Exec(ctx, `UPDATE accounts SET queued = queued - 2 WHERE id = $1`, p.AccountID); err != nil {
		t.Fatal(err)
	}
	wantPlanned("usage changed", 1)
	if queued, _ := usage(); queued != n-2 {
		t.Fatalf("queued = %d after %d creates and 2 done, want %d", queued, n, n-2)
	}
	skipOne()
	wantPlanned("after the miss", 0)

	// The queue's head moved on: the next job's round counts from it.
	_, before := usage()
	rec.SetSynthesisHead(before + 100)
	wantPlanned("head moved", 1)
	if rounds := rec.Rounds(); rounds[len(rounds)-1] != before+100 {
		t.Fatalf("round %d after the head moved to %d (rounds %v)", rounds[len(rounds)-1], before+100, rounds)
	}
	skipOne()
	wantPlanned("after the head moved", 0)

	// Another node created the external ID this create names: it updates.
	theirs := &narrator.Audio{ProjectID: p.ID, ExternalID: "X", Title: "Theirs", Body: "B", Author: "A"}
	if _, err := other.CreateAudio(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	got, created, err := create("X")
	if err != nil || created || got.ID != theirs.ID {
		t.Fatalf("create of a taken external ID: created %v, audio %d, %v; want an update of audio %d", created, got.ID, err, theirs.ID)
	}
	if _, misses := postgres.PlanAhead(s); misses != 1 {
		t.Fatalf("%d misses in a row after an external ID was taken, want 1", misses)
	}
	wantGroup(t, groups, "create of a taken external ID", "ahead_missed")
	skipOne()
	wantPlanned("after the update", 0)

	// The key was revoked: the create fails as AuthorizeProject would.
	if err := s.RevokeAPIKey(ctx, p.AccountID, key.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = create("")
	if code := narrator.ErrorCode(err); code != narrator.EUNAUTHORIZED {
		t.Fatalf("create with a revoked key: %v (code %q), want %q", err, code, narrator.EUNAUTHORIZED)
	}
	wantGroup(t, groups, "create with a revoked key", "ahead_missed")

	// Nothing a miss sent was written: the audios created, and X.
	if got := audioRows(t, s.Pool(), p.ID); got != n+1 {
		t.Fatalf("%d audios stored after %d creates and X, want %d", got, n, n+1)
	}
	// A job for each audio created, and one for the update of X.
	if got := len(rec.Synthesized()); got != n+1 {
		t.Fatalf("%d synthesis jobs after %d creates and an update, want %d", got, n, n+1)
	}
}

// wantGroup checks that exactly one group was recorded in groups since the
// last check, as plan.
func wantGroup(t *testing.T, groups *pgtest.Groups, what, plan string) {
	t.Helper()
	if got := groups.Take(); len(got) != 1 || got[0] != plan {
		t.Fatalf("%s: groups recorded as %q, want one %q", what, got, plan)
	}
}
