package postgres_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// TestAnalyzeNew: on a new database, whose audios autovacuum has not yet
// analyzed, a store gathers statistics on them once its groups have
// created analyzeAfter audios, and not before.
func TestAnalyzeNew(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	s := mustOpen(t, url, withJobs(recorderJobs{&storetest.Recorder{}}))
	postgres.SetAnalyzeAfter(s, 20)
	p := mustProject(t, s)
	analyzed := func() bool {
		t.Helper()
		var n float64
		if err := s.Pool().QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'audios'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n >= 0
	}
	create := func(from, to int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, to-from)
		for i := from; i < to; i++ {
			wg.Go(func() {
				_, err := s.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: fmt.Sprint(i), Title: "T", Body: "B", Author: "A"})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	create(0, 19)
	if analyzed() {
		t.Fatal("the audios were analyzed after 19 creates, before 20")
	}
	create(19, 25)
	// The store analyzes in the background.
	eventually(t, "the audios have statistics after 25 creates", analyzed)
}

// TestGroupRunsGenericPlans checks that a group's transaction runs the
// generic plans of its insert and of its draw of IDs, which PostgreSQL
// would otherwise plan anew at every run. The store has one connection, so
// pg_prepared_statements shows that connection's statements.
func TestGroupRunsGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.NewDatabase(t, migrated)
	s := mustOpen(t, url+"&pool_max_conns=1", withJobs(recorderJobs{&storetest.Recorder{}}))
	p := mustProject(t, s)
	const runs = 8 // PostgreSQL tries custom plans for a statement's first five runs
	for i := range runs {
		if _, err := s.CreateAudio(ctx, &narrator.Audio{ProjectID: p.ID, ExternalID: fmt.Sprint(i), Title: "T", Body: "B", Author: "A"}); err != nil {
			t.Fatal(err)
		}
	}
	// Every group inserts; the store draws IDs ahead, in chunks, so a
	// draw runs once or more.
	for like, want := range map[string]int64{"%INSERT INTO media%": runs, "%nextval%": 0} {
		var generic, custom int64
		if err := s.Pool().QueryRow(ctx, `SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
			FROM pg_prepared_statements WHERE statement LIKE $1`, like).Scan(&generic, &custom); err != nil {
			t.Fatal(err)
		}
		if custom != 0 || generic == 0 || want != 0 && generic != want {
			t.Errorf("statement like %q: %d generic and %d custom plans in %d creates, want only generic ones (%d)", like, generic, custom, runs, want)
		}
	}
}
