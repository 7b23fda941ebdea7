package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

var audioTests = []test{
	{"Create", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		in := newAudio(p.ID, "ext-1")
		a := mustCreateAudio(t, b.store, newAudio(p.ID, "ext-1"))
		if a.ID == 0 {
			t.Fatal("no ID")
		}
		want := *in
		want.ID = a.ID
		want.State = narrator.StateUnprocessed
		want.Revision = 1
		want.CreatedAt, want.UpdatedAt = epoch, epoch
		if len(a.Media) != 2 {
			t.Fatalf("media = %+v, want 2", a.Media)
		}
		want.Media = []narrator.Media{
			{ID: a.Media[0].ID, AudioID: a.ID, ContentType: narrator.ContentTypeMP3},
			{ID: a.Media[1].ID, AudioID: a.ID, ContentType: narrator.ContentTypeM3U8},
		}
		if a.Media[0].ID == 0 || a.Media[1].ID == 0 || a.Media[0].ID == a.Media[1].ID {
			t.Errorf("media IDs = %d, %d", a.Media[0].ID, a.Media[1].ID)
		}
		wantAudio(t, a, &want)
		wantAudio(t, mustFindAudio(t, b.store, p.ID, itoa(a.ID)), &want)
		wantEqual(t, "synthesis jobs", b.rec.Synthesized(), []SynthesizeCall{{a.ID, 1}})
		if got := mustProjectCount(t, b.store, p); got != 1 {
			t.Errorf("AudioCount = %d, want 1", got)
		}
	}},
	{"CreateMinimal", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustCreateAudio(t, b.store, &narrator.Audio{ProjectID: p.ID, Body: "Just a body."})
		got := mustFindAudio(t, b.store, p.ID, itoa(a.ID))
		if got.ExternalID != "" || got.Title != "" || got.Metadata == nil || len(got.Metadata) != 0 {
			t.Fatalf("minimal audio = %+v, want empty fields and empty (non-nil) metadata", got)
		}
		wantAudio(t, got, a)
	}},
	{"CreateErrors", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		_, err := b.store.CreateAudio(ctx, newAudio(999, ""))
		wantCode(t, err, narrator.ENOTFOUND)
		for name, mod := range map[string]func(a *narrator.Audio){
			"blank body":  func(a *narrator.Audio) { a.Body = " \n " },
			"long body":   func(a *narrator.Audio) { a.Body = strings.Repeat("é", narrator.MaxBodyChars+1) },
			"bad url":     func(a *narrator.Audio) { a.ArticleURL = "ftp://x" },
			"external id": func(a *narrator.Audio) { a.ExternalID = " x" },
			"NUL in body": func(a *narrator.Audio) { a.Body = "a\x00b" },
			"bad UTF-8":   func(a *narrator.Audio) { a.Title = "\xff" },
			"NUL in meta": func(a *narrator.Audio) { a.Metadata = map[string]string{"k": "\x00"} },
		} {
			a := newAudio(p.ID, "")
			mod(a)
			if _, err := b.store.CreateAudio(ctx, a); narrator.ErrorCode(err) != narrator.EINVALID {
				t.Errorf("%s: err = %v, want EINVALID", name, err)
			}
		}
		if n := len(b.rec.Synthesized()); n != 0 {
			t.Errorf("%d jobs enqueued by failed creates", n)
		}
		if got := mustProjectCount(t, b.store, p); got != 0 {
			t.Errorf("AudioCount = %d after failed creates", got)
		}
	}},
	{"CreateRepeatsExternalID", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		first := mustAudio(t, b.store, p.ID, "ext")

		// The same content again (a client retry): nothing changes.
		b.clock.Advance(time.Minute)
		again := newAudio(p.ID, "ext")
		created, err := b.store.CreateAudio(ctx, again)
		if err != nil || created {
			t.Fatalf("repeat create = %v, %v; want false, nil", created, err)
		}
		wantAudio(t, again, first)

		// New content under the same external_id updates the audio.
		now := b.clock.Advance(time.Minute)
		changed := newAudio(p.ID, "ext")
		changed.Body = "A new body."
		changed.Author = ""
		changed.Metadata = nil
		created, err = b.store.CreateAudio(ctx, changed)
		if err != nil || created {
			t.Fatalf("changed create = %v, %v; want false, nil", created, err)
		}
		want := *first
		want.Body, want.Author, want.Metadata = "A new body.", "", map[string]string{}
		want.Revision, want.UpdatedAt = 2, now
		wantAudio(t, changed, &want)
		wantAudio(t, mustFindAudio(t, b.store, p.ID, "ext"), &want)
		wantEqual(t, "synthesis jobs", b.rec.Synthesized(), []SynthesizeCall{{first.ID, 1}, {first.ID, 2}})
		if got := mustProjectCount(t, b.store, p); got != 1 {
			t.Errorf("AudioCount = %d, want 1", got)
		}

		// The same external_id in another project is another audio.
		p2 := mustProjectOf(t, b.store, p.AccountID)
		if other := mustAudio(t, b.store, p2.ID, "ext"); other.ID == first.ID {
			t.Error("external_id shared across projects")
		}
	}},
	{"ExternalIDReusableAfterDelete", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		first := mustAudio(t, b.store, p.ID, "ext")
		if _, err := b.store.DeleteAudio(t.Context(), p.ID, "ext"); err != nil {
			t.Fatal(err)
		}
		second := mustAudio(t, b.store, p.ID, "ext")
		if second.ID == first.ID {
			t.Fatal("deleted audio revived")
		}
		if got := mustFindAudio(t, b.store, p.ID, "ext"); got.ID != second.ID {
			t.Fatalf("FindAudio(ext) = %d, want %d", got.ID, second.ID)
		}
	}},
	{"FindRefs", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		other := mustProjectOf(t, b.store, p.AccountID)
		a := mustAudio(t, b.store, p.ID, "article-1")
		// In the other project, an audio whose numeric id we will use as
		// an external_id of p.
		o := mustAudio(t, b.store, other.ID, "")
		numeric := mustAudio(t, b.store, p.ID, itoa(o.ID))
		// An external_id equal to a's numeric ID: the ID wins.
		shadow := mustAudio(t, b.store, p.ID, itoa(a.ID))
		padded := mustAudio(t, b.store, p.ID, "0"+itoa(a.ID))

		for _, tc := range []struct {
			ref  string
			want int64
		}{
			{itoa(a.ID), a.ID},
			{"article-1", a.ID},
			{itoa(o.ID), numeric.ID},       // not an ID in p: tried as external_id
			{itoa(numeric.ID), numeric.ID}, // its own ID
			{itoa(shadow.ID), shadow.ID},
			{"0" + itoa(a.ID), padded.ID}, // not canonical: external_id only
		} {
			got, err := b.store.FindAudio(ctx, p.ID, tc.ref)
			if err != nil {
				t.Fatalf("FindAudio(%q): %v", tc.ref, err)
			}
			if got.ID != tc.want {
				t.Errorf("FindAudio(%q) = audio %d, want %d", tc.ref, got.ID, tc.want)
			}
		}
		for _, ref := range []string{"", "nope", "999999", "-1", "ARTICLE-1", "article-1\x00", "\xff"} {
			_, err := b.store.FindAudio(ctx, p.ID, ref)
			wantCode(t, err, narrator.ENOTFOUND)
		}
		_, err := b.store.FindAudio(ctx, other.ID, itoa(a.ID))
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.FindAudio(ctx, other.ID, "article-1")
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"CountFollowsWrites", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		other := mustProjectOf(t, b.store, p.AccountID)
		mustAudio(t, b.store, other.ID, "x")
		count := func(want int) {
			t.Helper()
			if got := mustProjectCount(t, b.store, p); got != want {
				t.Fatalf("AudioCount = %d, want %d", got, want)
			}
			list, err := b.store.ListProjects(ctx, p.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			if list[0].ID != p.ID || list[0].AudioCount != want {
				t.Fatalf("listed project %d with AudioCount %d, want %d with %d", list[0].ID, list[0].AudioCount, p.ID, want)
			}
			if _, total, err := b.store.SearchAudios(ctx, p.ID, "", time.Time{}, 1, 1); err != nil || total != want {
				t.Fatalf("search total = %d, %v; want %d", total, err, want)
			}
		}
		count(0)
		mustAudio(t, b.store, p.ID, "x")
		mustAudio(t, b.store, p.ID, "y")
		mustAudio(t, b.store, p.ID, "")
		count(3)
		if _, err := b.store.UpdateAudio(ctx, p.ID, "x", narrator.AudioUpdate{Body: ptr("Changed."), ExternalID: ptr("x2")}); err != nil {
			t.Fatal(err)
		}
		count(3)
		// A create with a live external ID updates that audio.
		if created, err := b.store.CreateAudio(ctx, newAudio(p.ID, "y")); err != nil || created {
			t.Fatalf("create over y = %v, %v", created, err)
		}
		count(3)
		if _, err := b.store.DeleteAudio(ctx, p.ID, "y"); err != nil {
			t.Fatal(err)
		}
		count(2)
		_, err := b.store.DeleteAudio(ctx, p.ID, "y")
		wantCode(t, err, narrator.ENOTFOUND)
		count(2)
		// The external ID of a deleted audio makes a new one.
		mustAudio(t, b.store, p.ID, "y")
		count(3)
		b.rec.FailWith(errBroken)
		if _, err := b.store.CreateAudio(ctx, newAudio(p.ID, "z")); err == nil {
			t.Fatal("create succeeded without its job")
		}
		b.rec.FailWith(nil)
		if _, err := b.store.CreateAudio(ctx, newAudio(p.ID+1000, "z")); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Fatalf("create in a missing project: %v", err)
		}
		count(3)
		if got := mustProjectCount(t, b.store, other); got != 1 {
			t.Errorf("other project's AudioCount = %d, want 1", got)
		}
	}},
}

