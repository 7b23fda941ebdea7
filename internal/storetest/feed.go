package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// feedToken returns a valid feed token made of c, different for each c.
func feedToken(c byte) string { return strings.Repeat(string(c), 42) + "A" }

// newFeed returns valid feed settings of a project with token.
func newFeed(projectID int64, token string) *narrator.Feed {
	return &narrator.Feed{ProjectID: projectID, Enabled: true, Title: "Daily", Description: "The news, read.",
		Author: "Acme", ImageURL: "https://acme.test/cover.png", Language: "en-US", Category: "News > Daily News",
		Explicit: true, Token: token, OwnerName: "Acme Audio", OwnerEmail: "podcasts@acme.test"}
}

// mustSaveFeed saves f.
func mustSaveFeed(tb testing.TB, s Store, f *narrator.Feed) *narrator.Feed {
	tb.Helper()
	if err := s.SaveFeed(tb.Context(), f); err != nil {
		tb.Fatalf("SaveFeed(project %d): %v", f.ProjectID, err)
	}
	return f
}

// mustFeedContent reads the feed with token, listing up to limit audios.
func mustFeedContent(tb testing.TB, s Store, token string, limit int) *narrator.FeedContent {
	tb.Helper()
	c, err := s.FeedByToken(tb.Context(), token, limit)
	if err != nil {
		tb.Fatalf("FeedByToken: %v", err)
	}
	return c
}

