package sqlite

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// Shape of BenchmarkReadCheck's database: tenants accounts, each with an
// API key and a project of audiosPerTenant audios.
const (
	benchTenants         = 8
	benchAudiosPerTenant = 400
)

// benchTenant is one account of BenchmarkReadCheck's database.
type benchTenant struct {
	project int64
	hash    []byte
	ids     []int64 // the project's audios, newest first
	ext     []string
}

// BenchmarkReadCheck compares the ways the read cache can tell that the
// database has not changed (issue 19; docs/architecture.md, "The read
// cache"), on the API's hot reads, in one run:
//
//   - walindex: the WAL-index header, read from the mapped -shm file (the
//     store's check);
//   - data_version: PRAGMA data_version, a prepared statement on the
//     cache's own pinned connection, which sees every other connection's
//     commits;
//   - counter: a count of the store's own commits, kept in memory: a lower
//     bound for any check, and wrong for a database that another process
//     (a `narrator` command) writes too;
//   - nocache: the cache off (Options.NoReadCache).
//
// The database has 8 tenants, each an account with an API key and a
// project of 400 audios of 1,000 words. Reads run in parallel, each for a
// tenant chosen at random and an audio (or a page) chosen by a Zipf law
// over the newest first, as readers favour new articles (each tenant's
// newest audio is about a fifth of its reads). The reader that makes
// every 1,000th read then writes, as a create beside the reads would: it
// changes the title of an audio chosen at random, a commit that empties
// the cache, and its time counts. It changes audios rather than creating
// them so that the database is the same for the last variant as for the
// first. The commits skip the fsync (synchronous NORMAL): the disk's
// latency is no part of a read. The machine's speed drifts: compare the
// variants of one run, by their ratios.
//
//	go test -run '^$' -bench ReadCheck -benchtime 2s -count 3 ./internal/sqlite
func BenchmarkReadCheck(b *testing.B) {
	ctx := b.Context()
	s := mustOpen(b, withJobs(recorderJobs{&storetest.Recorder{}}))
	if _, err := s.writer.ExecContext(ctx, "PRAGMA synchronous=NORMAL"); err != nil {
		b.Fatal(err)
	}
	tenants := seedReadCheck(b, s)
	dataVersion, err := s.cache.conn.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { dataVersion.Close() })
	var commits atomic.Uint64

	variants := []struct {
		name  string
		check func() (stamp, bool)
	}{
		{"walindex", s.cache.header},
		{"data_version", func() (stamp, bool) {
			var v int64
			if err := dataVersion.QueryRowContext(ctx).Scan(&v); err != nil {
				return stamp{}, false
			}
			return stamp{uint32(v), uint32(v >> 32)}, true
		}},
		{"counter", func() (stamp, bool) {
			n := commits.Load()
			return stamp{uint32(n), uint32(n >> 32)}, true
		}},
		{"nocache", nil},
	}
	// list reads the page of the i-th newest audio.
	list := func(t *benchTenant, i int) error {
		list, err := s.ListAudios(ctx, t.project, time.Time{}, 1+i/50, 50)
		if err == nil && len(list) == 0 {
			err = fmt.Errorf("page %d of project %d is empty", 1+i/50, t.project)
		}
		return err
	}
	ops := []struct {
		name string
		read func(t *benchTenant, i int) error
	}{
		{"authorize", func(t *benchTenant, _ int) error {
			_, err := s.AuthorizeProject(ctx, t.hash, t.project)
			return err
		}},
		{"find-id", func(t *benchTenant, i int) error {
			_, err := s.FindAudio(ctx, t.project, strconv.FormatInt(t.ids[i], 10))
			return err
		}},
		{"find-ext", func(t *benchTenant, i int) error {
			_, err := s.FindAudio(ctx, t.project, t.ext[i])
			return err
		}},
		{"list", func(t *benchTenant, i int) error {
			return list(t, i)
		}},
		{"request-get", func(t *benchTenant, i int) error {
			if _, err := s.AuthorizeProject(ctx, t.hash, t.project); err != nil {
				return err
			}
			_, err := s.FindAudio(ctx, t.project, strconv.FormatInt(t.ids[i], 10))
			return err
		}},
		{"request-list", func(t *benchTenant, i int) error {
			if _, err := s.AuthorizeProject(ctx, t.hash, t.project); err != nil {
				return err
			}
			return list(t, i)
		}},
	}
	const writeEvery = 1000
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			for _, v := range variants {
				b.Run(v.name, func(b *testing.B) {
					// Each variant starts on an empty WAL, which reads
					// search page by page, not on what the one before
					// it left.
					if _, err := s.writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
						b.Fatal(err)
					}
					s.cache.mu.Lock()
					s.cache.check, s.cache.off = v.check, v.check == nil
					s.cache.current = stamp{}
					clear(s.cache.projects)
					clear(s.cache.audios)
					clear(s.cache.pages)
					s.cache.size = 0
					s.cache.mu.Unlock()

					var writes atomic.Int64
					write := func(r *rand.Rand) error {
						t := &tenants[r.IntN(len(tenants))]
						title := fmt.Sprintf("Title %d", writes.Add(1))
						_, err := s.UpdateAudio(ctx, t.project, t.ext[r.IntN(len(t.ext))], narrator.AudioUpdate{Title: &title})
						commits.Add(1)
						return err
					}
					var reads, seeds atomic.Uint64
					b.ReportAllocs()
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						r := rand.New(rand.NewPCG(seeds.Add(1), 0))
						pick := rand.NewZipf(r, 1.1, 1, benchAudiosPerTenant-1)
						for pb.Next() {
							t := &tenants[r.IntN(len(tenants))]
							if err := op.read(t, int(pick.Uint64())); err != nil {
								b.Error(err)
								return
							}
							if reads.Add(1)%writeEvery == 0 {
								if err := write(r); err != nil {
									b.Error(err)
									return
								}
							}
						}
					})
				})
			}
		})
	}
}

