package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

var concurrentTests = []test{
	{"Creates", func(t *testing.T, b *bundle) {
		// Many creates at once, as a busy API makes them: every one is
		// committed exactly once with exactly one job, and a create that
		// fails (a missing project) fails alone, whatever store groups
		// them into transactions.
		p := mustProject(t, b.store)
		const n = 60
		audios := make([]*narrator.Audio, n)
		for i := range audios {
			audios[i] = newAudio(p.ID, fmt.Sprintf("c%d", i))
			switch i % 6 {
			case 0:
				audios[i].ProjectID = p.ID + 1000
			case 1:
				audios[i].ExternalID = ""
			}
		}
		out := createAll(t, b.store, audios)
		var want []int64
		for i, o := range out {
			if i%6 == 0 {
				wantCode(t, o.err, narrator.ENOTFOUND)
				continue
			}
			if o.err != nil || !o.created || o.a.ID == 0 || len(o.a.Media) != 2 {
				t.Fatalf("create %d = %v, %v, %+v; want created with 2 media", i, o.created, o.err, o.a)
			}
			want = append(want, o.a.ID)
		}
		slices.Sort(want)
		if len(slices.Compact(slices.Clone(want))) != len(want) {
			t.Fatalf("audio IDs %v repeat", want)
		}
		list, err := b.store.ListAudios(t.Context(), p.ID, time.Time{}, 1, 1000)
		if err != nil {
			t.Fatal(err)
		}
		got := ids(list)
		slices.Sort(got)
		wantEqual(t, "stored audio IDs", got, want)
		paged := pagedIDs(t, b.store, p.ID, time.Time{}, 7, 2+n/7)
		slices.Sort(paged)
		wantEqual(t, "audio IDs on pages of 7, each once", paged, want)
		var jobs []int64
		for _, c := range b.rec.Synthesized() {
			jobs = append(jobs, c.AudioID)
		}
		slices.Sort(jobs)
		wantEqual(t, "synthesis jobs", jobs, want)
		if got := mustProjectCount(t, b.store, p); got != len(want) {
			t.Errorf("AudioCount = %d, want %d", got, len(want))
		}
	}},
	{"CreatesAndUpdates", func(t *testing.T, b *bundle) {
		// Creates at once, half of them naming the external ID of an
		// audio already stored: those update it (created false, the new
		// title kept), the others create, and the audio count and the
		// account's queue count only what was created, whatever the
		// stores' groups.
		p := mustProject(t, b.store)
		const n = 40
		before := map[string]int64{}
		for i := range n / 2 {
			ext := fmt.Sprintf("old%d", i)
			before[ext] = mustAudio(t, b.store, p.ID, ext).ID
		}
		audios := make([]*narrator.Audio, n)
		for i := range audios {
			audios[i] = newAudio(p.ID, fmt.Sprintf("new%d", i/2))
			if i%2 == 0 {
				audios[i].ExternalID = fmt.Sprintf("old%d", i/2)
			}
			audios[i].Title = fmt.Sprintf("Title %d", i)
		}
		out := createAll(t, b.store, audios)
		for i, o := range out {
			if o.err != nil {
				t.Fatalf("create %d (%s): %v", i, o.a.ExternalID, o.err)
			}
			old, isOld := before[o.a.ExternalID]
			if o.created == isOld || (isOld && o.a.ID != old) || o.a.Title != fmt.Sprintf("Title %d", i) {
				t.Errorf("create %d (%s) = audio %d created %v titled %q; stored before: %v (audio %d)",
					i, o.a.ExternalID, o.a.ID, o.created, o.a.Title, isOld, old)
			}
			if got := mustFindAudio(t, b.store, p.ID, o.a.ExternalID); got.Title != o.a.Title {
				t.Errorf("audio %s titled %q, want %q", o.a.ExternalID, got.Title, o.a.Title)
			}
		}
		if got := mustProjectCount(t, b.store, p); got != n {
			t.Errorf("AudioCount = %d, want %d", got, n)
		}
		u, err := b.store.AccountUsage(t.Context(), p.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		if u.Queued != n {
			t.Errorf("queued = %d, want %d: an update of a queued audio queues nothing more", u.Queued, n)
		}
	}},
	{"SameExternalID", func(t *testing.T, b *bundle) {
		// Creates of one external ID at once make one audio; every
		// answer that is not an error is that audio.
		p := mustProject(t, b.store)
		const n = 20
		audios := make([]*narrator.Audio, n)
		for i := range audios {
			audios[i] = newAudio(p.ID, "same")
		}
		var id int64
		for i, o := range createAll(t, b.store, audios) {
			if o.err != nil {
				// PostgreSQL may refuse a create racing another's insert.
				wantCode(t, o.err, narrator.ECONFLICT)
				continue
			}
			if id == 0 {
				id = o.a.ID
			}
			if o.a.ID != id {
				t.Errorf("create %d gave audio %d, another %d", i, o.a.ID, id)
			}
		}
		if id == 0 {
			t.Fatal("no create succeeded")
		}
		if got := mustProjectCount(t, b.store, p); got != 1 {
			t.Errorf("AudioCount = %d, want 1", got)
		}
	}},
}

// createOutcome is what CreateAudio made of an audio (a, filled in) and
// returned.
type createOutcome struct {
	a       *narrator.Audio
	created bool
	err     error
}

// createAll creates the audios at once, one goroutine each, and returns
// the outcomes in their order.
func createAll(t *testing.T, s Store, audios []*narrator.Audio) []createOutcome {
	out := make([]createOutcome, len(audios))
	var wg sync.WaitGroup
	for i, a := range audios {
		wg.Go(func() {
			created, err := s.CreateAudio(t.Context(), a)
			out[i] = createOutcome{a, created, err}
		})
	}
	wg.Wait()
	return out
}