var updateTests = []test{
	{"NothingGivenKeepsAll", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "ext")
		b.clock.Advance(time.Minute)
		got, err := b.store.UpdateAudio(t.Context(), p.ID, "ext", narrator.AudioUpdate{})
		if err != nil {
			t.Fatal(err)
		}
		wantAudio(t, got, a)
		// The same values given explicitly change nothing either.
		got, err = b.store.UpdateAudio(t.Context(), p.ID, itoa(a.ID), narrator.AudioUpdate{
			Title: ptr(a.Title), Body: ptr(a.Body), ExternalID: ptr("ext"),
			Metadata: map[string]string{"section": "news"}, MetadataSet: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		wantAudio(t, got, a)
		wantAudio(t, mustFindAudio(t, b.store, p.ID, "ext"), a)
		if n := len(b.rec.Synthesized()); n != 1 {
			t.Errorf("%d synthesis jobs, want 1", n)
		}
	}},
	{"MetadataAloneDoesNotResynthesize", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a, keys := mustFinishedAudio(t, b.store, p.ID, "ext", "v1")

		now := b.clock.Advance(time.Minute)
		got, err := b.store.UpdateAudio(ctx, p.ID, "ext", narrator.AudioUpdate{
			Metadata: map[string]string{"k": "v"}, MetadataSet: true,
			ArticleURL: ptr("https://example.com/b"), ExternalID: ptr("ext-2"),
		})
		if err != nil {
			t.Fatal(err)
		}
		want := *a
		want.Metadata = map[string]string{"k": "v"}
		want.ArticleURL, want.ExternalID, want.UpdatedAt = "https://example.com/b", "ext-2", now
		wantAudio(t, got, &want)
		wantAudio(t, mustFindAudio(t, b.store, p.ID, "ext-2"), &want)
		if got.State != narrator.StateProcessed || got.Media[0].Key != keys[narrator.ContentTypeMP3] {
			t.Errorf("state %q, media %+v: want processed and kept", got.State, got.Media)
		}
		_, err = b.store.FindAudio(ctx, p.ID, "ext")
		wantCode(t, err, narrator.ENOTFOUND)

		// "metadata: {}" clears; omitted metadata keeps.
		got, err = b.store.UpdateAudio(ctx, p.ID, "ext-2", narrator.AudioUpdate{Metadata: map[string]string{}, MetadataSet: true})
		if err != nil || len(got.Metadata) != 0 || got.Metadata == nil {
			t.Fatalf("cleared metadata = %#v, %v", got.Metadata, err)
		}
		// Removing the external_id.
		got, err = b.store.UpdateAudio(ctx, p.ID, "ext-2", narrator.AudioUpdate{ExternalID: ptr("")})
		if err != nil || got.ExternalID != "" {
			t.Fatalf("removed external_id = %q, %v", got.ExternalID, err)
		}
		if got := mustFindAudio(t, b.store, p.ID, itoa(a.ID)); got.ExternalID != "" || got.Revision != 1 {
			t.Fatalf("after updates = %+v", got)
		}
		wantEqual(t, "synthesis jobs", b.rec.Synthesized(), []SynthesizeCall{{a.ID, 1}})
	}},
	{"SpokenChangeResynthesizes", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "ext")
		keys := mustFinish(t, b.store, a, "v1")
		for i, u := range []narrator.AudioUpdate{
			{Title: ptr("New title")},
			{Body: ptr("New body.")},
			{Author: ptr("")},
		} {
			now := b.clock.Advance(time.Minute)
			if i == 1 {
				// A failed revision is retried by the next change.
				if err := b.store.FailAudio(t.Context(), a.ID, 2, "engine broke"); err != nil {
					t.Fatal(err)
				}
			}
			got, err := b.store.UpdateAudio(t.Context(), p.ID, "ext", u)
			if err != nil {
				t.Fatalf("update %d: %v", i, err)
			}
			if got.State != narrator.StateUnprocessed || got.Error != "" || got.Revision != i+2 || !got.UpdatedAt.Equal(now) {
				t.Errorf("update %d: state %q error %q revision %d updated %v", i, got.State, got.Error, got.Revision, got.UpdatedAt)
			}
			// Media keys stay until the new revision is published.
			if m, _ := got.MediaOf(narrator.ContentTypeMP3); m.Key != keys[narrator.ContentTypeMP3] {
				t.Errorf("update %d: mp3 key = %q, want %q", i, m.Key, keys[narrator.ContentTypeMP3])
			}
			wantAudio(t, mustFindAudio(t, b.store, p.ID, "ext"), got)
		}
		got := mustFindAudio(t, b.store, p.ID, "ext")
		if got.Title != "New title" || got.Body != "New body." || got.Author != "" || got.DurationMS != 1234 {
			t.Errorf("merged audio = %+v", got)
		}
		wantEqual(t, "synthesis jobs", b.rec.Synthesized(),
			[]SynthesizeCall{{a.ID, 1}, {a.ID, 2}, {a.ID, 3}, {a.ID, 4}})
	}},
	{"Errors", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "a")
		other := mustAudio(t, b.store, p.ID, "b")
		_, err := b.store.UpdateAudio(ctx, p.ID, itoa(a.ID), narrator.AudioUpdate{ExternalID: ptr("b")})
		wantCode(t, err, narrator.EINVALID)
		if msg := narrator.ErrorMessage(err); !strings.Contains(msg, itoa(other.ID)) || !strings.Contains(msg, "external_id") {
			t.Errorf("message %q should name external_id and audio %d", msg, other.ID)
		}
		_, err = b.store.UpdateAudio(ctx, p.ID, "a", narrator.AudioUpdate{Body: ptr("  ")})
		wantCode(t, err, narrator.EINVALID)
		_, err = b.store.UpdateAudio(ctx, p.ID, "a", narrator.AudioUpdate{ArticleURL: ptr("nope")})
		wantCode(t, err, narrator.EINVALID)
		_, err = b.store.UpdateAudio(ctx, p.ID, "zzz", narrator.AudioUpdate{Title: ptr("x")})
		wantCode(t, err, narrator.ENOTFOUND)
		p2 := mustProjectOf(t, b.store, p.AccountID)
		_, err = b.store.UpdateAudio(ctx, p2.ID, itoa(a.ID), narrator.AudioUpdate{Title: ptr("x")})
		wantCode(t, err, narrator.ENOTFOUND)
		wantAudio(t, mustFindAudio(t, b.store, p.ID, "a"), a)
	}},
}

