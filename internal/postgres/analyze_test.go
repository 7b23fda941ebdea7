package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

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
	for deadline := time.Now().Add(10 * time.Second); !analyzed(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the audios have no statistics 10 s after 25 creates")
		}
	}
}