// seedReadCheck fills s with BenchmarkReadCheck's tenants and their audios,
// creating in parallel so that creates commit in groups.
func seedReadCheck(b *testing.B, s *Store) []benchTenant {
	ctx := b.Context()
	tenants := make([]benchTenant, benchTenants)
	for i := range tenants {
		t := &tenants[i]
		acc := &narrator.Account{Name: fmt.Sprintf("Tenant %d", i)}
		if err := s.CreateAccount(ctx, acc); err != nil {
			b.Fatal(err)
		}
		p := &narrator.Project{AccountID: acc.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
		if err := s.CreateProject(ctx, p); err != nil {
			b.Fatal(err)
		}
		t.project = p.ID
		t.hash = fmt.Appendf(nil, "%032d", i)
		if _, err := s.CreateAPIKey(ctx, acc.ID, t.hash, "nk_"); err != nil {
			b.Fatal(err)
		}
		t.ids = make([]int64, benchAudiosPerTenant)
		t.ext = make([]string, benchAudiosPerTenant)
	}
	// The audios of each tenant are created in order, oldest first, so
	// that index benchAudiosPerTenant-1-j is the j-th created.
	var wg sync.WaitGroup
	errs := make(chan error, benchTenants)
	for i := range tenants {
		wg.Go(func() {
			t := &tenants[i]
			for j := range benchAudiosPerTenant {
				k := benchAudiosPerTenant - 1 - j
				t.ext[k] = fmt.Sprintf("t%d-a%d", i, j)
				a := &narrator.Audio{ProjectID: t.project, Title: "Title", Body: benchBody, Author: "Ann",
					ExternalID: t.ext[k], Metadata: map[string]string{"section": "news"}}
				if _, err := s.CreateAudio(ctx, a); err != nil {
					errs <- err
					return
				}
				t.ids[k] = a.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return tenants
}
