package narrator_test

import (
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

func installed(id, name, language, engine, quality string, priority int) *narrator.InstalledVoice {
	v := &narrator.InstalledVoice{
		Voice:    narrator.Voice{Name: name, Gender: narrator.GenderFemale, Language: language, Engine: engine, EngineVoice: id, Quality: quality},
		Priority: priority,
		Files: []narrator.VoiceFile{
			{Role: narrator.VoiceFileModel, Name: id + ".onnx", Size: 1, SHA256: strings.Repeat("a", 64)},
			{Role: narrator.VoiceFileConfig, Name: id + ".onnx.json", Size: 1, SHA256: strings.Repeat(id[len(id)-1:], 64)},
		},
	}
	if engine == narrator.EngineKokoro {
		v.Speaker = "af_heart"
		v.Files[1].Role = narrator.VoiceFileStyles
	}
	return v
}

func TestCatalogDefaults(t *testing.T) {
	t.Parallel()
	cat := narrator.NewCatalog([]*narrator.InstalledVoice{
		installed("piper-1", "Lowly", "en_US", narrator.EnginePiper, "low", 0),
		installed("piper-2", "Amy", "en_US", narrator.EnginePiper, "medium", 0),
		installed("piper-3", "Never", "en_US", narrator.EngineKokoro, "", -1),
		installed("piper-4", "Mykyta", "uk_UA", narrator.EnginePiper, "medium", 0),
		installed("piper-5", "Sally", "en_US", narrator.EnginePiper, "high", 5), // a built-in name: left out
	})
	title, body, ok := cat.Defaults("en_US")
	if !ok || body.Name != "Amy" || title.Name != "Lowly" {
		t.Errorf("en_US defaults = %s, %s, %v; want Lowly for titles and Amy (the better quality) for bodies", title.Name, body.Name, ok)
	}
	if v, ok := cat.Lookup("en_US", "sally"); !ok || v.Engine != narrator.EngineFestival {
		t.Errorf("Sally = %+v, %v; want the built-in voice, not the installed one of the same name", v, ok)
	}
	if _, _, ok := cat.Defaults("uk_UA"); !ok {
		t.Error("an installed voice of a new language does not add the language")
	}
	if _, body, _ := cat.Defaults("de_DE"); body.Engine != narrator.EngineEspeak {
		t.Errorf("de_DE body = %+v; a language without installed voices keeps its built-in defaults", body)
	}
	// Priority outranks quality.
	cat = narrator.NewCatalog([]*narrator.InstalledVoice{
		installed("piper-1", "Lowly", "en_US", narrator.EnginePiper, "low", 1),
		installed("kokoro-2", "Heart", "en_US", narrator.EngineKokoro, "", 0),
	})
	if _, body, _ := cat.Defaults("en_US"); body.Name != "Lowly" {
		t.Errorf("en_US body = %s, want Lowly, whose priority is higher", body.Name)
	}
	if got := narrator.BuiltinCatalog().Languages(); len(got) != len(narrator.Languages()) {
		t.Errorf("built-in catalog has %d languages, Languages() %d", len(got), len(narrator.Languages()))
	}
}

func TestCatalogResolveAndCheck(t *testing.T) {
	t.Parallel()
	amy := installed("piper-2", "Amy", "en_US", narrator.EnginePiper, "medium", -1)
	with := narrator.NewCatalog([]*narrator.InstalledVoice{amy})
	p := &narrator.Project{Language: "en_US", TitleVoice: "Richard", BodyVoice: "Amy (Female)"}
	if err := with.CheckProject(p); err != nil {
		t.Errorf("CheckProject with Amy installed: %v", err)
	}
	without := narrator.BuiltinCatalog()
	if err := without.CheckProject(p); narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), "body_voice") {
		t.Errorf("CheckProject without Amy: %v, want EINVALID naming body_voice", err)
	}
	if v, fell, ok := with.Resolve("en_US", "Amy", false); !ok || fell || v.Name != "Amy" {
		t.Errorf("Resolve(Amy) with Amy = %s, %v, %v", v.Name, fell, ok)
	}
	if v, fell, ok := without.Resolve("en_US", "Amy", false); !ok || !fell || v.Name != "Sally" {
		t.Errorf("Resolve(Amy) once removed = %s, fell back %v, %v; want the default body voice, Sally", v.Name, fell, ok)
	}
	if _, _, ok := without.Resolve("xx_XX", "Amy", true); ok {
		t.Error("Resolve of an unknown language is ok")
	}
	if err := with.CheckInstall(installed("piper-9", "amy", "en_US", narrator.EnginePiper, "low", 0)); narrator.ErrorCode(err) != narrator.ECONFLICT {
		t.Errorf("CheckInstall of a second Amy: %v, want ECONFLICT", err)
	}
	if err := with.CheckInstall(installed("piper-9", "Sally", "en_US", narrator.EnginePiper, "low", 0)); narrator.ErrorCode(err) != narrator.ECONFLICT {
		t.Errorf("CheckInstall of a voice named as a built-in one: %v, want ECONFLICT", err)
	}
}

func TestInstalledVoiceValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(v *narrator.InstalledVoice)
		ok   bool
	}{
		{"valid", func(*narrator.InstalledVoice) {}, true},
		{"name with parentheses", func(v *narrator.InstalledVoice) { v.Name = "Amy (US)" }, false},
		{"built-in engine", func(v *narrator.InstalledVoice) { v.Engine = narrator.EngineFestival }, false},
		{"ID with a slash", func(v *narrator.InstalledVoice) { v.EngineVoice = "../x" }, false},
		{"unknown quality", func(v *narrator.InstalledVoice) { v.Quality = "ultra" }, false},
		{"bad checksum", func(v *narrator.InstalledVoice) { v.Files[0].SHA256 = "abc" }, false},
		{"kokoro without speaker", func(v *narrator.InstalledVoice) {
			v.Engine = narrator.EngineKokoro
			v.Files[1].Role = narrator.VoiceFileStyles
		}, false},
		{"gender", func(v *narrator.InstalledVoice) { v.Gender = "female" }, false},
		{"locale", func(v *narrator.InstalledVoice) { v.Language = "en-US" }, false},
	}
	for _, c := range cases {
		v := installed("piper-1", "Amy", "en_US", narrator.EnginePiper, "medium", 0)
		c.edit(v)
		if err := v.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: Validate() = %v", c.name, err)
		}
	}
}

func TestUnusedVoiceFiles(t *testing.T) {
	t.Parallel()
	a := installed("piper-1", "Amy", "en_US", narrator.EnginePiper, "medium", 0)
	b := installed("piper-2", "Bea", "en_US", narrator.EnginePiper, "medium", 0) // shares the model
	got := narrator.UnusedVoiceFiles(a, []*narrator.InstalledVoice{b})
	if len(got) != 1 || got[0].Role != narrator.VoiceFileConfig {
		t.Errorf("UnusedVoiceFiles = %+v, want only Amy's config", got)
	}
}

// TestCatalogBuildNamesFiles checks that an installed voice's Build, which keys the pipeline's
// cache of spoken units, changes when the voice is installed again with other files, such as
// its model's timed copy: units spoken by the old model, without word timings, are not
// reused.
func TestCatalogBuildNamesFiles(t *testing.T) {
	t.Parallel()
	plain := installed("piper-1", "Amy", "en_US", narrator.EnginePiper, "medium", 0)
	timed := installed("piper-1", "Amy", "en_US", narrator.EnginePiper, "medium", 0)
	timed.Files[0].Name, timed.Files[0].SHA256 = "piper-1"+narrator.TimedModelSuffix, strings.Repeat("b", 64)
	other := installed("piper-1", "Amy", "en_US", narrator.EnginePiper, "medium", 0)
	other.Speaker = "2"
	builds := map[string]string{}
	for name, v := range map[string]*narrator.InstalledVoice{"plain": plain, "timed": timed, "other speaker": other} {
		got, ok := narrator.NewCatalog([]*narrator.InstalledVoice{v}).Lookup("en_US", "Amy")
		if !ok || got.Build == "" {
			t.Fatalf("%s: Amy = %+v, %v", name, got, ok)
		}
		if prev, ok := builds[got.Build]; ok {
			t.Errorf("%s and %s have the same build %s", prev, name, got.Build)
		}
		builds[got.Build] = name
	}
	if plain.WordTimings() || !timed.WordTimings() {
		t.Errorf("word timings: plain %v, timed %v; want only the timed copy's", plain.WordTimings(), timed.WordTimings())
	}
}

func TestTimedModelName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		timed bool
		want  string
	}{
		{"en_US-amy-medium.onnx", true, "en_US-amy-medium.timed.onnx"},
		{"en_US-amy-medium.timed.onnx", true, "en_US-amy-medium.timed.onnx"},
		{"model.timed.onnx", false, "model.onnx"},
		{"kokoro-v1.0.onnx", false, "kokoro-v1.0.onnx"},
		{"kokoro", true, "kokoro.timed.onnx"},
	} {
		if got := narrator.TimedModelName(tt.name, tt.timed); got != tt.want {
			t.Errorf("TimedModelName(%q, %v) = %q, want %q", tt.name, tt.timed, got, tt.want)
		}
	}
	kokoro := installed("kokoro-af_heart", "Heart", "en_US", narrator.EngineKokoro, "", 0)
	if kokoro.WordTimings() {
		t.Errorf("a Kokoro voice of model %q times words", kokoro.Files[0].Name)
	}
	kokoro.Files[0].Name = narrator.TimedModelName(kokoro.Files[0].Name, true)
	if !kokoro.WordTimings() {
		t.Errorf("a Kokoro voice of model %q times no words", kokoro.Files[0].Name)
	}
}
