package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// copyTests copy one store made by newStore into another: the export and
// import methods of copy-data.
func copyTests(newStore NewStoreFunc) []test {
	target := copyTarget(func(t *testing.T, b *bundle) (Store, *Recorder) {
		t.Helper()
		rec := &Recorder{}
		return newStore(t, b.clock.Now, rec), rec
	})
	return []test{
		{"RoundTrip", target.roundTrip},
		{"Sources", target.sources},
		{"AgainIsNoOp", target.againIsNoOp},
		{"OtherData", target.otherData},
		{"BothMovedOn", target.bothMovedOn},
		{"FailedEnqueueStoresNothing", target.failedEnqueueStoresNothing},
		{"Invalid", target.invalid},
	}
}

// copyTarget returns a second, empty store on the bundle's clock, with a
// recorder of its own.
type copyTarget func(t *testing.T, b *bundle) (Store, *Recorder)

// roundTrip copies everything, with its IDs, times and counts; new rows on the target
// never reuse an ID.
func (target copyTarget) roundTrip(t *testing.T, b *bundle) {
	ctx := t.Context()
	src := mustCopySource(t, b)
	dst, rec := target(t, b)
	meta := mustExportMeta(t, b.store)
	if err := narrator.CheckCopyTarget(meta, mustExportMeta(t, dst)); err != nil {
		t.Fatalf("CheckCopyTarget(empty target): %v", err)
	}
	if err := dst.ImportMeta(ctx, meta); err != nil {
		t.Fatalf("ImportMeta: %v", err)
	}
	if got := mustCopyAudios(t, b.store, dst, 2); got != len(src.live) {
		t.Fatalf("inserted %d audios, want %d", got, len(src.live))
	}

	// Everything arrives with its IDs, times and counts, and the
	// target's counters stand where the source's do.
	wantEqual(t, "target export", mustExportMeta(t, dst), meta)
	wantEqual(t, "target audios", mustExportAll(t, dst), src.live)
	wantEqual(t, "synthesis jobs", rec.Synthesized(),
		[]SynthesizeCall{{AudioID: src.unprocessed.ID, Revision: src.unprocessed.Revision}})
	if got, err := dst.AuthenticateAPIKey(ctx, hashOf("key-live")); err != nil || got != src.account.ID {
		t.Errorf("AuthenticateAPIKey(live key) on the target = %d, %v; want %d", got, err, src.account.ID)
	}
	if c, err := dst.FeedByToken(ctx, feedToken('c'), 10); err != nil || c.Feed.ProjectID != src.project.ID || len(c.Audios) != 1 {
		t.Errorf("FeedByToken on the target = %+v, %v", c, err)
	}
	_, err := dst.AuthenticateAPIKey(ctx, hashOf("key-revoked"))
	wantCode(t, err, narrator.EUNAUTHORIZED)
	if u, err := dst.FindUserByEmail(ctx, "ed@acme.test"); err != nil || string(u.PasswordHash) != "bcrypt-hash" {
		t.Errorf("FindUserByEmail on the target = %+v, %v", u, err)
	}

	// New rows never reuse an ID, not even a deleted audio's.
	acc := mustAccount(t, dst, "New")
	if acc.ID <= meta.LastIDs.Account {
		t.Errorf("new account ID %d, want above %d", acc.ID, meta.LastIDs.Account)
	}
	a := mustAudio(t, dst, src.project.ID, "new")
	if a.ID <= src.deleted.ID || a.Media[0].ID <= meta.LastIDs.Media {
		t.Errorf("new audio %d with media %d; want above audio %d and media %d",
			a.ID, a.Media[0].ID, src.deleted.ID, meta.LastIDs.Media)
	}
	if p := mustProject(t, dst); p.ID <= meta.LastIDs.Project {
		t.Errorf("new project ID %d, want above %d", p.ID, meta.LastIDs.Project)
	}
	// Endpoints arrive with their secrets and failure clocks.
	if len(meta.Webhooks) != 2 || meta.Webhooks[0].FailingSince.IsZero() || meta.Webhooks[0].Secret == "" {
		t.Errorf("exported webhooks %+v; want two, the first failing", meta.Webhooks)
	}
	if h := mustWebhook(t, dst, src.project.ID); h.ID <= meta.LastIDs.Webhook {
		t.Errorf("new webhook ID %d, want above %d", h.ID, meta.LastIDs.Webhook)
	}
}

