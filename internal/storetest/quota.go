package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator"
)

// mustFillQueue creates n audios of an account, spread over its projects,
// and returns them.
func mustFillQueue(tb testing.TB, s Store, projects []*narrator.Project, n int) []*narrator.Audio {
	tb.Helper()
	out := make([]*narrator.Audio, n)
	for i := range n {
		out[i] = mustAudio(tb, s, projects[i%len(projects)].ID, fmt.Sprintf("fill-%d", i))
	}
	return out
}

// wantUsage fails unless the account's queued count and media bytes are
// these.
func wantUsage(tb testing.TB, s Store, accountID int64, queued int, bytes int64) {
	tb.Helper()
	u, err := s.AccountUsage(tb.Context(), accountID)
	if err != nil {
		tb.Fatalf("AccountUsage(%d): %v", accountID, err)
	}
	if u.Queued != queued || u.MediaBytes != bytes {
		tb.Fatalf("usage of account %d: %d queued, %d bytes; want %d and %d", accountID, u.Queued, u.MediaBytes, queued, bytes)
	}
}

var quotaTests = []test{
	{"Usage", func(t *testing.T, b *bundle) {
		// Every change of an audio moves its account's usage as
		// narrator.UsageDelta says, over all the account's projects.
		p := mustProject(t, b.store)
		q := mustProjectOf(t, b.store, p.AccountID)
		other := mustProject(t, b.store)
		acc := p.AccountID
		wantUsage(t, b.store, acc, 0, 0)
		mustAudio(t, b.store, p.ID, "a")
		c := mustAudio(t, b.store, q.ID, "c")
		mustAudio(t, b.store, other.ID, "o")
		wantUsage(t, b.store, acc, 2, 0)
		// A create by external ID of a queued audio is an update: no more.
		again := newAudio(p.ID, "a")
		again.Body = "Another body."
		if _, err := b.store.CreateAudio(t.Context(), again); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, b.store, acc, 2, 0)
		a := mustFindAudio(t, b.store, p.ID, "a")
		keys := mustFinish(t, b.store, a, "one")
		bytesA := rendering(keys, 1).Bytes
		sizeA := bytesA[narrator.ContentTypeMP3] + bytesA[narrator.ContentTypeM3U8]
		wantUsage(t, b.store, acc, 1, sizeA)
		// A new revision queues it again and keeps its old files counted
		// until the new ones replace them.
		if _, err := b.store.ResynthesizeAudio(t.Context(), p.ID, "a"); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, b.store, acc, 2, sizeA)
		a = mustFindAudio(t, b.store, p.ID, "a")
		keys = mustFinish(t, b.store, a, "second")
		bytesA = rendering(keys, 1).Bytes
		sizeA = bytesA[narrator.ContentTypeMP3] + bytesA[narrator.ContentTypeM3U8]
		wantUsage(t, b.store, acc, 1, sizeA)
		if err := b.store.FailAudio(t.Context(), c.ID, c.Revision, "no"); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, b.store, acc, 0, sizeA)
		// Failing again, or a stale failure, moves nothing.
		if err := b.store.FailAudio(t.Context(), c.ID, c.Revision, "no"); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, b.store, acc, 0, sizeA)
		body := "Changed."
		if _, err := b.store.UpdateAudio(t.Context(), q.ID, "c", narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, b.store, acc, 1, sizeA)
		// A pronunciation rule that re-queues audios counts them too.
		if err := b.store.SetPronunciation(t.Context(), &narrator.Pronunciation{ProjectID: p.ID, Phrase: "body", Say: "bodies"}); err != nil {
			t.Fatal(err)
		}
		rule := narrator.ResynthesisJob{ProjectID: p.ID, Phrase: "body"}
		ids, err := b.store.ResynthesisCandidates(t.Context(), rule)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.ResynthesizeAudios(t.Context(), rule, ids); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, b.store, acc, 2, sizeA)
		for _, ref := range []string{"a"} {
			if _, err := b.store.DeleteAudio(t.Context(), p.ID, ref); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.store.DeleteAudio(t.Context(), q.ID, "c"); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, b.store, acc, 0, 0)
		wantUsage(t, b.store, other.AccountID, 1, 0)
	}},
	{"QueueLimit", func(t *testing.T, b *bundle) {
		// An account holds at most MaxQueued unprocessed audios, over all
		// its projects; the next create is refused and stores nothing. It
		// does not touch other accounts, and a publication frees a place.
		acc := mustAccount(t, b.store, "Busy")
		projects := []*narrator.Project{mustProjectOf(t, b.store, acc.ID), mustProjectOf(t, b.store, acc.ID)}
		audios := mustFillQueue(t, b.store, projects, SuiteLimits.MaxQueued)
		jobs := len(b.rec.Synthesized())

		_, err := b.store.CreateAudio(t.Context(), newAudio(projects[1].ID, "one-too-many"))
		wantCode(t, err, narrator.EQUEUEFULL)
		if got := len(b.rec.Synthesized()); got != jobs {
			t.Errorf("%d synthesis jobs after a refused create, want %d", got, jobs)
		}
		if n := mustProjectCount(t, b.store, projects[1]); n != SuiteLimits.MaxQueued/2 {
			t.Errorf("project counts %d audios, want %d", n, SuiteLimits.MaxQueued/2)
		}
		if _, err := b.store.FindAudio(t.Context(), projects[1].ID, "one-too-many"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("refused audio: FindAudio = %v, want ENOTFOUND", err)
		}
		// Another account is not held back.
		mustAudio(t, b.store, mustProject(t, b.store).ID, "other")
		// A change to what an unprocessed audio says queues nothing more.
		body := "A new body."
		if _, err := b.store.UpdateAudio(t.Context(), audios[0].ProjectID, audios[0].ExternalID, narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatalf("update of a queued audio: %v", err)
		}
		// Once one is published, one more fits, and a processed audio
		// that needs new speech is refused while the account is full.
		audios[1] = mustFindAudio(t, b.store, audios[1].ProjectID, audios[1].ExternalID)
		mustFinish(t, b.store, audios[1], "done")
		mustAudio(t, b.store, projects[0].ID, "fits")
		_, err = b.store.UpdateAudio(t.Context(), audios[1].ProjectID, audios[1].ExternalID, narrator.AudioUpdate{Body: &body})
		wantCode(t, err, narrator.EQUEUEFULL)
		_, err = b.store.ResynthesizeAudio(t.Context(), audios[1].ProjectID, audios[1].ExternalID)
		wantCode(t, err, narrator.EQUEUEFULL)
		if got := mustFindAudio(t, b.store, audios[1].ProjectID, audios[1].ExternalID); got.State != narrator.StateProcessed {
			t.Errorf("refused update left state %q, want processed", got.State)
		}
		// A failure frees a place too.
		a := mustFindAudio(t, b.store, audios[2].ProjectID, audios[2].ExternalID)
		if err := b.store.FailAudio(t.Context(), a.ID, a.Revision, "no"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.UpdateAudio(t.Context(), audios[1].ProjectID, audios[1].ExternalID, narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatalf("update after a failure freed a place: %v", err)
		}
	}},
	{"QueueLimitConcurrent", func(t *testing.T, b *bundle) {
		// A burst of creates of one account never takes it past its limit.
		p := mustProject(t, b.store)
		const free, burst = 5, 30
		mustFillQueue(t, b.store, []*narrator.Project{p}, SuiteLimits.MaxQueued-free)
		var wg sync.WaitGroup
		created, refused := startBurst(t, &wg, b.store, burst, func(int) int64 { return p.ID })
		wg.Wait()
		if created.Load() != free || refused.Load() != burst-free {
			t.Errorf("%d created and %d refused, want %d and %d", created.Load(), refused.Load(), free, burst-free)
		}
		if n := mustProjectCount(t, b.store, p); n != SuiteLimits.MaxQueued {
			t.Errorf("project counts %d audios, want %d", n, SuiteLimits.MaxQueued)
		}
	}},
	{"QueueLimitConcurrentProjects", func(t *testing.T, b *bundle) {
		// A burst of creates in two projects of one account, with updates
		// of its queued audios among them, never takes it past its limit:
		// the account's usage is one, whatever store groups the creates
		// into transactions, and an update needs no place of its own.
		p := mustProject(t, b.store)
		other := mustProjectOf(t, b.store, p.AccountID)
		const free, burst, updates = 5, 30, 10
		mustFillQueue(t, b.store, []*narrator.Project{p}, SuiteLimits.MaxQueued-free)
		var wg sync.WaitGroup
		created, refused := startBurst(t, &wg, b.store, burst, func(i int) int64 { return []int64{p.ID, other.ID}[i%2] })
		for i := range updates {
			wg.Go(func() {
				a := newAudio(p.ID, fmt.Sprintf("fill-%d", i))
				a.Body = "A new body."
				if created, err := b.store.CreateAudio(t.Context(), a); err != nil || created {
					t.Errorf("update %d: created %v, %v", i, created, err)
				}
			})
		}
		wg.Wait()
		if created.Load() != free || refused.Load() != burst-free {
			t.Errorf("%d created and %d refused, want %d and %d", created.Load(), refused.Load(), free, burst-free)
		}
		wantUsage(t, b.store, p.AccountID, SuiteLimits.MaxQueued, 0)
		if n := mustProjectCount(t, b.store, p) + mustProjectCount(t, b.store, other); n != SuiteLimits.MaxQueued {
			t.Errorf("projects count %d audios, want %d", n, SuiteLimits.MaxQueued)
		}
	}},
	{"CreatesAndDeletes", func(t *testing.T, b *bundle) {
		// Creates and deletes of one account at once all succeed (on
		// PostgreSQL they lock the account's and the project's rows in the
		// same order), and leave its count exact.
		p := mustProject(t, b.store)
		const n = 20
		mustFillQueue(t, b.store, []*narrator.Project{p}, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if _, err := b.store.DeleteAudio(t.Context(), p.ID, fmt.Sprintf("fill-%d", i)); err != nil {
					t.Errorf("delete %d: %v", i, err)
				}
			})
			wg.Go(func() {
				if _, err := b.store.CreateAudio(t.Context(), newAudio(p.ID, fmt.Sprintf("new-%d", i))); err != nil {
					t.Errorf("create %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		wantUsage(t, b.store, p.AccountID, n, 0)
		if got := mustProjectCount(t, b.store, p); got != n {
			t.Errorf("project counts %d audios, want %d", got, n)
		}
	}},
	{"MediaQuota", func(t *testing.T, b *bundle) {
		// The bytes an account's published media take are counted when
		// they are published and deleted; once they fill the quota, changes
		// that would make more are refused.
		p := mustProject(t, b.store)
		other := mustProjectOf(t, b.store, p.AccountID)
		big := mustAudio(t, b.store, p.ID, "big")
		small := mustAudio(t, b.store, other.ID, "small")
		keys := func(a *narrator.Audio, tag string) map[string]string {
			return map[string]string{
				narrator.ContentTypeMP3:  fmt.Sprintf("%d/%s/audio.mp3", a.ID, tag),
				narrator.ContentTypeM3U8: fmt.Sprintf("%d/%s/audio.m3u8", a.ID, tag),
			}
		}
		r := rendering(keys(big, "a"), 1000)
		r.Bytes[narrator.ContentTypeMP3] = SuiteLimits.MaxMediaBytes - r.Bytes[narrator.ContentTypeM3U8] - 1
		if err := b.store.FinishAudio(t.Context(), big.ID, big.Revision, r); err != nil {
			t.Fatal(err)
		}
		// One byte below the quota: still room.
		mustAudio(t, b.store, other.ID, "room")
		mustFinish(t, b.store, small, "s")
		_, err := b.store.CreateAudio(t.Context(), newAudio(other.ID, "no-room"))
		wantCode(t, err, narrator.EQUOTA)
		body := "Something else."
		_, err = b.store.UpdateAudio(t.Context(), other.ID, "small", narrator.AudioUpdate{Body: &body})
		wantCode(t, err, narrator.EQUOTA)
		// Another account has its own quota.
		mustAudio(t, b.store, mustProject(t, b.store).ID, "elsewhere")
		// Finishing again replaces the old files' bytes rather than adding.
		if _, err := b.store.DeleteAudio(t.Context(), other.ID, "small"); err != nil {
			t.Fatal(err)
		}
		mustAudio(t, b.store, other.ID, "after-delete")
		if _, err := b.store.UpdateAudio(t.Context(), p.ID, "big", narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatal(err)
		}
		big = mustFindAudio(t, b.store, p.ID, "big")
		r = rendering(keys(big, "b"), 1000)
		r.Bytes[narrator.ContentTypeMP3] = SuiteLimits.MaxMediaBytes / 2
		if err := b.store.FinishAudio(t.Context(), big.ID, big.Revision, r); err != nil {
			t.Fatal(err)
		}
		half := mustAudio(t, b.store, other.ID, "half")
		// Another half fills it again; deleting the big audio makes room.
		r = rendering(keys(half, "h"), 1000)
		r.Bytes[narrator.ContentTypeMP3] = SuiteLimits.MaxMediaBytes / 2
		if err := b.store.FinishAudio(t.Context(), half.ID, half.Revision, r); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.CreateAudio(t.Context(), newAudio(other.ID, "full"))
		wantCode(t, err, narrator.EQUOTA)
		if _, err := b.store.DeleteAudio(t.Context(), p.ID, "big"); err != nil {
			t.Fatal(err)
		}
		mustAudio(t, b.store, other.ID, "room-again")
	}},
	{"FairRounds", func(t *testing.T, b *bundle) {
		// Each synthesis job gets its account's fair round
		// (narrator.FairRound), from the head of the queue, and the
		// account's next round is kept by the store.
		a := mustProject(t, b.store)
		c := mustProject(t, b.store)
		mustAudio(t, b.store, a.ID, "a1")
		mustAudio(t, b.store, a.ID, "a2")
		mustAudio(t, b.store, a.ID, "a3")
		b.rec.SetSynthesisHead(1) // a1 is under synthesis, a2 is next
		mustAudio(t, b.store, c.ID, "c1")
		mustAudio(t, b.store, a.ID, "a4")
		mustAudio(t, b.store, c.ID, "c2")
		wantEqual(t, "rounds", b.rec.Rounds(), []int64{0, 1, 2, 1, 3, 2})
		// An account whose audios are all done starts at the head again,
		// however far its last backlog reached.
		for _, ref := range []string{"a1", "a2", "a3", "a4"} {
			mustFinish(t, b.store, mustFindAudio(t, b.store, a.ID, ref), "p")
		}
		b.rec.SetSynthesisHead(2)
		mustAudio(t, b.store, a.ID, "a5")
		// A new revision of an audio is queued at the account's turn too.
		body := "Changed."
		if _, err := b.store.UpdateAudio(t.Context(), a.ID, "a1", narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatal(err)
		}
		rounds := b.rec.Rounds()
		wantEqual(t, "rounds after the backlog", rounds[len(rounds)-2:], []int64{2, 3})
	}},
}

// startBurst starts n concurrent creates on wg, the ith in project(i), and
// returns the counts of those created and of those refused for a full
// queue, final once wg is done. Any other outcome fails the test.
func startBurst(t *testing.T, wg *sync.WaitGroup, s Store, n int, project func(i int) int64) (created, refused *atomic.Int32) {
	created, refused = new(atomic.Int32), new(atomic.Int32)
	for i := range n {
		wg.Go(func() {
			_, err := s.CreateAudio(t.Context(), newAudio(project(i), fmt.Sprintf("burst-%d", i)))
			switch narrator.ErrorCode(err) {
			case "":
				created.Add(1)
			case narrator.EQUEUEFULL:
				refused.Add(1)
			default:
				t.Errorf("create %d: %v", i, err)
			}
		})
	}
	return created, refused
}
