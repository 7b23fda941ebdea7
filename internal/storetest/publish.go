package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// mustPublication returns the publication of an audio.
func mustPublication(tb testing.TB, s Store, audioID int64) narrator.Publication {
	tb.Helper()
	p, err := s.AudioPublication(tb.Context(), audioID)
	if err != nil {
		tb.Fatalf("AudioPublication(%d): %v", audioID, err)
	}
	return p
}

// mustSetPublication stores a publication.
func mustSetPublication(tb testing.TB, s Store, p narrator.Publication) narrator.Publication {
	tb.Helper()
	got, err := s.SetPublication(tb.Context(), p)
	if err != nil {
		tb.Fatalf("SetPublication(%+v): %v", p, err)
	}
	return got
}

// feedIDs returns the IDs of the audios the feed with token lists.
func feedIDs(tb testing.TB, s Store, token string) []int64 {
	tb.Helper()
	return ids(mustFeedContent(tb, s, token, 10).Audios)
}

var publicationTests = []test{
	{"DefaultIsPublished", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustCreateAudio(t, b.store, newAudio(p.ID, "a"))
		wantEqual(t, "publication", mustPublication(t, b.store, a.ID), narrator.DefaultPublication(a.ID))
		access, err := b.store.ProjectAccess(t.Context(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "access", access, narrator.DefaultAccess(p.ID))
	}},
	{"SetAndRead", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustCreateAudio(t, b.store, newAudio(p.ID, "a"))
		at := epoch.Add(time.Hour)
		later := b.clock.Advance(time.Minute)
		got := mustSetPublication(t, b.store, narrator.Publication{AudioID: a.ID, State: narrator.PublicationScheduled, PublishAt: at})
		want := narrator.Publication{AudioID: a.ID, State: narrator.PublicationScheduled, PublishAt: at, UpdatedAt: later}
		wantEqual(t, "set", got, want)
		wantEqual(t, "read", mustPublication(t, b.store, a.ID), want)

		later = b.clock.Advance(time.Minute)
		mustSetPublication(t, b.store, narrator.Publication{AudioID: a.ID, State: narrator.PublicationDraft})
		wantEqual(t, "draft", mustPublication(t, b.store, a.ID),
			narrator.Publication{AudioID: a.ID, State: narrator.PublicationDraft, UpdatedAt: later})

		_, err := b.store.SetPublication(t.Context(), narrator.Publication{AudioID: a.ID, State: narrator.PublicationScheduled})
		wantCode(t, err, narrator.EINVALID)
		_, err = b.store.SetPublication(t.Context(), narrator.Publication{AudioID: a.ID + 1000, State: narrator.PublicationDraft})
		wantCode(t, err, narrator.ENOTFOUND)
		if _, err := b.store.DeleteAudio(t.Context(), p.ID, itoa(a.ID)); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.SetPublication(t.Context(), narrator.Publication{AudioID: a.ID, State: narrator.PublicationPublished})
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"NewAudiosWaitAsDrafts", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		other := mustProject(t, b.store)
		before := mustCreateAudio(t, b.store, newAudio(p.ID, "before"))
		if err := b.store.SetProjectAccess(t.Context(), &narrator.ProjectAccess{ProjectID: p.ID, Mode: narrator.AccessPublic, DraftNewAudios: true}); err != nil {
			t.Fatal(err)
		}
		draft := mustCreateAudio(t, b.store, newAudio(p.ID, "draft"))
		elsewhere := mustCreateAudio(t, b.store, newAudio(other.ID, "elsewhere"))
		wantEqual(t, "audio created before", mustPublication(t, b.store, before.ID).State, narrator.PublicationPublished)
		wantEqual(t, "audio created after", mustPublication(t, b.store, draft.ID).State, narrator.PublicationDraft)
		wantEqual(t, "other project's audio", mustPublication(t, b.store, elsewhere.ID).State, narrator.PublicationPublished)
		// An update of the draft, or a create with its external ID, keeps
		// its publication.
		again := newAudio(p.ID, "draft")
		again.Body = "<p>Changed.</p>"
		if _, err := b.store.CreateAudio(t.Context(), again); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "draft updated", mustPublication(t, b.store, draft.ID).State, narrator.PublicationDraft)
	}},
	{"Access", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		signed := &narrator.ProjectAccess{ProjectID: p.ID, Mode: narrator.AccessSigned}
		wantCode(t, b.store.SetProjectAccess(ctx, signed), narrator.EINVALID)
		later := b.clock.Advance(time.Minute)
		rotated, err := b.store.RotateEmbedSecret(ctx, p.ID, narrator.EmbedSecretPrefix+"one")
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "rotated", rotated, narrator.ProjectAccess{ProjectID: p.ID, Mode: narrator.AccessPublic,
			SigningSecret: narrator.EmbedSecretPrefix + "one", UpdatedAt: later})
		// Settings keep the secret, whatever they say of it.
		set := &narrator.ProjectAccess{ProjectID: p.ID, Mode: narrator.AccessSigned, SigningSecret: "ignored",
			AllowedOrigins: []string{"HTTPS://News.Example", "http://localhost:8080"}, DownloadButton: true}
		if err := b.store.SetProjectAccess(ctx, set); err != nil {
			t.Fatal(err)
		}
		want := narrator.ProjectAccess{ProjectID: p.ID, Mode: narrator.AccessSigned, SigningSecret: narrator.EmbedSecretPrefix + "one",
			AllowedOrigins: []string{"https://news.example", "http://localhost:8080"}, DownloadButton: true, UpdatedAt: later}
		wantEqual(t, "set", *set, want)
		got, err := b.store.ProjectAccess(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "read", got, want)
		wantCode(t, b.store.SetProjectAccess(ctx, &narrator.ProjectAccess{ProjectID: p.ID + 1000, Mode: narrator.AccessPublic}), narrator.ENOTFOUND)
		_, err = b.store.RotateEmbedSecret(ctx, p.ID+1000, narrator.EmbedSecretPrefix+"two")
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"FeedListsPublishedOnly", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('p')))
		var audios []*narrator.Audio
		for _, ext := range []string{"published", "draft", "scheduled"} {
			a := mustCreateAudio(t, b.store, newAudio(p.ID, ext))
			mustFinish(t, b.store, a, "r1")
			audios = append(audios, a)
		}
		published, draft, scheduled := audios[0], audios[1], audios[2]
		due := b.clock.Advance(time.Minute).Add(time.Hour)
		mustSetPublication(t, b.store, narrator.Publication{AudioID: draft.ID, State: narrator.PublicationDraft})
		decided := mustSetPublication(t, b.store, narrator.Publication{AudioID: scheduled.ID, State: narrator.PublicationScheduled, PublishAt: due}).UpdatedAt
		wantEqual(t, "feed before the schedule", feedIDs(t, b.store, feedToken('p')), []int64{published.ID})
		if got := mustFeedContent(t, b.store, feedToken('p'), 10).AudiosChangedAt; !got.Equal(decided) {
			t.Errorf("AudiosChangedAt = %v, want the last decision %v", got, decided)
		}

		// The schedule comes due by itself, and the feed says it changed.
		b.clock.Set(due)
		wantEqual(t, "feed at the schedule", feedIDs(t, b.store, feedToken('p')), []int64{scheduled.ID, published.ID})
		if got := mustFeedContent(t, b.store, feedToken('p'), 10).AudiosChangedAt; !got.Equal(due) {
			t.Errorf("AudiosChangedAt = %v, want the schedule %v", got, due)
		}
		mustSetPublication(t, b.store, narrator.Publication{AudioID: published.ID, State: narrator.PublicationDraft})
		mustSetPublication(t, b.store, narrator.Publication{AudioID: draft.ID, State: narrator.PublicationPublished})
		wantEqual(t, "feed after the decisions", feedIDs(t, b.store, feedToken('p')), []int64{scheduled.ID, draft.ID})
	}},
	{"MediaAccess", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustCreateAudio(t, b.store, newAudio(p.ID, "a"))
		folder := fmt.Sprintf("folder-%d", a.ID)
		keys := map[string]string{
			narrator.ContentTypeMP3:  folder + "/" + narrator.MediaMP3Name,
			narrator.ContentTypeM3U8: folder + "/audio.m3u8",
		}
		if err := b.store.FinishAudio(ctx, a.ID, a.Revision, rendering(keys, 1000)); err != nil {
			t.Fatal(err)
		}
		access, err := b.store.RotateEmbedSecret(ctx, p.ID, narrator.EmbedSecretPrefix+"media")
		if err != nil {
			t.Fatal(err)
		}
		access.Mode = narrator.AccessSigned
		if err := b.store.SetProjectAccess(ctx, &access); err != nil {
			t.Fatal(err)
		}
		got, err := b.store.MediaAccess(ctx, folder)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "access of the folder", got, access)
		// A folder no audio owns, such as one a crash left, is no one's.
		_, err = b.store.MediaAccess(ctx, "no-such-folder")
		wantCode(t, err, narrator.ENOTFOUND)

		// A rendering's folder is owned by its progress while it is made,
		// and no longer once the lease goes with it.
		b2 := mustCreateAudio(t, b.store, newAudio(p.ID, "b"))
		if ok, err := b.store.LeaseSynthesis(ctx, b2.ID, b2.Revision, "h", b.clock.Now().Add(time.Minute)); err != nil || !ok {
			t.Fatalf("LeaseSynthesis = %v, %v", ok, err)
		}
		live := fmt.Sprintf("live-%d", b2.ID)
		if ok, err := b.store.ReportSynthesis(ctx, b2.ID, "h", narrator.SynthesisProgress{Revision: b2.Revision,
			RenderProgress: narrator.RenderProgress{UnitsDone: 1, UnitsTotal: 2, LiveKey: live + "/" + narrator.LivePlaylistName},
			StartedAt:      b.clock.Now()}); err != nil || !ok {
			t.Fatalf("ReportSynthesis = %v, %v", ok, err)
		}
		got, err = b.store.MediaAccess(ctx, live)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "access of the live folder", got, access)
		if err := b.store.ReleaseSynthesisLeases(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.MediaAccess(ctx, live)
		wantCode(t, err, narrator.ENOTFOUND)
	}},
}