// sources copies a source's settings with its ID, and starts its state afresh.
func (target copyTarget) sources(t *testing.T, b *bundle) {
	ctx := t.Context()
	p := mustRSSProject(t, b.store)
	src := mustSource(t, b.store, p.ID, "https://example.com/feed.xml")
	now := b.clock.Now()
	if err := b.store.RecordRead(ctx, narrator.SourceRead{SourceID: src.ID, Created: 3, Seen: []narrator.SeenItem{{ExternalID: "feed-1:a", Hash: "h"}},
		State: narrator.SourceState{Status: narrator.SourceStatusOK, LastFetchAt: now, NextPollAt: now.Add(time.Hour), ETag: `"e"`}}); err != nil {
		t.Fatal(err)
	}
	dst, _ := target(t, b)
	meta := mustExportMeta(t, b.store)
	if err := dst.ImportMeta(ctx, meta); err != nil {
		t.Fatalf("ImportMeta: %v", err)
	}
	// The settings arrive with the ID; the state starts afresh, due
	// now, so that the first read follows the backfill rule.
	got, err := dst.Source(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *src
	want.State = narrator.SourceState{Status: narrator.SourceStatusNew, NextPollAt: b.clock.Now()}
	wantEqual(t, "copied feed", got, &want)
	if next := mustSource(t, dst, p.ID, "https://example.com/other.xml"); next.ID <= meta.LastIDs.Source {
		t.Errorf("new feed ID %d, want above %d", next.ID, meta.LastIDs.Source)
	}
}

// againIsNoOp copies again onto a target that moved on, and changes nothing.
func (target copyTarget) againIsNoOp(t *testing.T, b *bundle) {
	ctx := t.Context()
	src := mustCopySource(t, b)
	dst, rec := target(t, b)
	meta := mustExportMeta(t, b.store)
	if err := dst.ImportMeta(ctx, meta); err != nil {
		t.Fatalf("ImportMeta: %v", err)
	}
	mustCopyAudios(t, b.store, dst, 10)
	// The target moves on: it processes the unprocessed audio and
	// adds a project of a copied account.
	b.clock.Advance(time.Hour)
	mustFinish(t, dst, src.unprocessed, "target")
	mustProjectOf(t, dst, src.account.ID)
	before, beforeAudios := mustExportMeta(t, dst), mustExportAll(t, dst)

	if err := narrator.CheckCopyTarget(meta, before); err != nil {
		t.Fatalf("CheckCopyTarget(earlier copy): %v", err)
	}
	if err := dst.ImportMeta(ctx, meta); err != nil {
		t.Fatalf("ImportMeta again: %v", err)
	}
	if got := mustCopyAudios(t, b.store, dst, 10); got != 0 {
		t.Errorf("inserted %d audios the second time, want 0", got)
	}
	wantEqual(t, "target export", mustExportMeta(t, dst), before)
	wantEqual(t, "target audios", mustExportAll(t, dst), beforeAudios)
	if got := len(rec.Synthesized()); got != 1 {
		t.Errorf("%d synthesis jobs after two copies, want 1", got)
	}
}

// otherData refuses a target that holds other data under the same IDs.
func (target copyTarget) otherData(t *testing.T, b *bundle) {
	mustCopySource(t, b)
	dst, _ := target(t, b)
	meta := mustExportMeta(t, b.store)
	b.clock.Advance(time.Minute)
	mustAccount(t, dst, "Acme") // the same name and ID, but not the same account
	err := narrator.CheckCopyTarget(meta, mustExportMeta(t, dst))
	wantCode(t, err, narrator.ECONFLICT)
}

// bothMovedOn refuses, storing nothing of the batch, an audio whose ID the target gave
// another.
func (target copyTarget) bothMovedOn(t *testing.T, b *bundle) {
	ctx := t.Context()
	src := mustCopySource(t, b)
	dst, _ := target(t, b)
	if err := dst.ImportMeta(ctx, mustExportMeta(t, b.store)); err != nil {
		t.Fatalf("ImportMeta: %v", err)
	}
	mustCopyAudios(t, b.store, dst, 10)
	// After the copy, source and target each create an audio, which
	// get the same ID: the second copy must not take one for the
	// other, and stores nothing of its batch. A store may skip IDs
	// (PostgreSQL's draws them ahead), so the side behind creates
	// until both hold one ID.
	b.clock.Advance(time.Minute)
	theirs := mustAudio(t, dst, src.project.ID, "theirs")
	b.clock.Advance(time.Minute)
	ours := mustAudio(t, b.store, src.project.ID, "ours")
	for i := 0; ours.ID != theirs.ID; i++ {
		if i == 200 {
			t.Fatalf("source audio %d, target audio %d after %d more: the test needs one ID", ours.ID, theirs.ID, i)
		}
		if ours.ID < theirs.ID {
			ours = mustAudio(t, b.store, src.project.ID, fmt.Sprint("ours ", i))
		} else {
			theirs = mustAudio(t, dst, src.project.ID, fmt.Sprint("theirs ", i))
		}
	}
	more := mustAudio(t, b.store, src.project.ID, "more")
	_, err := dst.ImportAudios(ctx, []*narrator.Audio{more, ours})
	wantCode(t, err, narrator.ECONFLICT)
	_, err = dst.FindAudio(ctx, src.project.ID, "more")
	wantCode(t, err, narrator.ENOTFOUND)
	wantAudio(t, mustFindAudio(t, dst, src.project.ID, itoa(theirs.ID)), theirs)
}

// failedEnqueueStoresNothing stores no audio when its synthesis job cannot be queued.
func (target copyTarget) failedEnqueueStoresNothing(t *testing.T, b *bundle) {
	ctx := t.Context()
	src := mustCopySource(t, b)
	dst, rec := target(t, b)
	if err := dst.ImportMeta(ctx, mustExportMeta(t, b.store)); err != nil {
		t.Fatalf("ImportMeta: %v", err)
	}
	rec.FailWith(errors.New("queue down"))
	if _, err := dst.ImportAudios(ctx, src.live); err == nil {
		t.Fatal("ImportAudios with a failing queue succeeded")
	}
	wantEqual(t, "target audios", mustExportAll(t, dst), []*narrator.Audio{})
	if n := mustProjectCount(t, dst, src.project); n != 0 {
		t.Errorf("project counts %d audios, want 0", n)
	}
}

// invalid refuses a bad export batch size and a deleted audio.
func (target copyTarget) invalid(t *testing.T, b *bundle) {
	ctx := t.Context()
	src := mustCopySource(t, b)
	_, err := b.store.ExportAudios(ctx, 0, 0)
	wantCode(t, err, narrator.EINVALID)
	dst, _ := target(t, b)
	if err := dst.ImportMeta(ctx, mustExportMeta(t, b.store)); err != nil {
		t.Fatalf("ImportMeta: %v", err)
	}
	deleted := *src.live[0]
	deleted.Deleted = true
	_, err = dst.ImportAudios(ctx, []*narrator.Audio{&deleted})
	wantCode(t, err, narrator.EINVALID)
}

// copySource is what mustCopySource stores.
type copySource struct {
	account     *narrator.Account
	project     *narrator.Project
	live        []*narrator.Audio // by ID, as ExportAudios returns them
	unprocessed *narrator.Audio   // one of live
	deleted     *narrator.Audio   // the audio with the highest ID, deleted
}

// mustCopySource fills b's store with a little of everything copy-data
// copies: two accounts, a live and a revoked key, projects with and without
// a URL, a user, a rule, a feed, and processed, failed, unprocessed and deleted
// audios, in that order of ID.
func mustCopySource(tb testing.TB, b *bundle) copySource {
	tb.Helper()
	ctx := tb.Context()
	s := b.store
	var src copySource
	src.account = mustAccount(tb, s, "Acme")
	other := mustAccount(tb, s, "Other")
	if _, err := s.CreateAPIKey(ctx, src.account.ID, hashOf("key-live"), "nk_live"); err != nil {
		tb.Fatalf("CreateAPIKey: %v", err)
	}
	revoked, err := s.CreateAPIKey(ctx, src.account.ID, hashOf("key-revoked"), "nk_revo")
	if err != nil {
		tb.Fatalf("CreateAPIKey: %v", err)
	}
	b.clock.Advance(time.Second)
	if err := s.RevokeAPIKey(ctx, src.account.ID, revoked.ID); err != nil {
		tb.Fatalf("RevokeAPIKey: %v", err)
	}
	src.project = mustProjectOf(tb, s, src.account.ID)
	withURL := newProject(other.ID, "Blog")
	withURL.URL = "https://blog.example.com"
	withURL.SpeechRate = 1.25 // copied as it is
	if err := s.CreateProject(ctx, withURL); err != nil {
		tb.Fatalf("CreateProject: %v", err)
	}
	if err := s.CreateUser(ctx, &narrator.User{AccountID: src.account.ID, Email: "ed@acme.test", PasswordHash: []byte("bcrypt-hash")}); err != nil {
		tb.Fatalf("CreateUser: %v", err)
	}
	if err := s.SetPronunciation(ctx, &narrator.Pronunciation{ProjectID: src.project.ID, Phrase: "nginx", Say: "engine x"}); err != nil {
		tb.Fatalf("SetPronunciation: %v", err)
	}
	mustSaveFeed(tb, s, newFeed(src.project.ID, feedToken('c')))
	// One endpoint's clock runs; the other's delivery was made before the
	// copy, and is not copied.
	failing := mustWebhook(tb, s, src.project.ID, narrator.EventAudioFailed)
	d, err := s.TestWebhook(ctx, src.project.ID, failing.ID)
	if err != nil {
		tb.Fatalf("TestWebhook: %v", err)
	}
	if _, err := s.RecordAttempt(ctx, d.ID, narrator.WebhookAttempt{At: b.clock.Now(), ResponseCode: 500, Error: "down"}); err != nil {
		tb.Fatalf("RecordAttempt: %v", err)
	}
	mustWebhook(tb, s, withURL.ID)

	b.clock.Advance(time.Second)
	processed := mustAudio(tb, s, src.project.ID, "processed")
	mustFinish(tb, s, processed, "one")
	failed := newAudio(withURL.ID, "")
	failed.Metadata = nil
	mustCreateAudio(tb, s, failed)
	if err := s.FailAudio(ctx, failed.ID, failed.Revision, "no voice"); err != nil {
		tb.Fatalf("FailAudio: %v", err)
	}
	b.clock.Advance(time.Second)
	unprocessed := mustAudio(tb, s, src.project.ID, "unprocessed")
	title := "A new title"
	if _, err := s.UpdateAudio(ctx, src.project.ID, "unprocessed", narrator.AudioUpdate{Title: &title}); err != nil {
		tb.Fatalf("UpdateAudio: %v", err)
	}
	deleted := mustAudio(tb, s, src.project.ID, "deleted")
	if src.deleted, err = s.DeleteAudio(ctx, src.project.ID, "deleted"); err != nil {
		tb.Fatalf("DeleteAudio: %v", err)
	}
	src.live = []*narrator.Audio{
		mustFindAudio(tb, s, src.project.ID, itoa(processed.ID)),
		mustFindAudio(tb, s, withURL.ID, itoa(failed.ID)),
		mustFindAudio(tb, s, src.project.ID, itoa(unprocessed.ID)),
	}
	src.unprocessed = src.live[2]
	if src.unprocessed.Revision != 2 || src.live[1].State != narrator.StateFailed || deleted.ID != src.deleted.ID {
		tb.Fatalf("source audios %+v", src.live)
	}
	return src
}

// mustExportMeta exports what is not audios.
func mustExportMeta(tb testing.TB, s Store) *narrator.Export {
	tb.Helper()
	e, err := s.ExportMeta(tb.Context())
	if err != nil {
		tb.Fatalf("ExportMeta: %v", err)
	}
	return e
}

// mustExportAll exports every live audio, a page of one at a time.
func mustExportAll(tb testing.TB, s Store) []*narrator.Audio {
	tb.Helper()
	all := []*narrator.Audio{}
	for after := int64(0); ; {
		page, err := s.ExportAudios(tb.Context(), after, 1)
		if err != nil {
			tb.Fatalf("ExportAudios(%d, 1): %v", after, err)
		}
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		after = page[len(page)-1].ID
	}
}

// mustCopyAudios copies every live audio of src into dst in batches of n
// and returns how many dst inserted.
func mustCopyAudios(tb testing.TB, src, dst Store, n int) int {
	tb.Helper()
	inserted := 0
	for after := int64(0); ; {
		page, err := src.ExportAudios(tb.Context(), after, n)
		if err != nil {
			tb.Fatalf("ExportAudios(%d, %d): %v", after, n, err)
		}
		if len(page) == 0 {
			return inserted
		}
		got, err := dst.ImportAudios(tb.Context(), page)
		if err != nil {
			tb.Fatalf("ImportAudios: %v", err)
		}
		inserted += got
		after = page[len(page)-1].ID
	}
}
