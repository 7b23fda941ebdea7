package storetest

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
)

var embedLookupTests = []test{
	{"ByExternalIDNeverByAudioID", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		first := mustAudio(t, b.store, p.ID, "")
		// An external ID that is also the other audio's ID, as CMS post IDs
		// often are: the lookup finds the audio with that external ID.
		second := mustAudio(t, b.store, p.ID, itoa(first.ID))
		keys := mustFinish(t, b.store, second, "t1")
		got, err := b.store.FindAudioByExternalID(ctx, p.ID, itoa(first.ID))
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "audio", got.ID, second.ID)
		if m, _ := got.MediaOf(narrator.ContentTypeMP3); m.Key != keys[narrator.ContentTypeMP3] {
			t.Errorf("media of the found audio = %+v, want its published keys", got.Media)
		}
		_, err = b.store.FindAudioByExternalID(ctx, p.ID, itoa(second.ID))
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.FindAudioByExternalID(ctx, p.ID, "")
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.FindAudioByExternalID(ctx, mustProject(t, b.store).ID, itoa(first.ID))
		wantCode(t, err, narrator.ENOTFOUND)
		if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(second.ID)); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.FindAudioByExternalID(ctx, p.ID, itoa(first.ID))
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"ByArticleURLNewestLive", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		const url = "https://news.example/2026/library?x=1"
		mk := func(ext, articleURL string) *narrator.Audio {
			b.clock.Advance(time.Minute)
			a := newAudio(p.ID, ext)
			a.ArticleURL = articleURL
			return mustCreateAudio(t, b.store, a)
		}
		older := mk("a", url)
		newer := mk("b", url)
		mk("c", url+"&y=2")
		noURL := mk("d", "")
		mustFinish(t, b.store, newer, "n")
		got, err := b.store.FindAudioByArticleURL(ctx, p.ID, url)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "newest audio of the URL", got.ID, newer.ID)
		if m, _ := got.MediaOf(narrator.ContentTypeM3U8); m.Key == "" {
			t.Errorf("media of the found audio = %+v, want its published keys", got.Media)
		}
		if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(newer.ID)); err != nil {
			t.Fatal(err)
		}
		got, err = b.store.FindAudioByArticleURL(ctx, p.ID, url)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "newest live audio of the URL", got.ID, older.ID)
		for _, c := range []struct {
			name    string
			project int64
			url     string
		}{
			{"unknown URL", p.ID, "https://news.example/other"},
			{"prefix of a URL", p.ID, "https://news.example/2026/library"},
			{"no URL", p.ID, ""},
			{"another project", mustProject(t, b.store).ID, url},
			{"not UTF-8", p.ID, "https://news.example/\xff"},
		} {
			_, err := b.store.FindAudioByArticleURL(ctx, c.project, c.url)
			if narrator.ErrorCode(err) != narrator.ENOTFOUND {
				t.Errorf("%s: error %v, want ENOTFOUND (audio without URL: %d)", c.name, err, noURL.ID)
			}
		}
	}},
}

