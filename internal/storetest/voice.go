package storetest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

// testVoice returns a valid installed Piper voice whose files are named
// by seed.
func testVoice(id, name, seed string) *narrator.InstalledVoice {
	return &narrator.InstalledVoice{
		Voice: narrator.Voice{Name: name, Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: id, Quality: "medium", License: "CC-BY-4.0"},
		Files: []narrator.VoiceFile{
			{Role: narrator.VoiceFileConfig, Name: id + ".onnx.json", Size: 5, SHA256: strings.Repeat(seed, 64)},
			{Role: narrator.VoiceFileModel, Name: id + ".onnx", Size: 60_000_000, SHA256: strings.Repeat("f", 64)},
		},
	}
}

var voiceTests = []test{
	{"InstallListRemove", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		amy := testVoice("piper-en_us-amy-medium", "Amy", "a")
		amy.Priority = -1
		if err := b.store.InstallVoice(ctx, amy); err != nil {
			t.Fatalf("InstallVoice: %v", err)
		}
		if !amy.CreatedAt.Equal(epoch) {
			t.Errorf("CreatedAt = %v, want %v", amy.CreatedAt, epoch)
		}
		kokoro := &narrator.InstalledVoice{
			Voice:   narrator.Voice{Name: "Heart", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EngineKokoro, EngineVoice: "kokoro-af_heart"},
			Speaker: "af_heart",
			Files: []narrator.VoiceFile{
				{Role: narrator.VoiceFileModel, Name: "kokoro-v1.0.onnx", Size: 300, SHA256: strings.Repeat("b", 64)},
				{Role: narrator.VoiceFileStyles, Name: "voices-v1.0.bin", Size: 400, SHA256: strings.Repeat("c", 64)},
			},
		}
		if err := b.store.InstallVoice(ctx, kokoro); err != nil {
			t.Fatalf("InstallVoice: %v", err)
		}
		got, err := b.store.ListInstalledVoices(ctx)
		if err != nil {
			t.Fatalf("ListInstalledVoices: %v", err)
		}
		// By language, then name; files by role.
		want := []*narrator.InstalledVoice{amy, kokoro}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ListInstalledVoices (-want +got):\n%s", diff)
		}
		removed, err := b.store.RemoveVoice(ctx, amy.EngineVoice)
		if err != nil {
			t.Fatalf("RemoveVoice: %v", err)
		}
		if diff := cmp.Diff(amy, removed); diff != "" {
			t.Errorf("RemoveVoice returned (-want +got):\n%s", diff)
		}
		_, err = b.store.RemoveVoice(ctx, amy.EngineVoice)
		wantCode(t, err, narrator.ENOTFOUND)
		got, err = b.store.ListInstalledVoices(ctx)
		if err != nil || len(got) != 1 || got[0].EngineVoice != kokoro.EngineVoice {
			t.Errorf("after remove: %v, %v; want only %s", got, err, kokoro.EngineVoice)
		}
	}},
	{"Conflicts", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		if err := b.store.InstallVoice(ctx, testVoice("piper-a", "Amy", "a")); err != nil {
			t.Fatalf("InstallVoice: %v", err)
		}
		// The same ID, and the same name in another letter case.
		wantCode(t, b.store.InstallVoice(ctx, testVoice("piper-a", "Other", "b")), narrator.ECONFLICT)
		wantCode(t, b.store.InstallVoice(ctx, testVoice("piper-b", "AMY", "b")), narrator.ECONFLICT)
		// The same name in another language is another voice.
		gb := testVoice("piper-c", "Amy", "c")
		gb.Language = "en_GB"
		if err := b.store.InstallVoice(ctx, gb); err != nil {
			t.Errorf("InstallVoice of en_GB Amy: %v", err)
		}
		bad := testVoice("piper-d", "Bad (voice)", "d")
		wantCode(t, b.store.InstallVoice(ctx, bad), narrator.EINVALID)
		bad = testVoice("piper-e", "Eve", "e")
		bad.Files = bad.Files[:1]
		wantCode(t, b.store.InstallVoice(ctx, bad), narrator.EINVALID)
		got, err := b.store.ListInstalledVoices(ctx)
		if err != nil || len(got) != 2 {
			t.Errorf("ListInstalledVoices = %d voices, %v; want 2: nothing of a refused install is kept", len(got), err)
		}
	}},
}