var deleteTests = []test{
	{"Unprocessed", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "ext")
		keep := mustAudio(t, b.store, p.ID, "keep")
		b.clock.Advance(time.Minute)
		got, err := b.store.DeleteAudio(ctx, p.ID, "ext")
		if err != nil {
			t.Fatal(err)
		}
		want := *a
		want.Deleted = true
		wantAudio(t, got, &want)
		if n := len(b.rec.DeletedMedia()); n != 0 {
			t.Errorf("%d media removals for an audio without media files", n)
		}
		for _, ref := range []string{"ext", itoa(a.ID)} {
			_, err = b.store.FindAudio(ctx, p.ID, ref)
			wantCode(t, err, narrator.ENOTFOUND)
			_, err = b.store.UpdateAudio(ctx, p.ID, ref, narrator.AudioUpdate{Title: ptr("x")})
			wantCode(t, err, narrator.ENOTFOUND)
			_, err = b.store.DeleteAudio(ctx, p.ID, ref)
			wantCode(t, err, narrator.ENOTFOUND)
		}
		list, err := b.store.ListAudios(ctx, p.ID, time.Time{}, 1, 50)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "listed", ids(list), []int64{keep.ID})
		if got := mustProjectCount(t, b.store, p); got != 1 {
			t.Errorf("AudioCount = %d, want 1", got)
		}
	}},
	{"ProcessedRemovesMedia", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		keys := mustFinish(t, b.store, a, "v1")
		got, err := b.store.DeleteAudio(t.Context(), p.ID, itoa(a.ID))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Deleted || got.State != narrator.StateProcessed {
			t.Errorf("deleted audio = %+v, want Deleted and state processed", got)
		}
		wantEqual(t, "media removals", b.rec.DeletedMedia(),
			[][]string{{keys[narrator.ContentTypeMP3], keys[narrator.ContentTypeM3U8]}})
	}},
}

