package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// Database is one new database, not migrated, for the tests of what spans
// stores and transactions: migrations, several stores (processes or nodes)
// on one database, and jobs committed with the rows that need them.
type Database struct {
	// Open opens another store on the database, as another process or
	// node would, without migrating it (a store is used once Migrate has
	// run, which every process does: mustMigrated), with now as its clock, and closes
	// it at the test's cleanup. The store inserts each job it enqueues, in
	// its own transaction, as a row of a job table (JobRow formats it) and
	// then returns rec.Record(job), so that rec can fail the insert and with
	// it the transaction. With a nil rec, the store has no job inserter.
	Open func(t *testing.T, now func() time.Time, rec *Recorder) SchemaStore
	// CommittedJobs returns the rows of the job table, oldest first: the
	// jobs that were committed.
	CommittedJobs func(t *testing.T) []string
	// CountRows returns how many rows a table of the store's schema has.
	CountRows func(t *testing.T, table string) int
	// RecordMigration records that a migration of the given version was
	// applied, as a newer binary would, without the store.
	RecordMigration func(t *testing.T, version int)
}

// NewDatabaseFunc returns a new database for one test, with the job table
// of Database.Open already in it. It should register its cleanup with
// t.Cleanup.
type NewDatabaseFunc func(t *testing.T) Database

// JobRow formats a job as the job table of Database keeps it.
func JobRow(job narrator.Job) (string, error) {
	switch j := job.(type) {
	case narrator.SynthesizeJob:
		return fmt.Sprintf("%s %d/%d", j.JobKind(), j.AudioID, j.Revision), nil
	case narrator.DeleteMediaJob:
		return j.JobKind() + " " + strings.Join(j.Keys, ","), nil
	case narrator.WebhookJob:
		return fmt.Sprintf("%s %d", j.JobKind(), j.DeliveryID), nil
	default:
		return "", fmt.Errorf("storetest: unknown job %T", job)
	}
}

// RunDatabase runs the suite's tests of stores on shared databases, each
// test on databases of its own, in parallel.
func RunDatabase(t *testing.T, newDB NewDatabaseFunc) {
	for _, tt := range databaseTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newDB(t))
		})
	}
}

