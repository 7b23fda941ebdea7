package voicecat_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/voicecat"
)

func amy(id string) *narrator.InstalledVoice {
	return &narrator.InstalledVoice{
		Voice: narrator.Voice{Name: "Amy", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: id, Quality: "medium"},
		Files: []narrator.VoiceFile{
			{Role: narrator.VoiceFileModel, Name: "amy.onnx", Size: 1, SHA256: strings.Repeat("a", 64)},
			{Role: narrator.VoiceFileConfig, Name: "amy.onnx.json", Size: 1, SHA256: strings.Repeat("b", 64)},
		},
	}
}

// closedLister fails every read, as a database that is down.
type closedLister struct{}

func (closedLister) ListInstalledVoices(context.Context) ([]*narrator.InstalledVoice, error) {
	return nil, context.DeadlineExceeded
}

func TestSource(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	src := voicecat.New(st, time.Hour, nil)
	if _, ok := src.Catalog(ctx).Lookup("en_US", "Amy"); ok {
		t.Fatal("Amy in the catalog before she is installed")
	}
	// Installed on "another node": the catalog is not read again within
	// the hour, but asking for the voice by its ID reads it at once.
	if err := st.InstallVoice(ctx, amy("piper-amy")); err != nil {
		t.Fatal(err)
	}
	if _, ok := src.Catalog(ctx).Lookup("en_US", "Amy"); ok {
		t.Error("the catalog was read again within its refresh interval")
	}
	v, err := src.Installed(ctx, "piper-amy")
	if err != nil || v.Name != "Amy" {
		t.Fatalf("Installed(piper-amy) = %+v, %v", v, err)
	}
	if _, ok := src.Catalog(ctx).Lookup("en_US", "Amy"); !ok {
		t.Error("Amy not in the catalog after a read that found her")
	}
	if _, err := src.Installed(ctx, "piper-nobody"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("Installed(piper-nobody) = %v, want ENOTFOUND", err)
	}
}

func TestSourceKeepsLastCatalogWhenReadsFail(t *testing.T) {
	src := voicecat.New(closedLister{}, time.Nanosecond, nil)
	cat := src.Catalog(t.Context())
	if _, _, ok := cat.Defaults("en_US"); !ok {
		t.Error("with the database down, the catalog is not the built-in one")
	}
	if _, err := src.Installed(t.Context(), "piper-amy"); err == nil {
		t.Error("Installed with the database down: no error")
	}
}
