package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// mustRSSProject creates a project of type rss in a new account.
func mustRSSProject(tb testing.TB, s Store) *narrator.Project {
	tb.Helper()
	p := newProject(mustAccount(tb, s, "Acme").ID, "Feeds")
	p.Type = narrator.ProjectTypeRSS
	if err := s.CreateProject(tb.Context(), p); err != nil {
		tb.Fatalf("CreateProject: %v", err)
	}
	return p
}

// mustRSSProjectOf creates a project of type rss in an account.
func mustRSSProjectOf(tb testing.TB, s Store, accountID int64) *narrator.Project {
	tb.Helper()
	p := newProject(accountID, "Feeds")
	p.Type = narrator.ProjectTypeRSS
	if err := s.CreateProject(tb.Context(), p); err != nil {
		tb.Fatalf("CreateProject: %v", err)
	}
	return p
}

// mustSource creates a feed of a project.
func mustSource(tb testing.TB, s Store, projectID int64, url string) *narrator.Source {
	tb.Helper()
	src := narrator.NewSource(projectID, url)
	src.Header = map[string]string{"Authorization": "Bearer t"}
	src.Mapping = map[string]string{"body": "summary"}
	src.FullText = true
	src.BackfillItems, src.BackfillSince = 5, 48*time.Hour
	if err := s.CreateSource(tb.Context(), src); err != nil {
		tb.Fatalf("CreateSource: %v", err)
	}
	return src
}