var databaseTests = []struct {
	name string
	fn   func(t *testing.T, db Database)
}{
	{"Ping", func(t *testing.T, db Database) {
		ctx := t.Context()
		st := db.Open(t, time.Now, nil)
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := st.Ping(ctx); err != nil {
			t.Fatalf("Ping on an open store: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Ping(ctx); err == nil {
			t.Fatal("Ping on a closed store: no error")
		}
	}},
	{"Migrate", func(t *testing.T, db Database) {
		ctx := t.Context()
		stores := []SchemaStore{db.Open(t, time.Now, nil), db.Open(t, time.Now, nil), db.Open(t, time.Now, nil)}
		if ok, err := stores[0].SchemaCurrent(ctx); err != nil || ok {
			t.Fatalf("SchemaCurrent on a new database = %v, %v; want false, nil", ok, err)
		}
		// Nodes starting together migrate at once.
		var wg sync.WaitGroup
		errs := make([]error, len(stores))
		for i, s := range stores {
			wg.Go(func() { errs[i] = s.Migrate(ctx) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("concurrent Migrate: %v", err)
		}
		if err := stores[0].Migrate(ctx); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
		for i, s := range stores {
			if ok, err := s.SchemaCurrent(ctx); err != nil || !ok {
				t.Fatalf("store %d: SchemaCurrent after Migrate = %v, %v; want true, nil", i, ok, err)
			}
		}
		mustAccount(t, stores[1], "Acme")

		// A migration this binary does not know is reported.
		db.RecordMigration(t, 9999)
		if _, err := stores[2].SchemaCurrent(ctx); err == nil || !strings.Contains(err.Error(), "9999") {
			t.Fatalf("SchemaCurrent with a future migration: err = %v, want one naming 9999", err)
		}
	}},
	{"JobsCommittedWithRows", func(t *testing.T, db Database) {
		ctx := t.Context()
		rec := &Recorder{}
		s := mustMigrated(t, db, time.Now, rec)
		p := mustProject(t, s)

		// Without a job inserter, a write that needs a job is refused.
		bare := db.Open(t, time.Now, nil)
		if _, err := bare.CreateAudio(ctx, newAudio(p.ID, "bare")); err == nil {
			t.Fatal("CreateAudio without a job inserter succeeded")
		}

		a := mustAudio(t, s, p.ID, "kept")
		// The job row is written, then the enqueue fails: neither stays.
		rec.FailWith(errBroken)
		if _, err := s.CreateAudio(ctx, newAudio(p.ID, "lost")); err == nil {
			t.Fatal("CreateAudio with a failing enqueuer succeeded")
		}
		if _, err := s.UpdateAudio(ctx, p.ID, "kept", narrator.AudioUpdate{Body: ptr("Lost.")}); err == nil {
			t.Fatal("UpdateAudio with a failing enqueuer succeeded")
		}
		rec.FailWith(nil)
		keys := mustFinish(t, s, a, "v1")
		if _, err := s.DeleteAudio(ctx, p.ID, "kept"); err != nil {
			t.Fatal(err)
		}
		want := []string{
			fmt.Sprintf("synthesize_audio %d/1", a.ID),
			fmt.Sprintf("delete_media %s,%s", keys[narrator.ContentTypeMP3], keys[narrator.ContentTypeM3U8]),
		}
		wantEqual(t, "committed jobs", db.CommittedJobs(t), want)
		if n := db.CountRows(t, "audios"); n != 1 {
			t.Errorf("%d audio rows, want 1: a failed create must leave none", n)
		}
		if got := mustProjectCount(t, s, p); got != 0 {
			t.Errorf("AudioCount = %d, want 0", got)
		}
	}},
	{"ExpiredSessionsRemoved", func(t *testing.T, db Database) {
		clock := NewClock(epoch)
		s := mustMigrated(t, db, clock.Now, &Recorder{})
		acc := mustAccount(t, s, "Acme")
		ed := mustUser(t, s, acc.ID, "ed@acme.test")
		ann := mustUser(t, s, acc.ID, "ann@acme.test")
		mustSession(t, s, ed.ID, "short", epoch.Add(time.Minute))
		mustSession(t, s, ed.ID, "long", epoch.Add(time.Hour))
		clock.Advance(time.Minute)
		// Creating a session removes expired ones, of every user.
		mustSession(t, s, ann.ID, "new", epoch.Add(time.Hour))
		if n := db.CountRows(t, "sessions"); n != 2 {
			t.Errorf("%d sessions, want 2 (the expired one removed)", n)
		}
	}},
	{"ConcurrentWriters", func(t *testing.T, db Database) {
		ctx := t.Context()
		rec := &Recorder{}
		s1, s2 := mustMigrated(t, db, time.Now, rec), mustMigrated(t, db, time.Now, rec)
		p := mustProject(t, s1)
		const workers, each = 6, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers*each*3)
		for w := range workers {
			s := []SchemaStore{s1, s2}[w%2]
			wg.Go(func() {
				for i := range each {
					a := newAudio(p.ID, fmt.Sprintf("w%d-%d", w, i))
					if _, err := s.CreateAudio(ctx, a); err != nil {
						errs <- err
						continue
					}
					if _, err := s.UpdateAudio(ctx, p.ID, a.ExternalID, narrator.AudioUpdate{Title: ptr("T")}); err != nil {
						errs <- err
					}
					if _, err := s.ListAudios(ctx, p.ID, time.Time{}, 1, 20); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := mustProjectCount(t, s2, p); got != workers*each {
			t.Errorf("AudioCount = %d, want %d", got, workers*each)
		}
		if n := len(rec.Synthesized()); n != workers*each*2 {
			t.Errorf("%d synthesis jobs, want %d", n, workers*each*2)
		}
	}},
	{"ConcurrentCreatesOfOneExternalID", func(t *testing.T, db Database) {
		ctx := t.Context()
		rec := &Recorder{}
		s1, s2 := mustMigrated(t, db, time.Now, rec), mustMigrated(t, db, time.Now, rec)
		p := mustProject(t, s1)
		// Every node receives the same article at once: one creates it,
		// the others find it and change nothing.
		const n = 8
		var wg sync.WaitGroup
		created := make([]bool, n)
		errs := make([]error, n)
		audios := make([]*narrator.Audio, n)
		for i := range n {
			s := []SchemaStore{s1, s2}[i%2]
			wg.Go(func() {
				audios[i] = newAudio(p.ID, "same")
				created[i], errs[i] = s.CreateAudio(ctx, audios[i])
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		var made int
		for i := range n {
			if created[i] {
				made++
			}
			if audios[i].ID != audios[0].ID {
				t.Errorf("create %d returned audio %d, create 0 audio %d", i, audios[i].ID, audios[0].ID)
			}
		}
		if made != 1 {
			t.Errorf("%d creates reported created, want 1", made)
		}
		if got := mustProjectCount(t, s2, p); got != 1 {
			t.Errorf("AudioCount = %d, want 1", got)
		}
		wantEqual(t, "synthesis jobs", rec.Synthesized(), []SynthesizeCall{{audios[0].ID, 1}})

		// Two audios taking one external ID at once: one gets it, the
		// other is told the ID is taken.
		a, b := mustAudio(t, s1, p.ID, "a"), mustAudio(t, s1, p.ID, "b")
		for round := range 5 {
			ext := fmt.Sprintf("taken-%d", round)
			var wg sync.WaitGroup
			var errA, errB error
			wg.Go(func() {
				_, errA = s1.UpdateAudio(ctx, p.ID, itoa(a.ID), narrator.AudioUpdate{ExternalID: ptr(ext)})
			})
			wg.Go(func() {
				_, errB = s2.UpdateAudio(ctx, p.ID, itoa(b.ID), narrator.AudioUpdate{ExternalID: ptr(ext)})
			})
			wg.Wait()
			if (errA == nil) == (errB == nil) {
				t.Fatalf("round %d: errors %v and %v, want exactly one", round, errA, errB)
			}
			wantCode(t, errors.Join(errA, errB), narrator.EINVALID)
		}
	}},
}

// mustMigrated opens a store on db and migrates the database.
func mustMigrated(t *testing.T, db Database, now func() time.Time, rec *Recorder) SchemaStore {
	t.Helper()
	s := db.Open(t, now, rec)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}
