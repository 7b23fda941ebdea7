package storetest

import (
	"testing"

	"github.com/narrator/narrator"
)

var effectTests = []test{
	// Every store takes a write's effects in the order narrator.Effects.Steps
	// gives: the account's row, the project's, the jobs, the webhook
	// deliveries, the feed's ping (which enqueues nothing here: the project
	// has no feed). The expected steps below are the same for every store, so
	// two stores that differ cannot both pass.
	{"Order", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		mustWebhook(t, b.store, p.ID)
		a := mustAudio(t, b.store, p.ID, "e-1")
		wantEqual(t, "create", b.rec.Steps(), []string{"usage", "audio_count", "jobs", "job synthesize_audio"})

		title := "A new title"
		got, err := b.store.UpdateAudio(ctx, p.ID, "e-1", narrator.AudioUpdate{Title: &title})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "update of an unprocessed audio", b.rec.Steps(),
			[]string{"jobs", "supersede", "job synthesize_audio", "deliveries", "render audio.updated", "job webhook_delivery"})

		mustFinish(t, b.store, got, "one")
		wantEqual(t, "first finish", b.rec.Steps(),
			[]string{"usage", "deliveries", "render audio.processed", "job webhook_delivery", "ping"})

		body := "A new body."
		if got, err = b.store.UpdateAudio(ctx, p.ID, itoa(a.ID), narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "update of a processed audio", b.rec.Steps(),
			[]string{"usage", "jobs", "supersede", "job synthesize_audio", "deliveries", "render audio.updated", "job webhook_delivery", "ping"})

		mustFinish(t, b.store, got, "two")
		wantEqual(t, "finish that replaces media", b.rec.Steps(),
			[]string{"usage", "jobs", "job delete_media", "deliveries", "render audio.processed", "job webhook_delivery", "ping"})

		if got, err = b.store.ResynthesizeAudio(ctx, p.ID, "e-1"); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "resynthesize", b.rec.Steps(), []string{"usage", "jobs", "supersede", "job synthesize_audio", "ping"})

		if err := b.store.FailAudio(ctx, got.ID, got.Revision, "the engine broke"); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "failure", b.rec.Steps(),
			[]string{"usage", "deliveries", "render audio.failed", "job webhook_delivery"})

		if _, err := b.store.DeleteAudio(ctx, p.ID, "e-1"); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "delete", b.rec.Steps(),
			[]string{"usage", "audio_count", "jobs", "job delete_media", "deliveries", "render audio.deleted", "job webhook_delivery"})

		// A change that needs nothing besides its row takes no step.
		b2 := mustAudio(t, b.store, p.ID, "e-2")
		b.rec.Steps()
		url := "https://example.com/elsewhere"
		if _, err := b.store.UpdateAudio(ctx, p.ID, itoa(b2.ID), narrator.AudioUpdate{ArticleURL: &url}); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "update of the article URL", b.rec.Steps(), []string(nil))
	}},
}