var listTests = []test{
	{"OrderPagingSince", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		other := mustProjectOf(t, b.store, p.AccountID)
		var made []int64 // oldest first
		var times []time.Time
		for i := 0; i < 7; i++ {
			if i != 3 && i != 5 { // 2 and 3, 4 and 5 share a created_at
				b.clock.Advance(time.Hour)
			}
			times = append(times, b.clock.Now())
			made = append(made, mustAudio(t, b.store, p.ID, "").ID)
			mustAudio(t, b.store, other.ID, "")
		}
		newestFirst := make([]int64, len(made))
		for i, id := range made {
			newestFirst[len(made)-1-i] = id
		}
		all, err := b.store.ListAudios(ctx, p.ID, time.Time{}, 1, 50)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "all", ids(all), newestFirst)
		var paged []int64
		for page := 1; page <= 3; page++ {
			got, err := b.store.ListAudios(ctx, p.ID, time.Time{}, page, 3)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, ids(got)...)
		}
		wantEqual(t, "pages 1-3 of 3", paged, newestFirst)
		for _, page := range []int{4, 1000, 1 << 40} {
			past, err := b.store.ListAudios(ctx, p.ID, time.Time{}, page, 3)
			if err != nil || past == nil || len(past) != 0 {
				t.Fatalf("page %d = %#v, %v; want empty slice", page, past, err)
			}
		}
		since, err := b.store.ListAudios(ctx, p.ID, times[4], 1, 50)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "since", ids(since), newestFirst[:3])
		future, err := b.store.ListAudios(ctx, p.ID, times[6].Add(time.Microsecond), 1, 50)
		if err != nil || future == nil || len(future) != 0 {
			t.Fatalf("since future = %#v, %v; want empty slice", future, err)
		}
		empty, err := b.store.ListAudios(ctx, 999, time.Time{}, 1, 50)
		if err != nil || empty == nil || len(empty) != 0 {
			t.Fatalf("missing project = %#v, %v; want empty slice", empty, err)
		}
	}},
	{"DeepPagesAfterDeletes", func(t *testing.T, b *bundle) {
		// A page is a range of the project's audio numbers
		// (narrator.PageSeqs): deletes leave short pages, even empty ones,
		// but move no audio to another page, and every live audio is on
		// exactly one page, newest first.
		ctx := t.Context()
		p := mustProject(t, b.store)
		var live []int64 // newest first
		for i := range 20 {
			b.clock.Advance(time.Minute)
			a := mustAudio(t, b.store, p.ID, "")
			// Deletes numbers 1, 4, 7, 10, 13, 16, 19 and 9 to 11: page 4
			// of 3, numbers 9 to 11, empties.
			if i%3 == 0 || (i >= 8 && i <= 10) {
				if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(a.ID)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			live = append([]int64{a.ID}, live...)
		}
		wantEqual(t, "pages of 3", pagedIDs(t, b.store, p.ID, time.Time{}, 3, 8), live)
		four, err := b.store.ListAudios(ctx, p.ID, time.Time{}, 4, 3)
		if err != nil || four == nil || len(four) != 0 {
			t.Errorf("page 4 of 3, all deleted = %#v, %v; want an empty slice", four, err)
		}
		two, err := b.store.ListAudios(ctx, p.ID, time.Time{}, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		// Numbers 15 to 17, of which 16 is deleted.
		wantEqual(t, "page 2 of 3", ids(two), []int64{live[2], live[3]})
	}},
	{"PeriodPages", func(t *testing.T, b *bundle) {
		// A period filters within the pages of the whole list: each
		// audio created in the period is on exactly one page, in order,
		// and the pages of older audios hold none.
		ctx := t.Context()
		p := mustProject(t, b.store)
		var recent []int64 // newest first
		var since time.Time
		for i := range 11 {
			b.clock.Advance(time.Hour)
			if i == 4 {
				since = b.clock.Now()
			}
			a := mustAudio(t, b.store, p.ID, "")
			if i >= 4 {
				recent = append([]int64{a.ID}, recent...)
			}
		}
		wantEqual(t, "pages of 2 since the fifth", pagedIDs(t, b.store, p.ID, since, 2, 6), recent)
		for page := 5; page <= 6; page++ {
			got, err := b.store.ListAudios(ctx, p.ID, since, page, 2)
			if err != nil || len(got) != 0 {
				t.Errorf("page %d of 2 since the fifth = %v, %v; want none (older audios)", page, ids(got), err)
			}
		}
	}},
	{"FullAudiosWithMedia", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a1 := mustAudio(t, b.store, p.ID, "one")
		mustFinish(t, b.store, a1, "v1")
		a2 := mustAudio(t, b.store, p.ID, "two")
		list, err := b.store.ListAudios(ctx, p.ID, time.Time{}, 1, 50)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("listed %d audios, want 2", len(list))
		}
		wantAudio(t, list[0], mustFindAudio(t, b.store, p.ID, itoa(a2.ID)))
		wantAudio(t, list[1], mustFindAudio(t, b.store, p.ID, itoa(a1.ID)))
		if list[1].Media[0].Key == "" || list[1].Media[0].ContentType != narrator.ContentTypeMP3 {
			t.Errorf("media of a processed audio = %+v", list[1].Media)
		}
	}},
}

