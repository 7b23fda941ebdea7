package sqlite

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// benchBody is a 1,000-word article body (about 6 KB).
var benchBody = strings.Repeat("The quick brown fox jumps over the lazy dog again. ", 100)

// mustBenchProject returns a store with an account and a project.
func mustBenchProject(tb testing.TB) (*Store, *narrator.Project) {
	tb.Helper()
	s := mustOpen(tb, withJobs(recorderJobs{&storetest.Recorder{}}))
	return s, mustProject(tb, s)
}

func BenchmarkCreateAudio(b *testing.B) {
	s, p := mustBenchProject(b)
	ctx := b.Context()
	i := 0
	for b.Loop() {
		i++
		a := &narrator.Audio{ProjectID: p.ID, Title: "Title", Body: benchBody, Author: "Ann",
			ExternalID: fmt.Sprintf("article-%d", i), Metadata: map[string]string{"section": "news"}}
		if _, err := s.CreateAudio(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListAudios(b *testing.B) {
	s, p := mustBenchProject(b)
	ctx := b.Context()
	const total = 10_000
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	s.Now = func() time.Time { n++; return start.Add(time.Duration(n) * time.Second) }
	for i := 0; i < total; i++ {
		a := &narrator.Audio{ProjectID: p.ID, Title: "Title", Body: benchBody, ExternalID: fmt.Sprintf("a%d", i)}
		if _, err := s.CreateAudio(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name  string
		page  int
		since time.Time
	}{
		{"page1", 1, time.Time{}},
		{"page100", 100, time.Time{}},
		{"page200", 200, time.Time{}},
		{"since/page1", 1, start.Add(total / 2 * time.Second)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				list, err := s.ListAudios(ctx, p.ID, bc.since, bc.page, 50)
				if err != nil {
					b.Fatal(err)
				}
				if len(list) != 50 || len(list[0].Media) != 2 {
					b.Fatalf("listed %d audios", len(list))
				}
			}
		})
	}
}

func BenchmarkFindAudio(b *testing.B) {
	s, p := mustBenchProject(b)
	a := &narrator.Audio{ProjectID: p.ID, Body: benchBody, ExternalID: "ext"}
	if _, err := s.CreateAudio(b.Context(), a); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.FindAudio(b.Context(), p.ID, "ext"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthenticateAPIKey(b *testing.B) {
	s, p := mustBenchProject(b)
	hash := []byte("0123456789abcdef0123456789abcdef")
	if _, err := s.CreateAPIKey(b.Context(), p.AccountID, hash, "nk_"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.AuthenticateAPIKey(b.Context(), hash); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreates compares concurrent creates (run it with -cpu 16 for 16
// callers), each an audio, its media and its River job, with the bare
// baseline of the same database: a transaction inserting one row of the
// same body on the writer, from as many callers. bench/api.sh prints their
// ratio.
func BenchmarkCreates(b *testing.B) {
	ctx := b.Context()
	s := mustOpenQueue(b)
	p := mustProject(b, s)
	const body = "Report 1, part 1: the council met on a quiet evening and agreed on a plan for the harbour."
	if _, err := s.writer.ExecContext(ctx, `CREATE TABLE bare (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	b.Run("bare", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tx, err := s.writer.BeginTx(ctx, nil)
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO bare (body) VALUES (?)`, body); err != nil {
					b.Error(err)
				}
				if err := commit(tx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	var n atomic.Int64
	b.Run("store", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				a := &narrator.Audio{ProjectID: p.ID, Title: "Load", Body: body, ExternalID: fmt.Sprintf("c%d", n.Add(1))}
				if _, err := s.CreateAudio(ctx, a); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkCreatesSynchronous compares concurrent creates (run it with -cpu
// 16 for 16 callers), each an audio, its media and its River job, with
// synchronous=FULL (the store's setting: the WAL is fsynced at every
// commit) and with synchronous=NORMAL (the WAL is fsynced only at
// checkpoints), in the same run. Creates commit in groups, so one fsync
// serves every create of a group. Run it on a real disk, not a tmpfs:
//
//	go test ./internal/sqlite -run '^$' -bench CreatesSynchronous -cpu 1,16 -count 3
//
// On a busy machine, alternate the two in rounds (docs/operations.md, "Durability").
func BenchmarkCreatesSynchronous(b *testing.B) {
	for _, mode := range []string{"NORMAL", "FULL"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			s := mustOpenQueue(b)
			// The writer pool is one connection that lives as long as the
			// store, so the pragma holds for every create below.
			if _, err := s.writer.ExecContext(ctx, "PRAGMA synchronous="+mode); err != nil {
				b.Fatal(err)
			}
			p := mustProject(b, s)
			var n atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					a := &narrator.Audio{ProjectID: p.ID, Title: "Load", Body: "The council met on a quiet evening and agreed on a plan for the harbour.", ExternalID: fmt.Sprintf("c%d", n.Add(1))}
					if _, err := s.CreateAudio(ctx, a); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
		})
	}
}
