package main

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// TestCopyDataKeepsPublishing checks that copy-data copies drafts,
// schedules and a signed project's settings: a copy that dropped them
// would publish drafts and open signed projects. It copies the project's
// intro too, sample for sample.
func TestCopyDataKeepsPublishing(t *testing.T) {
	t.Parallel()
	data, _, proj := fixture(t)
	open := func(dir string) *sqlite.Store {
		t.Helper()
		st, err := sqlite.Open(t.Context(), filepath.Join(dir, "narrator.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	src, _ := sqlitetest.OpenPath(t, filepath.Join(data, "narrator.db"), sqlite.Options{}, jobs.Config{})
	ctx := t.Context()
	a := &narrator.Audio{ProjectID: proj.ID, ExternalID: "draft", Body: "Not yet."}
	if _, err := src.CreateAudio(ctx, a); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2999, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := src.SetPublication(ctx, narrator.Publication{AudioID: a.ID, State: narrator.PublicationScheduled, PublishAt: at}); err != nil {
		t.Fatal(err)
	}
	access, err := src.RotateEmbedSecret(ctx, proj.ID, "nes_copied")
	if err != nil {
		t.Fatal(err)
	}
	access.Mode, access.AllowedOrigins, access.DraftNewAudios = narrator.AccessSigned, []string{"https://news.test"}, true
	if err := src.SetProjectAccess(ctx, &access); err != nil {
		t.Fatal(err)
	}

	intro := &narrator.Clip{ProjectID: proj.ID, Kind: narrator.ClipIntro, Samples: []int16{1, -2, 3, -4}, SampleRate: 40}
	if err := src.SetClip(ctx, intro); err != nil {
		t.Fatal(err)
	}

	target := t.TempDir()
	mustCLI(t, "copy-data", "--from-database", "sqlite:"+filepath.Join(data, "narrator.db"), "--from-media", "file:"+filepath.Join(data, "media"),
		"--to-database", "sqlite:"+filepath.Join(target, "narrator.db"), "--to-media", "file:"+filepath.Join(target, "media"))
	dst := open(target)
	defer dst.Close()
	pub, err := dst.AudioPublication(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if pub.State != narrator.PublicationScheduled || !pub.PublishAt.Equal(at) {
		t.Errorf("copied publication = %+v, want scheduled at %v", pub, at)
	}
	got, err := dst.ProjectAccess(ctx, proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != narrator.AccessSigned || got.SigningSecret != "nes_copied" || !got.DraftNewAudios || len(got.AllowedOrigins) != 1 {
		t.Errorf("copied access = %+v", got)
	}
	if c, err := dst.Clip(ctx, proj.ID, narrator.ClipIntro); err != nil || !slices.Equal(c.Samples, intro.Samples) || c.SampleRate != 40 {
		t.Errorf("copied intro = %+v, %v; want %+v", c, err, intro)
	}
	if _, err := dst.Clip(ctx, proj.ID, narrator.ClipOutro); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("copied outro: %v, want none", err)
	}
}