var synthesisTests = []test{
	{"FinishTwice", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "ext")
		now := b.clock.Advance(time.Minute)
		keys := mustFinish(t, b.store, a, "v1")
		got := mustFindAudio(t, b.store, p.ID, "ext")
		want := *a
		want.State, want.DurationMS, want.UpdatedAt = narrator.StateProcessed, 1234, now
		want.Media = []narrator.Media{
			{ID: a.Media[0].ID, AudioID: a.ID, ContentType: narrator.ContentTypeMP3, Key: keys[narrator.ContentTypeMP3],
				Bytes: 100 * int64(len(keys[narrator.ContentTypeMP3]))},
			{ID: a.Media[1].ID, AudioID: a.ID, ContentType: narrator.ContentTypeM3U8, Key: keys[narrator.ContentTypeM3U8],
				Bytes: 100 * int64(len(keys[narrator.ContentTypeM3U8]))},
		}
		wantAudio(t, got, &want)
		if n := len(b.rec.DeletedMedia()); n != 0 {
			t.Errorf("first finish enqueued %d removals", n)
		}

		// Stale and future revisions are refused and change nothing.
		for _, rev := range []int{0, 2} {
			err := b.store.FinishAudio(ctx, a.ID, rev, rendering(map[string]string{narrator.ContentTypeMP3: "x.mp3"}, 1))
			wantCode(t, err, narrator.ECONFLICT)
		}
		err := b.store.FinishAudio(ctx, 999, 1, rendering(keys, 1))
		wantCode(t, err, narrator.ENOTFOUND)

		// A new revision's result replaces the keys and removes the old files.
		upd, err := b.store.UpdateAudio(ctx, p.ID, "ext", narrator.AudioUpdate{Body: ptr("Other body.")})
		if err != nil {
			t.Fatal(err)
		}
		err = b.store.FinishAudio(ctx, a.ID, 1, rendering(map[string]string{narrator.ContentTypeMP3: "old.mp3"}, 1))
		wantCode(t, err, narrator.ECONFLICT)
		keys2 := mustFinish(t, b.store, upd, "v2")
		got = mustFindAudio(t, b.store, p.ID, "ext")
		if got.State != narrator.StateProcessed || got.Revision != 2 || got.Media[0].Key != keys2[narrator.ContentTypeMP3] ||
			got.Media[1].Key != keys2[narrator.ContentTypeM3U8] || got.Media[0].Bytes != 100*int64(len(keys2[narrator.ContentTypeMP3])) {
			t.Errorf("audio finished again = %+v", got)
		}
		wantEqual(t, "media removals", b.rec.DeletedMedia(),
			[][]string{{keys[narrator.ContentTypeMP3], keys[narrator.ContentTypeM3U8]}})
		wantAudio(t, mustFindAudio(t, b.store, p.ID, itoa(a.ID)), got)
	}},
	{"FinishDeleted", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		if _, err := b.store.DeleteAudio(t.Context(), p.ID, itoa(a.ID)); err != nil {
			t.Fatal(err)
		}
		err := b.store.FinishAudio(t.Context(), a.ID, 1, rendering(map[string]string{narrator.ContentTypeMP3: "x.mp3"}, 1))
		wantCode(t, err, narrator.ECONFLICT)
		got, _, err := b.store.AudioForSynthesis(t.Context(), a.ID)
		if err != nil || got.State != narrator.StateUnprocessed || got.Media[0].Key != "" {
			t.Fatalf("after refused finish = %+v, %v", got, err)
		}
	}},
	{"Fail", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		// A stale revision is a no-op.
		if err := b.store.FailAudio(ctx, a.ID, 2, "stale"); err != nil {
			t.Fatal(err)
		}
		if got := mustFindAudio(t, b.store, p.ID, itoa(a.ID)); got.State != narrator.StateUnprocessed {
			t.Fatalf("stale failure applied: %+v", got)
		}
		now := b.clock.Advance(time.Minute)
		if err := b.store.FailAudio(ctx, a.ID, 1, "The text could not be read."); err != nil {
			t.Fatal(err)
		}
		got := mustFindAudio(t, b.store, p.ID, itoa(a.ID))
		if got.State != narrator.StateFailed || got.Error != "The text could not be read." || !got.UpdatedAt.Equal(now) {
			t.Fatalf("failed audio = %+v", got)
		}
		// A late success of the same revision still finishes.
		mustFinish(t, b.store, got, "v1")
		got = mustFindAudio(t, b.store, p.ID, itoa(a.ID))
		if got.State != narrator.StateProcessed || got.Error != "" {
			t.Fatalf("published after failure = %+v", got)
		}
		// A duplicate job failing after a success does not undo it.
		if err := b.store.FailAudio(ctx, a.ID, 1, "late"); err != nil {
			t.Fatal(err)
		}
		if got := mustFindAudio(t, b.store, p.ID, itoa(a.ID)); got.State != narrator.StateProcessed {
			t.Fatalf("processed audio failed: %+v", got)
		}
		// Deleted audios are left alone.
		d := mustAudio(t, b.store, p.ID, "")
		if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(d.ID)); err != nil {
			t.Fatal(err)
		}
		if err := b.store.FailAudio(ctx, d.ID, 1, "x"); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := b.store.AudioForSynthesis(ctx, d.ID); got.State != narrator.StateUnprocessed {
			t.Fatalf("deleted audio failed: %+v", got)
		}
		wantCode(t, b.store.FailAudio(ctx, 999, 1, "x"), narrator.ENOTFOUND)
	}},
	{"AudioForSynthesis", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "ext")
		got, gotP, err := b.store.AudioForSynthesis(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantAudio(t, got, a)
		p.AudioCount = 1
		wantEqual(t, "project", gotP, p)
		if _, err := b.store.DeleteAudio(ctx, p.ID, "ext"); err != nil {
			t.Fatal(err)
		}
		got, _, err = b.store.AudioForSynthesis(ctx, a.ID)
		if err != nil || !got.Deleted {
			t.Fatalf("deleted audio for synthesis = %+v, %v; want Deleted", got, err)
		}
		_, _, err = b.store.AudioForSynthesis(ctx, 999)
		wantCode(t, err, narrator.ENOTFOUND)
	}},
}

