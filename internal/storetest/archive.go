package storetest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// ArchiveSizes are the project sizes BenchArchive measures, up to the
// largest that NARRATOR_BENCH_ARCHIVE allows (default 100,000, so that a
// plain -bench run stays short; bench/archive.sh sets 1,000,000).
var ArchiveSizes = []int{1_000, 100_000, 1_000_000}

// FillFunc adds the audios numbered from first to last (1-based, external
// IDs "bulk-N", processed, with both media) to a project by the store's
// own bulk SQL, keeping its audio_count right.
type FillFunc func(b *testing.B, projectID int64, first, last int)

// BenchArchive times the store reads behind the API's requests on one
// project as it grows: GET one audio (the project check and the audio, by
// ID and by external ID), list pages 1, 1,000 and 19,999 (each call a
// distinct request), the projects list with audio_count, and the project's
// podcast feed. Each size is a sub-benchmark; each reports its median as
// median-ns/op beside the mean.
func BenchArchive(b *testing.B, s Store, fill FillFunc) {
	largest := 100_000
	if v := os.Getenv("NARRATOR_BENCH_ARCHIVE"); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.Fatalf("NARRATOR_BENCH_ARCHIVE=%q: %v", v, err)
		}
		largest = int(n)
	}
	ctx := b.Context()
	p := mustProject(b, s)
	mustSaveFeed(b, s, newFeed(p.ID, feedToken('f')))
	have := 0
	for _, size := range ArchiveSizes {
		if size > largest {
			break
		}
		start := time.Now()
		fill(b, p.ID, have+1, size)
		b.Logf("filled to %d audios in %v", size, time.Since(start).Round(time.Millisecond))
		have = size
		mid := strconv.Itoa(size / 2)
		var byID string
		if a, err := s.FindAudio(ctx, p.ID, "bulk-"+mid); err != nil {
			b.Fatal(err)
		} else {
			byID = itoa(a.ID)
		}
		for _, op := range archiveOps(ctx, s, p, size, byID, "bulk-"+mid) {
			b.Run(fmt.Sprintf("audios=%d/%s", size, op.name), func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					if err := op.fn(); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/op")
			})
		}
	}
}

// archiveOp is one operation BenchArchive times.
type archiveOp struct {
	name string
	fn   func() error
}

// archiveOps returns the operations BenchArchive times on project p of size audios, where
// byID and externalID name the same audio.
func archiveOps(ctx context.Context, s Store, p *narrator.Project, size int, byID, externalID string) []archiveOp {
	get := func(ref string) func() error {
		return func() error {
			if _, err := s.FindProject(ctx, p.AccountID, p.ID); err != nil {
				return err
			}
			_, err := s.FindAudio(ctx, p.ID, ref)
			return err
		}
	}
	list := func(page, want int) func() error {
		calls := 0
		return func() error {
			// Each call a distinct request, so that no cache answers
			// it: a period that begins before every audio, a
			// microsecond later each time.
			calls++
			since := time.Unix(0, int64(calls)*int64(time.Microsecond))
			l, err := s.ListAudios(ctx, p.ID, since, page, 50)
			if err == nil && len(l) != want {
				err = fmt.Errorf("page %d has %d audios, want %d", page, len(l), want)
			}
			return err
		}
	}
	return []archiveOp{
		{"get_by_id", get(byID)},
		{"get_by_external_id", get(externalID)},
		{"list_page_1", list(1, 50)},
		{"list_page_1000", list(1000, min(50, max(0, size-999*50)))},
		{"list_page_19999", list(19_999, min(50, max(0, size-19_998*50)))},
		{"feed", func() error {
			c, err := s.FeedByToken(ctx, feedToken('f'), narrator.MaxFeedItems)
			if err == nil && len(c.Audios) != min(size, narrator.MaxFeedItems) {
				err = fmt.Errorf("feed has %d audios, want %d", len(c.Audios), min(size, narrator.MaxFeedItems))
			}
			return err
		}},
		{"list_projects", func() error {
			ps, err := s.ListProjects(ctx, p.AccountID)
			if err == nil && (len(ps) != 1 || ps[0].AudioCount != size) {
				err = fmt.Errorf("projects = %+v, want one of %d audios", ps, size)
			}
			return err
		}},
	}
}