var feedTests = []test{
	{"SaveFindRotate", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		_, err := b.store.FindFeed(ctx, p.ID)
		wantCode(t, err, narrator.ENOTFOUND)

		f := mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('a')))
		want := *newFeed(p.ID, feedToken('a'))
		want.CreatedAt, want.UpdatedAt = epoch, epoch
		wantEqual(t, "saved feed", *f, want)
		got, err := b.store.FindFeed(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "found feed", *got, want)

		// Saving again changes the settings, never the token.
		later := b.clock.Advance(time.Minute)
		edit := newFeed(p.ID, feedToken('b'))
		edit.Title, edit.Category, edit.ImageURL, edit.Explicit = "Weekly", "Technology", "", false
		mustSaveFeed(t, b.store, edit)
		want.Title, want.Category, want.ImageURL, want.Explicit, want.UpdatedAt = "Weekly", "Technology", "", false, later
		wantEqual(t, "edited feed", *edit, want)
		got, _ = b.store.FindFeed(ctx, p.ID)
		wantEqual(t, "found edited feed", *got, want)
		c := mustFeedContent(t, b.store, feedToken('a'), 10)
		wantEqual(t, "feed by token", *c.Feed, want)
		if c.Project.ID != p.ID || c.Project.Title != p.Title {
			t.Errorf("feed's project = %+v, want %+v", c.Project, p)
		}
		_, err = b.store.FeedByToken(ctx, feedToken('b'), 10)
		wantCode(t, err, narrator.ENOTFOUND)

		// Rotating makes the old token unknown at once.
		later = b.clock.Advance(time.Minute)
		rotated, err := b.store.RotateFeedToken(ctx, p.ID, feedToken('c'))
		if err != nil {
			t.Fatal(err)
		}
		want.Token, want.UpdatedAt = feedToken('c'), later
		wantEqual(t, "rotated feed", *rotated, want)
		_, err = b.store.FeedByToken(ctx, feedToken('a'), 10)
		wantCode(t, err, narrator.ENOTFOUND)
		mustFeedContent(t, b.store, feedToken('c'), 10)

		// A feed turned off is not found by its token, but keeps its
		// settings; turned on again, it answers at the same URL.
		off := newFeed(p.ID, feedToken('d'))
		off.Enabled = false
		mustSaveFeed(t, b.store, off)
		_, err = b.store.FeedByToken(ctx, feedToken('c'), 10)
		wantCode(t, err, narrator.ENOTFOUND)
		got, _ = b.store.FindFeed(ctx, p.ID)
		if got.Enabled || got.Token != feedToken('c') || got.Title != "Daily" {
			t.Errorf("feed turned off = %+v", got)
		}
		mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('e')))
		mustFeedContent(t, b.store, feedToken('c'), 10)
	}},
	{"Invalid", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		bad := newFeed(p.ID, feedToken('a'))
		bad.Category = "Cooking"
		wantCode(t, b.store.SaveFeed(ctx, bad), narrator.EINVALID)
		wantCode(t, b.store.SaveFeed(ctx, newFeed(p.ID, "short")), narrator.EINVALID)
		wantCode(t, b.store.SaveFeed(ctx, newFeed(999999, feedToken('a'))), narrator.ENOTFOUND)
		_, err := b.store.RotateFeedToken(ctx, p.ID, feedToken('b'))
		wantCode(t, err, narrator.ENOTFOUND)
		if _, err := b.store.FindFeed(ctx, p.ID); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Fatalf("a refused save stored a feed: %v", err)
		}

		// Tokens are unique across projects.
		mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('a')))
		other := mustProjectOf(t, b.store, p.AccountID)
		wantCode(t, b.store.SaveFeed(ctx, newFeed(other.ID, feedToken('a'))), narrator.ECONFLICT)
		mustSaveFeed(t, b.store, newFeed(other.ID, feedToken('o')))
		_, err = b.store.RotateFeedToken(ctx, other.ID, feedToken('a'))
		wantCode(t, err, narrator.ECONFLICT)
		_, err = b.store.RotateFeedToken(ctx, other.ID, "not a token")
		wantCode(t, err, narrator.EINVALID)
		if c := mustFeedContent(t, b.store, feedToken('o'), 1); c.Feed.ProjectID != other.ID {
			t.Errorf("token o reads project %d's feed, want %d", c.Feed.ProjectID, other.ID)
		}

		_, err = b.store.FeedByToken(ctx, feedToken('a'), 0)
		wantCode(t, err, narrator.EINVALID)
		for _, token := range []string{"", "../x", strings.Repeat("a", 500)} {
			_, err = b.store.FeedByToken(ctx, token, 10)
			wantCode(t, err, narrator.ENOTFOUND)
		}
	}},
	{"SignedWithoutText", func(t *testing.T, b *bundle) {
		// A signed project's articles are for the readers it signs for:
		// its feed, which anyone with its URL reads, carries none of their
		// text.
		ctx := t.Context()
		p := mustProject(t, b.store)
		mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('s')))
		a := newAudio(p.ID, "paywalled")
		a.Body = "<p>Only for subscribers.</p>"
		mustCreateAudio(t, b.store, a)
		mustFinish(t, b.store, a, "v1")
		if c := mustFeedContent(t, b.store, feedToken('s'), 10); len(c.Audios) != 1 || c.Audios[0].Body != a.Body || c.Signed {
			t.Fatalf("public feed: signed %v, audios %+v, want the audio with its body", c.Signed, c.Audios)
		}
		access, err := b.store.RotateEmbedSecret(ctx, p.ID, narrator.EmbedSecretPrefix+"feed")
		if err != nil {
			t.Fatal(err)
		}
		access.Mode = narrator.AccessSigned
		if err := b.store.SetProjectAccess(ctx, &access); err != nil {
			t.Fatal(err)
		}
		c := mustFeedContent(t, b.store, feedToken('s'), 10)
		if !c.Signed {
			t.Error("a signed project's feed content is not Signed")
		}
		got := c.Audios
		if len(got) != 1 {
			t.Fatalf("signed feed lists %d audios, want 1", len(got))
		}
		want := mustFindAudio(t, b.store, p.ID, "paywalled")
		want.Body = ""
		wantAudio(t, got[0], want)
	}},
	{"ItemPublications", func(t *testing.T, b *bundle) {
		// The feed dates an audio without an article date by when it
		// became public: a schedule come due, at its moment.
		p := mustProject(t, b.store)
		mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('d')))
		always := mustAudio(t, b.store, p.ID, "always")
		mustFinish(t, b.store, always, "v1")
		later := mustAudio(t, b.store, p.ID, "later")
		mustFinish(t, b.store, later, "v1")
		due := b.clock.Now().Add(time.Minute)
		mustSetPublication(t, b.store, narrator.Publication{AudioID: later.ID, State: narrator.PublicationScheduled, PublishAt: due})
		b.clock.Advance(2 * time.Minute)
		c := mustFeedContent(t, b.store, feedToken('d'), 10)
		if len(c.Audios) != 2 {
			t.Fatalf("feed lists %d audios, want 2", len(c.Audios))
		}
		if _, ok := c.Publications[always.ID]; ok || len(c.Publications) != 1 {
			t.Errorf("publications %+v, want only the scheduled audio's", c.Publications)
		}
		if got := c.Publications[later.ID]; got.State != narrator.PublicationScheduled || !got.PublishAt.Equal(due) {
			t.Errorf("publication %+v, want scheduled at %v", got, due)
		}
		for _, a := range c.Audios {
			want := always.CreatedAt
			if a.ID == later.ID {
				want = due
			}
			if got := c.ItemDate(a); !got.Equal(want) {
				t.Errorf("audio %s: item date %v, want %v", a.ExternalID, got, want)
			}
		}
	}},
	{"Items", testFeedItems},
}