var enqueueTests = []test{
	{"FailureRollsBack", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a, keys := mustFinishedAudio(t, b.store, p.ID, "kept", "v1")
		b.clock.Advance(time.Minute)
		b.rec.FailWith(errBroken)

		if _, err := b.store.CreateAudio(ctx, newAudio(p.ID, "new")); err == nil {
			t.Fatal("CreateAudio succeeded with a failing enqueuer")
		}
		_, err := b.store.FindAudio(ctx, p.ID, "new")
		wantCode(t, err, narrator.ENOTFOUND)
		if got := mustProjectCount(t, b.store, p); got != 1 {
			t.Errorf("AudioCount = %d after a failed create, want 1", got)
		}
		list, err := b.store.ListAudios(ctx, p.ID, time.Time{}, 1, 50)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "listed", ids(list), []int64{a.ID})

		if _, err := b.store.UpdateAudio(ctx, p.ID, "kept", narrator.AudioUpdate{Body: ptr("Changed.")}); err == nil {
			t.Fatal("UpdateAudio succeeded with a failing enqueuer")
		}
		if _, err := b.store.DeleteAudio(ctx, p.ID, "kept"); err == nil {
			t.Fatal("DeleteAudio succeeded with a failing enqueuer")
		}
		wantAudio(t, mustFindAudio(t, b.store, p.ID, "kept"), a)

		// Metadata alone enqueues nothing, so it still works.
		if _, err := b.store.UpdateAudio(ctx, p.ID, "kept", narrator.AudioUpdate{Metadata: map[string]string{"a": "b"}, MetadataSet: true}); err != nil {
			t.Fatalf("metadata update: %v", err)
		}

		// A second finish whose old-file removal cannot be enqueued is refused.
		b.rec.FailWith(nil)
		upd, err := b.store.UpdateAudio(ctx, p.ID, "kept", narrator.AudioUpdate{Body: ptr("Changed.")})
		if err != nil {
			t.Fatal(err)
		}
		b.rec.FailWith(errBroken)
		err = b.store.FinishAudio(ctx, a.ID, upd.Revision, rendering(map[string]string{narrator.ContentTypeMP3: "new.mp3"}, 1))
		if err == nil {
			t.Fatal("FinishAudio succeeded with a failing enqueuer")
		}
		if got := mustFindAudio(t, b.store, p.ID, "kept"); got.State != narrator.StateUnprocessed || got.Media[0].Key != keys[narrator.ContentTypeMP3] {
			t.Fatalf("after refused finish = %+v", got)
		}
		b.rec.FailWith(nil)
		wantEqual(t, "synthesis jobs", b.rec.Synthesized(), []SynthesizeCall{{a.ID, 1}, {a.ID, 2}})
	}},
}

// errBroken is the error of a failing enqueuer.
var errBroken = brokenError{}

type brokenError struct{}

func (brokenError) Error() string { return "queue is broken" }
