package storetest

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// testClips checks that a project's intro and outro are stored as they
// are given, apart from each other and from other projects', replaced,
// removed, and refused when invalid, and that setting one queues nothing.
func testClips(t *testing.T, b *bundle) {
	ctx := t.Context()
	acc := mustAccount(t, b.store, "Acme")
	proj := mustProjectOf(t, b.store, acc.ID)
	other := mustProjectOf(t, b.store, acc.ID)
	a := mustAudio(t, b.store, proj.ID, "")
	jobs := len(b.rec.Synthesized())

	_, err := b.store.Clip(ctx, proj.ID, narrator.ClipIntro)
	wantCode(t, err, narrator.ENOTFOUND)
	samples := make([]int16, 3200)
	for i := range samples {
		samples[i] = int16(i*37 - 30000) // negative and positive, every byte pattern differs
	}
	intro := &narrator.Clip{ProjectID: proj.ID, Kind: narrator.ClipIntro, Samples: samples, SampleRate: 32000}
	if err := b.store.SetClip(ctx, intro); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "UpdatedAt", intro.UpdatedAt.Equal(b.clock.Now()), true)
	got, err := b.store.Clip(ctx, proj.ID, narrator.ClipIntro)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "stored intro", *got, narrator.Clip{ProjectID: proj.ID, Kind: narrator.ClipIntro, Samples: samples,
		SampleRate: 32000, UpdatedAt: got.UpdatedAt})
	wantEqual(t, "stored intro's time", got.UpdatedAt.Equal(intro.UpdatedAt), true)
	_, err = b.store.Clip(ctx, proj.ID, narrator.ClipOutro)
	wantCode(t, err, narrator.ENOTFOUND)
	_, err = b.store.Clip(ctx, other.ID, narrator.ClipIntro)
	wantCode(t, err, narrator.ENOTFOUND)

	b.clock.Advance(time.Minute)
	longer := &narrator.Clip{ProjectID: proj.ID, Kind: narrator.ClipIntro, Samples: make([]int16, 16000), SampleRate: 16000}
	if err := b.store.SetClip(ctx, longer); err != nil {
		t.Fatal(err)
	}
	if got, err := b.store.Clip(ctx, proj.ID, narrator.ClipIntro); err != nil || len(got.Samples) != 16000 || got.SampleRate != 16000 {
		t.Errorf("replaced intro = %d samples at %d Hz, %v; want 16000 at 16000", len(got.Samples), got.SampleRate, err)
	}
	testSpokenClip(t, b, proj.ID)
	if n := len(b.rec.Synthesized()); n != jobs {
		t.Errorf("SetClip queued %d synthesis jobs, want none", n-jobs)
	}
	if after, err := b.store.FindAudio(ctx, proj.ID, itoa(a.ID)); err != nil || after.Revision != a.Revision {
		t.Errorf("audio after SetClip: %+v, %v; want revision %d", after, err, a.Revision)
	}

	tooLong := &narrator.Clip{ProjectID: proj.ID, Kind: narrator.ClipOutro, Samples: make([]int16, 31*8000), SampleRate: 8000}
	wantCode(t, b.store.SetClip(ctx, tooLong), narrator.EINVALID)
	wantCode(t, b.store.SetClip(ctx, &narrator.Clip{ProjectID: 999, Kind: narrator.ClipOutro, Samples: samples, SampleRate: 32000}), narrator.ENOTFOUND)

	if err := b.store.RemoveClip(ctx, proj.ID, narrator.ClipIntro); err != nil {
		t.Fatal(err)
	}
	_, err = b.store.Clip(ctx, proj.ID, narrator.ClipIntro)
	wantCode(t, err, narrator.ENOTFOUND)
	wantCode(t, b.store.RemoveClip(ctx, proj.ID, narrator.ClipIntro), narrator.ENOTFOUND)
}

// testSpokenClip checks that a spoken clip keeps its text and voice, that
// an upload replacing it keeps neither, and that a spoken clip without a
// voice is refused.
func testSpokenClip(t *testing.T, b *bundle, projectID int64) {
	ctx := t.Context()
	const text = "Welcome to the Acme podcast: l'été, 日本."
	spoken := &narrator.Clip{ProjectID: projectID, Kind: narrator.ClipOutro, Samples: make([]int16, 8000), SampleRate: 8000,
		Text: text, Voice: "en_US/Kevin"}
	if err := b.store.SetClip(ctx, spoken); err != nil {
		t.Fatal(err)
	}
	got, err := b.store.Clip(ctx, projectID, narrator.ClipOutro)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "spoken outro's text and voice", [2]string{got.Text, got.Voice}, [2]string{text, "en_US/Kevin"})
	wantCode(t, b.store.SetClip(ctx, &narrator.Clip{ProjectID: projectID, Kind: narrator.ClipOutro, Samples: make([]int16, 8000),
		SampleRate: 8000, Text: text}), narrator.EINVALID)
	uploaded := &narrator.Clip{ProjectID: projectID, Kind: narrator.ClipOutro, Samples: make([]int16, 8000), SampleRate: 8000}
	if err := b.store.SetClip(ctx, uploaded); err != nil {
		t.Fatal(err)
	}
	got, err = b.store.Clip(ctx, projectID, narrator.ClipOutro)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "uploaded outro's text and voice", [2]string{got.Text, got.Voice}, [2]string{"", ""})
	if err := b.store.RemoveClip(ctx, projectID, narrator.ClipOutro); err != nil {
		t.Fatal(err)
	}
}