var sourceTests = []test{
	{"CreateFindListDelete", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustRSSProject(t, b.store)
		src := mustSource(t, b.store, p.ID, "https://example.com/feed.xml")
		if src.ID == 0 || !src.CreatedAt.Equal(b.clock.Now()) || src.State.Status != narrator.SourceStatusNew || !src.State.NextPollAt.Equal(b.clock.Now()) {
			t.Fatalf("created feed = %+v; want an ID, CreatedAt now, status new, due now", src)
		}
		got, err := b.store.Source(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "found feed", got, src)
		if got, err = b.store.FindSource(ctx, p.ID, src.ID); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "found feed of its project", got, src)
		list, err := b.store.ListSources(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "listed feeds", list, []*narrator.Source{src})
		other := mustProjectOf(t, b.store, p.AccountID)
		_, err = b.store.FindSource(ctx, other.ID, src.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		wantCode(t, b.store.DeleteSource(ctx, other.ID, src.ID), narrator.ENOTFOUND)
		if err := b.store.DeleteSource(ctx, p.ID, src.ID); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.Source(ctx, src.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		if list, err := b.store.ListSources(ctx, p.ID); err != nil || list == nil || len(list) != 0 {
			t.Errorf("ListSources after the delete = %v, %v; want an empty slice", list, err)
		}
	}},
	{"CreateRefused", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		api := mustProject(t, b.store)
		wantCode(t, b.store.CreateSource(ctx, narrator.NewSource(api.ID, "https://example.com/f")), narrator.EINVALID)
		wantCode(t, b.store.CreateSource(ctx, narrator.NewSource(api.ID+1000, "https://example.com/f")), narrator.ENOTFOUND)
		p := mustRSSProject(t, b.store)
		wantCode(t, b.store.CreateSource(ctx, narrator.NewSource(p.ID, "file:///etc/passwd")), narrator.EINVALID)
		for range narrator.MaxSourcesPerProject {
			mustSource(t, b.store, p.ID, "https://example.com/f")
		}
		wantCode(t, b.store.CreateSource(ctx, narrator.NewSource(p.ID, "https://example.com/f")), narrator.ECONFLICT)
	}},
	{"CreateOverAccountLimit", func(t *testing.T, b *bundle) {
		// An account's feeds are bounded over all its projects; another
		// account's are not touched by it.
		ctx := t.Context()
		p := mustRSSProject(t, b.store)
		second := mustRSSProjectOf(t, b.store, p.AccountID)
		for i := range SuiteLimits.MaxSources {
			project := p
			if i >= narrator.MaxSourcesPerProject {
				project = second
			}
			mustSource(t, b.store, project.ID, "https://example.com/f")
		}
		third := mustRSSProjectOf(t, b.store, p.AccountID)
		err := b.store.CreateSource(ctx, narrator.NewSource(third.ID, "https://example.com/f"))
		wantCode(t, err, narrator.ECONFLICT)
		if msg := narrator.ErrorMessage(err); !strings.Contains(msg, "account") {
			t.Errorf("refusal %q does not say it is the account's limit", msg)
		}
		if list, err := b.store.ListSources(ctx, third.ID); err != nil || len(list) != 0 {
			t.Errorf("ListSources of the refused project = %v, %v; want none", list, err)
		}
		mustSource(t, b.store, mustRSSProject(t, b.store).ID, "https://example.com/f")
	}},
	{"ClaimFairAcrossAccounts", func(t *testing.T, b *bundle) {
		// One account's many feeds fell due first and are slow: while
		// its share of them is being read, another account's feed, due
		// later, is still taken, and no more of the first account's.
		ctx := t.Context()
		busy := mustRSSProject(t, b.store)
		var busyIDs []int64
		for range 12 {
			busyIDs = append(busyIDs, mustSource(t, b.store, busy.ID, "https://slow.example/f").ID)
		}
		b.clock.Advance(time.Minute)
		other := mustSource(t, b.store, mustRSSProject(t, b.store).ID, "https://example.com/f")
		b.clock.Advance(time.Minute)
		const slots = 4
		due, err := b.store.DueSources(ctx, slots)
		if err != nil {
			t.Fatal(err)
		}
		want := append([]int64{busyIDs[0], other.ID}, busyIDs[1:narrator.MaxReadsPerAccount]...)
		wantEqual(t, "due feeds, accounts in turn", due, want)
		// The first account's share of reads is in flight, held by
		// slow feeds; a node that found more of its feeds due claims
		// none of them.
		for _, id := range busyIDs[:narrator.MaxReadsPerAccount] {
			if ok, err := b.store.ClaimDueSource(ctx, id, b.clock.Now().Add(time.Hour)); err != nil || !ok {
				t.Fatalf("ClaimDueSource(%d) = %v, %v; want true", id, ok, err)
			}
		}
		for _, id := range busyIDs[narrator.MaxReadsPerAccount:] {
			if ok, err := b.store.ClaimDueSource(ctx, id, b.clock.Now().Add(time.Hour)); err != nil || ok {
				t.Fatalf("ClaimDueSource(%d) over the account's share = %v, %v; want false", id, ok, err)
			}
		}
		due, err = b.store.DueSources(ctx, slots)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "due feeds while the first account's are read", due, []int64{other.ID})
		if ok, err := b.store.ClaimDueSource(ctx, other.ID, b.clock.Now().Add(time.Hour)); err != nil || !ok {
			t.Fatalf("ClaimDueSource of the other account's feed = %v, %v; want true", ok, err)
		}
		// A read that ends frees a share: the next of the first
		// account's feeds is taken.
		now := b.clock.Now()
		if err := b.store.RecordRead(ctx, narrator.SourceRead{SourceID: busyIDs[0], State: narrator.SourceState{Status: narrator.SourceStatusOK, LastFetchAt: now, NextPollAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		due, err = b.store.DueSources(ctx, slots)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "due feeds after a read ended", due, []int64{busyIDs[narrator.MaxReadsPerAccount]})
		// Leases that expired, of a node that died, hold no share.
		b.clock.Advance(2 * time.Hour)
		due, err = b.store.DueSources(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != narrator.MaxReadsPerAccount+1 {
			t.Errorf("due feeds after the leases expired = %v; want %d", due, narrator.MaxReadsPerAccount+1)
		}
	}},
	{"ClaimDueRecord", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustRSSProject(t, b.store)
		src := mustSource(t, b.store, p.ID, "https://example.com/feed.xml")
		due, err := b.store.DueSources(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "due feeds", due, []int64{src.ID})
		if ok, err := b.store.ClaimDueSource(ctx, src.ID, b.clock.Now().Add(time.Minute)); err != nil || !ok {
			t.Fatalf("ClaimDueSource = %v, %v; want true", ok, err)
		}
		if ok, err := b.store.ClaimSource(ctx, src.ID, b.clock.Now().Add(time.Minute)); err != nil || ok {
			t.Fatalf("second ClaimSource = %v, %v; want false", ok, err)
		}
		if due, err := b.store.DueSources(ctx, 10); err != nil || len(due) != 0 {
			t.Fatalf("DueSources of a leased feed = %v, %v; want none", due, err)
		}
		_, err = b.store.ClaimSource(ctx, src.ID+1000, b.clock.Now())
		wantCode(t, err, narrator.ENOTFOUND)
		now := b.clock.Now()
		read := narrator.SourceRead{SourceID: src.ID, Created: 2, Updated: 1,
			Seen: []narrator.SeenItem{{ExternalID: "feed-1:a", Hash: "h1", Date: now.Add(-time.Hour)}, {ExternalID: "feed-1:b", Hash: "-"}},
			State: narrator.SourceState{Status: narrator.SourceStatusOK, LastFetchAt: now, NextPollAt: now.Add(10 * time.Minute),
				ETag: `"v1"`, LastModified: "Mon, 04 May 2026 10:00:00 GMT"}}
		if err := b.store.RecordRead(ctx, read); err != nil {
			t.Fatal(err)
		}
		got, err := b.store.Source(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := read.State
		want.ItemsSeen, want.Created, want.Updated = 2, 2, 1
		wantEqual(t, "state after a read", got.State, want)
		seen, err := b.store.SeenItems(ctx, src.ID, []string{"feed-1:a", "feed-1:b", "feed-1:c"})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "seen items", seen, map[string]narrator.SeenItem{"feed-1:a": read.Seen[0], "feed-1:b": read.Seen[1]})
		// The read ended the lease; the feed is due again at its next poll.
		if due, err := b.store.DueSources(ctx, 10); err != nil || len(due) != 0 {
			t.Fatalf("DueSources before the next poll = %v, %v; want none", due, err)
		}
		// A node that found the feed due before this read ended claims
		// nothing; a read asked for now still claims it.
		if ok, err := b.store.ClaimDueSource(ctx, src.ID, b.clock.Now().Add(time.Minute)); err != nil || ok {
			t.Fatalf("ClaimDueSource of a feed read since = %v, %v; want false", ok, err)
		}
		_, err = b.store.ClaimDueSource(ctx, src.ID+1000, b.clock.Now())
		wantCode(t, err, narrator.ENOTFOUND)
		if ok, err := b.store.ClaimSource(ctx, src.ID, b.clock.Now().Add(time.Minute)); err != nil || !ok {
			t.Fatalf("ClaimSource of a feed not due = %v, %v; want true", ok, err)
		}
		// That lease has ended by the next poll, when the feed is due
		// again, to the instant.
		b.clock.Advance(10 * time.Minute)
		if due, err := b.store.DueSources(ctx, 10); err != nil || len(due) != 1 {
			t.Fatalf("DueSources at the next poll = %v, %v; want the feed", due, err)
		}
		if ok, err := b.store.ClaimDueSource(ctx, src.ID, b.clock.Now().Add(time.Minute)); err != nil || !ok {
			t.Fatalf("ClaimDueSource at the next poll = %v, %v; want true", ok, err)
		}
		// A changed hash replaces the old; counts add up.
		read.Seen = []narrator.SeenItem{{ExternalID: "feed-1:a", Hash: "h2", Date: now}}
		if err := b.store.RecordRead(ctx, read); err != nil {
			t.Fatal(err)
		}
		seen, err = b.store.SeenItems(ctx, src.ID, []string{"feed-1:a"})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "seen after a change", seen, map[string]narrator.SeenItem{"feed-1:a": read.Seen[0]})
		got, _ = b.store.Source(ctx, src.ID)
		if got.State.ItemsSeen != 2 || got.State.Created != 4 || got.State.Updated != 2 {
			t.Errorf("counts after two reads: %+v", got.State)
		}
		wantCode(t, b.store.RecordRead(ctx, narrator.SourceRead{SourceID: src.ID + 1000}), narrator.ENOTFOUND)
	}},
	{"Subscription", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustRSSProject(t, b.store)
		src := mustSource(t, b.store, p.ID, "https://example.com/feed.xml")
		now := b.clock.Now()
		sub := narrator.NewSubscription("https://hub.example/", "https://example.com/feed.xml")
		sub.Request(narrator.WebSubSubscribe, sub.Topic, now)
		if err := b.store.SetSubscription(ctx, src.ID, sub); err != nil {
			t.Fatal(err)
		}
		// A read leaves the subscription as it is.
		if err := b.store.RecordRead(ctx, narrator.SourceRead{SourceID: src.ID, State: narrator.SourceState{Status: narrator.SourceStatusOK, NextPollAt: now}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.store.Source(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "subscription", got.State.WebSub, sub)
		if got.State.WebSub.Nonce == "" {
			t.Fatalf("the callback nonce was not kept: %+v", got.State.WebSub)
		}
		if !sub.Verify(narrator.WebSubSubscribe, sub.Topic, sub.Nonce, time.Hour, now) || !sub.Pending.SentAt.IsZero() {
			t.Fatalf("Verify of the pending request: %+v", sub)
		}
		if err := b.store.SetSubscription(ctx, src.ID, sub); err != nil {
			t.Fatal(err)
		}
		got, _ = b.store.Source(ctx, src.ID)
		wantEqual(t, "verified subscription", got.State.WebSub, sub)
		wantCode(t, b.store.SetSubscription(ctx, src.ID+1000, sub), narrator.ENOTFOUND)
	}},
	{"SeenManyItems", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustRSSProject(t, b.store)
		src := mustSource(t, b.store, p.ID, "https://example.com/feed.xml")
		read := narrator.SourceRead{SourceID: src.ID, State: narrator.SourceState{Status: narrator.SourceStatusOK, NextPollAt: b.clock.Now()}}
		var ids []string
		for i := range 450 {
			id := "feed-1:" + string(rune('a'+i%26)) + time.Duration(i).String()
			ids = append(ids, id)
			read.Seen = append(read.Seen, narrator.SeenItem{ExternalID: id, Hash: "h"})
		}
		if err := b.store.RecordRead(ctx, read); err != nil {
			t.Fatal(err)
		}
		seen, err := b.store.SeenItems(ctx, src.ID, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != len(ids) {
			t.Errorf("SeenItems of %d recorded items found %d", len(ids), len(seen))
		}
	}},
}
