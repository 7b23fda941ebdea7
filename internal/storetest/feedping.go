package storetest

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// feedPingTests check which writes enqueue a ping of the WebSub hub of a
// project's podcast feed (narrator.FeedPingJob): the changes of what the
// feed shows, and only where the project has a turned-on feed and the
// store pings hubs.
func feedPingTests(newStore NewStoreFunc) []test {
	return []test{
		{"Changes", func(t *testing.T, b *bundle) {
			ctx := t.Context()
			p := mustProject(t, b.store)
			mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('p')))
			ping := narrator.FeedPing(p.ID, epoch)
			wantEqual(t, "pings after saving the feed", b.rec.Pings(), []narrator.FeedPingJob{ping})

			a := mustAudio(t, b.store, p.ID, "p-1")
			wantEqual(t, "pings after a create", len(b.rec.Pings()), 1)
			mustFinish(t, b.store, a, "one")
			title := "Retitled"
			retitled, err := b.store.UpdateAudio(ctx, p.ID, "p-1", narrator.AudioUpdate{Title: &title})
			if err != nil {
				t.Fatal(err)
			}
			mustFinish(t, b.store, retitled, "two")
			// An audio outside the feed changes nothing it shows.
			mustAudio(t, b.store, p.ID, "p-2")
			if _, err := b.store.DeleteAudio(ctx, p.ID, "p-2"); err != nil {
				t.Fatal(err)
			}
			due := epoch.Add(time.Hour)
			mustSetPublication(t, b.store, narrator.Publication{AudioID: a.ID, State: narrator.PublicationScheduled, PublishAt: due})
			if _, err := b.store.DeleteAudio(ctx, p.ID, "p-1"); err != nil {
				t.Fatal(err)
			}
			later := b.clock.Advance(narrator.FeedPingWindow)
			if _, err := b.store.RotateFeedToken(ctx, p.ID, feedToken('q')); err != nil {
				t.Fatal(err)
			}
			// Every change of one window asks for the same ping, which the
			// queue makes one job; a scheduled publication asks for one more
			// when it comes due.
			wantEqual(t, "pings", b.rec.Pings(), []narrator.FeedPingJob{ping,
				ping, ping, ping, // finish, retitle, finish
				ping, narrator.FeedPing(p.ID, due), // publication
				ping,                           // delete
				narrator.FeedPing(p.ID, later), // rotation
			})
		}},
		{"Access", func(t *testing.T, b *bundle) {
			ctx := t.Context()
			p := mustProject(t, b.store)
			mustSaveFeed(t, b.store, newFeed(p.ID, feedToken('a')))
			access, err := b.store.RotateEmbedSecret(ctx, p.ID, narrator.EmbedSecretPrefix+"ping")
			if err != nil {
				t.Fatal(err)
			}
			access.AllowedOrigins = []string{"https://acme.test"}
			if err := b.store.SetProjectAccess(ctx, &access); err != nil {
				t.Fatal(err)
			}
			wantEqual(t, "pings after changes of access the feed does not show", len(b.rec.Pings()), 1)
			access.Mode = narrator.AccessSigned
			if err := b.store.SetProjectAccess(ctx, &access); err != nil {
				t.Fatal(err)
			}
			wantEqual(t, "pings after signing the project", len(b.rec.Pings()), 2)
		}},
		{"NoFeed", func(t *testing.T, b *bundle) {
			p := mustProject(t, b.store)
			mustFinish(t, b.store, mustAudio(t, b.store, p.ID, "n-1"), "one")
			off := newFeed(p.ID, feedToken('o'))
			off.Enabled = false
			mustSaveFeed(t, b.store, off)
			mustFinish(t, b.store, mustAudio(t, b.store, p.ID, "n-2"), "two")
			wantEqual(t, "pings without a turned-on feed", b.rec.Pings(), []narrator.FeedPingJob(nil))
		}},
		{"NoHub", func(t *testing.T, b *bundle) {
			rec := &Recorder{noPings: true}
			s := newStore(t, b.clock.Now, rec)
			p := mustProject(t, s)
			mustSaveFeed(t, s, newFeed(p.ID, feedToken('h')))
			mustFinish(t, s, mustAudio(t, s, p.ID, "h-1"), "one")
			wantEqual(t, "pings of a store without a hub", rec.Pings(), []narrator.FeedPingJob(nil))
		}},
	}
}
