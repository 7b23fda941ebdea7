package voicecat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
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

// failingLister lists Amy once, then fails every read, as a database that went down.
type failingLister struct{ reads int }

func (l *failingLister) ListInstalledVoices(context.Context) ([]*narrator.InstalledVoice, error) {
	l.reads++
	if l.reads > 1 {
		return nil, context.DeadlineExceeded
	}
	return []*narrator.InstalledVoice{amy("piper-amy")}, nil
}

func TestSource(t *testing.T) {
	ctx := t.Context()
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
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
	l := &failingLister{}
	src := voicecat.New(l, time.Nanosecond, nil)
	if _, ok := src.Catalog(t.Context()).Lookup("en_US", "Amy"); !ok {
		t.Fatal("Amy not in the first catalog read")
	}
	// The database is down now: the catalog stays the last one read, Amy in it.
	if _, ok := src.Fresh(t.Context()).Lookup("en_US", "Amy"); !ok || l.reads != 2 {
		t.Errorf("after a failed read (%d reads), Amy is gone from the catalog", l.reads)
	}
	if _, err := src.Installed(t.Context(), "piper-nobody"); err == nil {
		t.Error("Installed of an unknown voice with the database down: no error")
	}
}