// testFeedItems checks the audios a podcast feed lists, and when they changed.
func testFeedItems(t *testing.T, b *bundle) {
	ctx := t.Context()
	p := mustProject(t, b.store)
	mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('a')))
	c := mustFeedContent(t, b.store, feedToken('a'), 10)
	if c.Audios == nil || len(c.Audios) != 0 || !c.AudiosChangedAt.IsZero() {
		t.Fatalf("empty feed: audios %#v, changed %v", c.Audios, c.AudiosChangedAt)
	}

	processed, gone := mustFeedAudios(t, b, p)

	c = mustFeedContent(t, b.store, feedToken('a'), 10)
	want := []int64{processed[3].ID, processed[2].ID, processed[1].ID, processed[0].ID}
	wantEqual(t, "feed audios", ids(c.Audios), want)
	wantAudio(t, c.Audios[1], mustFindAudio(t, b.store, p.ID, "p3"))
	// Bodies are cut, by characters.
	cut := mustFindAudio(t, b.store, p.ID, "p4")
	cut.Body = strings.Repeat("é", narrator.FeedBodyChars)
	wantAudio(t, c.Audios[0], cut)
	if m := c.Audios[0].Media[0]; m.Bytes == 0 || m.Bytes != 100*int64(len(m.Key)) {
		t.Errorf("listed media %+v lacks its size", m)
	}
	wantEqual(t, "capped", ids(mustFeedContent(t, b.store, feedToken('a'), 2).Audios), want[:2])
	if p4 := mustFindAudio(t, b.store, p.ID, "p4"); !c.AudiosChangedAt.Equal(p4.UpdatedAt) {
		t.Errorf("audios changed at %v, want p4's update %v", c.AudiosChangedAt, p4.UpdatedAt)
	}
	if _, err := b.store.FindAudio(ctx, p.ID, itoa(gone.ID)); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Fatalf("deleted audio found: %v", err)
	}

	// An audio leaving the feed moves its last change: deleted...
	deletedAt := b.clock.Advance(time.Minute)
	if _, err := b.store.DeleteAudio(ctx, p.ID, "p1"); err != nil {
		t.Fatal(err)
	}
	c = mustFeedContent(t, b.store, feedToken('a'), 10)
	wantEqual(t, "after delete", ids(c.Audios), want[:3])
	if !c.AudiosChangedAt.Equal(deletedAt) {
		t.Errorf("after delete: audios changed at %v, want %v", c.AudiosChangedAt, deletedAt)
	}
	// ... or to be synthesised again.
	regenAt := b.clock.Advance(time.Minute)
	if _, err := b.store.ResynthesizeAudio(ctx, p.ID, "p2"); err != nil {
		t.Fatal(err)
	}
	c = mustFeedContent(t, b.store, feedToken('a'), 10)
	wantEqual(t, "after resynthesize", ids(c.Audios), []int64{want[0], want[1]})
	if !c.AudiosChangedAt.Equal(regenAt) {
		t.Errorf("after resynthesize: audios changed at %v, want %v", c.AudiosChangedAt, regenAt)
	}
	if got := c.LastModified(); !got.Equal(regenAt) {
		t.Errorf("LastModified = %v, want %v", got, regenAt)
	}
}

// mustFeedAudios stores audios of every kind in p, a minute apart, two sharing a creation
// time, and one in another project of its account. It returns the processed audios of p that
// are not deleted, oldest first, and the one that was deleted.
func mustFeedAudios(t *testing.T, b *bundle, p *narrator.Project) (processed []*narrator.Audio, gone *narrator.Audio) {
	t.Helper()
	ctx := t.Context()
	finish := func(ext string) *narrator.Audio {
		a := mustAudio(t, b.store, p.ID, ext)
		mustFinish(t, b.store, a, "v1")
		processed = append(processed, a)
		return a
	}
	finish("p1")
	b.clock.Advance(time.Minute)
	mustAudio(t, b.store, p.ID, "waiting")
	failed := mustAudio(t, b.store, p.ID, "failed")
	if err := b.store.FailAudio(ctx, failed.ID, failed.Revision, "no"); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	finish("p2")
	finish("p3") // same creation time as p2, higher ID
	b.clock.Advance(time.Minute)
	gone = finish("gone")
	processed = processed[:len(processed)-1]
	if _, err := b.store.DeleteAudio(ctx, p.ID, "gone"); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	long := newAudio(p.ID, "p4")
	long.Body = strings.Repeat("é", narrator.FeedBodyChars) + " and more."
	mustCreateAudio(t, b.store, long)
	mustFinish(t, b.store, long, "v1")
	processed = append(processed, long)
	otherProject := mustProjectOf(t, b.store, p.AccountID)
	b.clock.Advance(time.Minute)
	mustFinish(t, b.store, mustAudio(t, b.store, otherProject.ID, "elsewhere"), "v1")
	return processed, gone
}
