package narrator_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

func TestVoicesCatalog(t *testing.T) {
	t.Parallel()
	voices := narrator.Voices()
	if len(voices) == 0 {
		t.Fatal("empty catalog")
	}
	locale := regexp.MustCompile(`^[a-z]{2}_[A-Z]{2}$`)
	engines := []string{narrator.EngineFestival, narrator.EngineFlite, narrator.EngineEspeak}
	seen := map[string]bool{}
	for i, v := range voices {
		if i > 0 {
			p := voices[i-1]
			if p.Language > v.Language || p.Language == v.Language && p.Name >= v.Name {
				t.Errorf("catalog not sorted by language then name: %+v before %+v", p, v)
			}
		}
		key := v.Language + "/" + strings.ToLower(v.Name)
		if seen[key] {
			t.Errorf("duplicate voice name %s", key)
		}
		seen[key] = true
		if !locale.MatchString(v.Language) {
			t.Errorf("%s: language %q is not xx_XX", v.Name, v.Language)
		}
		if v.Gender != narrator.GenderFemale && v.Gender != narrator.GenderMale {
			t.Errorf("%s: gender %q", v.Name, v.Gender)
		}
		if !slices.Contains(engines, v.Engine) || v.EngineVoice == "" {
			t.Errorf("%s: engine %q voice %q", v.Name, v.Engine, v.EngineVoice)
		}
		if v.Name == "" || strings.ContainsAny(v.Name, "()") {
			t.Errorf("voice name %q", v.Name)
		}
		if !slices.Contains(narrator.Languages(), v.Language) {
			t.Errorf("%s: language %s not in Languages()", v.Name, v.Language)
		}
	}
	// A copy: changing it does not change the catalog.
	voices[0].Name = "Changed"
	if narrator.Voices()[0].Name == "Changed" {
		t.Error("Voices returned the catalog itself")
	}
}

func TestLanguages(t *testing.T) {
	t.Parallel()
	langs := narrator.Languages()
	if !slices.IsSorted(langs) {
		t.Errorf("Languages() not sorted: %v", langs)
	}
	if len(langs) < 15 {
		t.Errorf("only %d languages", len(langs))
	}
	for _, want := range []string{"en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "pt_BR", "nl_NL", "pl_PL", "sv_SE"} {
		if !slices.Contains(langs, want) {
			t.Errorf("Languages() lacks %s", want)
		}
	}
	for _, lang := range langs {
		title, body, ok := narrator.DefaultVoices(lang)
		if !ok {
			t.Errorf("%s: no default voices", lang)
			continue
		}
		if title.Language != lang || body.Language != lang {
			t.Errorf("%s: defaults %+v, %+v of another language", lang, title, body)
		}
		genders := map[string]bool{}
		for _, v := range narrator.Voices() {
			if v.Language == lang {
				genders[v.Gender] = true
			}
		}
		if lang != "en_GB" && (!genders[narrator.GenderFemale] || !genders[narrator.GenderMale]) {
			t.Errorf("%s: want a female and a male voice, have %v", lang, genders)
		}
	}
}

func TestDefaultVoices(t *testing.T) {
	t.Parallel()
	title, body, ok := narrator.DefaultVoices("en_US")
	if !ok {
		t.Fatal("no en_US defaults")
	}
	want := narrator.Voice{Name: "Sally", Gender: "Female", Language: "en_US", Engine: "festival", EngineVoice: "cmu_us_slt_arctic_hts"}
	if body != want {
		t.Errorf("en_US body = %+v, want %+v", body, want)
	}
	if title.Language != "en_US" {
		t.Errorf("en_US title = %+v", title)
	}
	for _, lang := range []string{"", "xx_XX", "en_us", "EN_US"} {
		if _, _, ok := narrator.DefaultVoices(lang); ok {
			t.Errorf("DefaultVoices(%q) ok", lang)
		}
	}
	if _, body, _ := narrator.DefaultVoices("de_DE"); body.Engine != narrator.EngineEspeak || !strings.HasPrefix(body.EngineVoice, "de") {
		t.Errorf("de_DE body = %+v, want an espeak German voice", body)
	}
}

func TestLookupVoice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		language, name string
		want           string // EngineVoice, "" if not found
	}{
		{"en_US", "Sally", "cmu_us_slt_arctic_hts"},
		{"en_US", "sally", "cmu_us_slt_arctic_hts"},
		{"en_US", "Sally (Female)", "cmu_us_slt_arctic_hts"},
		{"en_US", " SALLY (female) ", "cmu_us_slt_arctic_hts"},
		{"en_US", "Susan (Female)", "slt"},
		{"en_US", "Sally (Male)", ""},
		{"en_US", "Sally (Female", ""},
		{"en_US", "", ""},
		{"en_GB", "Sally", ""},
		{"de_DE", "Anna (Female)", "de+f5"},
		{"de_DE", "Lukas", "de"},
		{"fr_FR", "Lukas", ""},
		{"", "Sally", ""},
	}
	for _, tt := range tests {
		v, ok := narrator.LookupVoice(tt.language, tt.name)
		if ok != (tt.want != "") || v.EngineVoice != tt.want {
			t.Errorf("LookupVoice(%q, %q) = %+v, %v; want engine voice %q", tt.language, tt.name, v, ok, tt.want)
		}
	}
}

func TestVoiceLabel(t *testing.T) {
	t.Parallel()
	v := narrator.Voice{Name: "Sally", Gender: narrator.GenderFemale}
	if got := v.Label(); got != "Sally (Female)" {
		t.Errorf("Label() = %q", got)
	}
}
