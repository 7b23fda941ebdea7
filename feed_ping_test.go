package narrator_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestFeedChanged(t *testing.T) {
	t.Parallel()
	shown := narrator.Audio{ID: 1, ProjectID: 7, Title: "T", Body: "B", State: narrator.StateProcessed, Revision: 1,
		Metadata: map[string]string{"image": "a"}, Media: []narrator.Media{{ContentType: narrator.ContentTypeMP3, Key: "k/a.mp3"}}}
	with := func(change func(a *narrator.Audio)) *narrator.Audio {
		a := shown
		a.Metadata = map[string]string{"image": "a"}
		a.Media = []narrator.Media{{ContentType: narrator.ContentTypeMP3, Key: "k/a.mp3"}}
		change(&a)
		return &a
	}
	unprocessed := with(func(a *narrator.Audio) { a.State = narrator.StateUnprocessed })
	for _, tc := range []struct {
		name          string
		before, after *narrator.Audio
		want          bool
	}{
		{"create", nil, unprocessed, false},
		{"import of a processed audio", nil, &shown, true},
		{"finish", unprocessed, &shown, true},
		{"re-render", &shown, unprocessed, true},
		{"delete", &shown, with(func(a *narrator.Audio) { a.Deleted = true }), true},
		{"title", &shown, with(func(a *narrator.Audio) { a.Title = "U" }), true},
		{"metadata", &shown, with(func(a *narrator.Audio) { a.Metadata["image"] = "b" }), true},
		{"media", &shown, with(func(a *narrator.Audio) { a.Media[0].Key = "k/b.mp3" }), true},
		{"nothing the feed shows", &shown, with(func(a *narrator.Audio) { a.ExternalID = "x" }), false},
		{"an audio outside the feed", unprocessed, with(func(a *narrator.Audio) { a.State = narrator.StateFailed }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := narrator.FeedChanged(tc.before, tc.after); got != tc.want {
				t.Errorf("FeedChanged = %t, want %t", got, tc.want)
			}
			if got := narrator.ChangeEffects(tc.before, tc.after).PingFeed; got != tc.want {
				t.Errorf("ChangeEffects(…).PingFeed = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestFeedPingCoalesces checks that the changes of one window ask for one
// ping, due at the window's end, and a change at that end for the next.
func TestFeedPingCoalesces(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
	end := start.Add(narrator.FeedPingWindow)
	want := narrator.FeedPingJob{ProjectID: 7, At: end}
	for _, d := range []time.Duration{0, time.Second, narrator.FeedPingWindow - time.Nanosecond} {
		if got := narrator.FeedPing(7, start.Add(d)); got != want {
			t.Errorf("FeedPing at +%s = %+v, want %+v", d, got, want)
		}
	}
	if got := narrator.FeedPing(7, end); got.At != end.Add(narrator.FeedPingWindow) {
		t.Errorf("FeedPing at the window's end is due %s, want the next window's end", got.At)
	}
}

func TestPublicationPings(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	for _, tc := range []struct {
		name string
		p    narrator.Publication
		want []narrator.FeedPingJob
	}{
		{"published", narrator.Publication{State: narrator.PublicationPublished}, []narrator.FeedPingJob{narrator.FeedPing(3, now)}},
		{"scheduled", narrator.Publication{State: narrator.PublicationScheduled, PublishAt: later},
			[]narrator.FeedPingJob{narrator.FeedPing(3, now), narrator.FeedPing(3, later)}},
		{"scheduled in the past", narrator.Publication{State: narrator.PublicationScheduled, PublishAt: now.Add(-time.Hour)},
			[]narrator.FeedPingJob{narrator.FeedPing(3, now)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, narrator.PublicationPings(3, tc.p, now)); diff != "" {
				t.Errorf("PublicationPings (-want +got):\n%s", diff)
			}
		})
	}
}