var listenTests = []test{
	{"DraftsAreNotCounted", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		draft := mustAudio(t, b.store, p.ID, "draft")
		mustSetPublication(t, b.store, narrator.Publication{AudioID: draft.ID, State: narrator.PublicationDraft})
		tally := narrator.ListenTally{ProjectID: p.ID, AudioID: draft.ID, Event: narrator.ListenPlay, Day: epoch, Count: 3}
		if err := b.store.RecordListens(ctx, []narrator.ListenTally{tally}); err != nil {
			t.Fatalf("RecordListens of a draft: %v, want it dropped without error", err)
		}
		got, err := b.store.AudioListens(ctx, draft.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "a draft's listens", got, narrator.ListenCounts{})
	}},
	{"CountsPerAudioAndProject", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a1 := mustAudio(t, b.store, p.ID, "one")
		a2 := mustAudio(t, b.store, p.ID, "two")
		other := mustAudio(t, b.store, mustProject(t, b.store).ID, "one")
		day1 := time.Date(2026, 5, 1, 23, 59, 0, 0, time.UTC)
		day2 := day1.Add(2 * time.Minute) // the next UTC day
		record := func(projectID, audioID int64, event string, at time.Time) {
			t.Helper()
			tally := narrator.ListenTally{ProjectID: projectID, AudioID: audioID, Event: event, Day: at, Count: 1}
			if err := b.store.RecordListens(ctx, []narrator.ListenTally{tally}); err != nil {
				t.Fatalf("RecordListens(%+v): %v", tally, err)
			}
		}
		record(p.ID, a1.ID, narrator.ListenLoad, day1)
		record(p.ID, a1.ID, narrator.ListenPlay, day1)
		record(p.ID, a1.ID, narrator.ListenPlay, day1)
		record(p.ID, a1.ID, narrator.ListenProgress25, day2)
		record(p.ID, a1.ID, narrator.ListenComplete, day2)
		record(p.ID, a2.ID, narrator.ListenPlay, day2)
		record(other.ProjectID, other.ID, narrator.ListenPlay, day2)

		got, err := b.store.AudioListens(ctx, a1.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "audio 1", got, narrator.ListenCounts{Loads: 1, Plays: 2, Progress25: 1, Completes: 1})
		got, err = b.store.AudioListens(ctx, a2.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "audio 2", got, narrator.ListenCounts{Plays: 1})

		pl, err := b.store.ProjectListens(ctx, p.ID, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "project", pl, &narrator.ProjectListens{
			Total: narrator.ListenCounts{Loads: 1, Plays: 3, Progress25: 1, Completes: 1},
			Days: []narrator.DailyListens{
				{Day: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Counts: narrator.ListenCounts{Loads: 1, Plays: 2}},
				{Day: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC), Counts: narrator.ListenCounts{Plays: 1, Progress25: 1, Completes: 1}},
			},
		})
		// since cuts the days, not the totals; any time of a day counts
		// from that day's start.
		pl, err = b.store.ProjectListens(ctx, p.ID, day2.Add(12*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "project since day 2", pl, &narrator.ProjectListens{
			Total: narrator.ListenCounts{Loads: 1, Plays: 3, Progress25: 1, Completes: 1},
			Days: []narrator.DailyListens{
				{Day: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC), Counts: narrator.ListenCounts{Plays: 1, Progress25: 1, Completes: 1}},
			},
		})
		pl, err = b.store.ProjectListens(ctx, p.ID, day2.AddDate(0, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "project since a day without listens", pl, &narrator.ProjectListens{
			Total: narrator.ListenCounts{Loads: 1, Plays: 3, Progress25: 1, Completes: 1},
			Days:  []narrator.DailyListens{},
		})
	}},
	{"Refused", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "x")
		gone := mustAudio(t, b.store, p.ID, "gone")
		if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(gone.ID)); err != nil {
			t.Fatal(err)
		}
		now := b.clock.Now()
		tally := func(projectID, audioID int64, event string, n int64) narrator.ListenTally {
			return narrator.ListenTally{ProjectID: projectID, AudioID: audioID, Event: event, Day: now, Count: n}
		}
		// A bad event or count refuses the whole batch.
		wantCode(t, b.store.RecordListens(ctx, []narrator.ListenTally{tally(p.ID, a.ID, narrator.ListenPlay, 1), tally(p.ID, a.ID, "pause", 1)}), narrator.EINVALID)
		wantCode(t, b.store.RecordListens(ctx, []narrator.ListenTally{tally(p.ID, a.ID, narrator.ListenPlay, 0)}), narrator.EINVALID)
		// Pairs that are not a live audio of the project are dropped, with
		// no error: the sender learns nothing of which exist.
		if err := b.store.RecordListens(ctx, []narrator.ListenTally{
			tally(p.ID, gone.ID, narrator.ListenPlay, 3),
			tally(mustProject(t, b.store).ID, a.ID, narrator.ListenPlay, 4),
			tally(p.ID, a.ID+1000, narrator.ListenPlay, 5),
		}); err != nil {
			t.Fatalf("RecordListens of unknown pairs: %v", err)
		}
		got, err := b.store.AudioListens(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "counts after refused events", got, narrator.ListenCounts{})
		pl, err := b.store.ProjectListens(ctx, p.ID, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "project after refused events", pl, &narrator.ProjectListens{Days: []narrator.DailyListens{}})
	}},
}
