package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/voicecat"
	"github.com/narrator/narrator/internal/web"
)

// TestVoicesPage installs a neural voice, which the Voices page lists as neural and the
// default of its language, beside the built-in voices, each with a preview; a project whose
// voice is then removed says which voice speaks instead.
func TestVoicesPage(t *testing.T) {
	t.Parallel()
	var src *voicecat.Source
	b := setup(t, func(d *web.Deps) {
		src = voicecat.New(d.Store.(voicecat.Lister), time.Nanosecond, nil)
		d.Voices = src
	})
	st := b.store
	amy := &narrator.InstalledVoice{
		Voice: narrator.Voice{Name: "Amy", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-en_us-amy-medium", Quality: "medium", License: "CC-BY-4.0"},
		Files: []narrator.VoiceFile{
			{Role: narrator.VoiceFileModel, Name: "amy.onnx", Size: 10, SHA256: strings.Repeat("a", 64)},
			{Role: narrator.VoiceFileConfig, Name: "amy.onnx.json", Size: 10, SHA256: strings.Repeat("b", 64)},
		},
	}
	if err := st.InstallVoice(t.Context(), amy); err != nil {
		t.Fatal(err)
	}
	// Ryan's model was installed as its timed copy: it times words, Amy's sentences only.
	ryan := &narrator.InstalledVoice{
		Voice: narrator.Voice{Name: "Ryan", Gender: narrator.GenderMale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-en_us-ryan-medium", Quality: "medium"},
		Files: []narrator.VoiceFile{
			{Role: narrator.VoiceFileModel, Name: "ryan" + narrator.TimedModelSuffix, Size: 10, SHA256: strings.Repeat("c", 64)},
			{Role: narrator.VoiceFileConfig, Name: "ryan.onnx.json", Size: 10, SHA256: strings.Repeat("d", 64)},
		},
		Priority: -1,
	}
	if err := st.InstallVoice(t.Context(), ryan); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: b.account.ID, Title: "Neural", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Amy", BodyVoice: "Amy"}
	if err := st.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	c, _ := b.signedIn(t)
	res := c.get("/voices")
	wantStatus(t, res, 200)
	rowOf := func(voice string) string {
		row := res.body[strings.Index(res.body, `data-voice="`+voice+`"`):]
		return row[:strings.Index(row, "</tr>")]
	}
	for voice, wants := range map[string][]string{
		"Amy":   {"Amy (Female)", "Neural", "piper · medium", "CC-BY-4.0", "title and body", `/voices/en_US/Amy/preview.mp3`, `"Word timings"><span class="muted">sentence only<`},
		"Ryan":  {"Ryan (Male)", "Neural", `"Word timings">yes<`},
		"Sally": {`"Word timings">yes<`},
	} {
		row := rowOf(voice)
		for _, want := range wants {
			if !strings.Contains(row, want) {
				t.Errorf("%s's row lacks %q:\n%s", voice, want, row)
			}
		}
	}
	if !strings.Contains(res.body, `data-voice="Sally" data-engine="festival"`) || !strings.Contains(res.body, "Deutsch") && !strings.Contains(res.body, "German") {
		t.Error("the built-in voices are not listed")
	}
	if _, err := st.RemoveVoice(t.Context(), amy.EngineVoice); err != nil {
		t.Fatal(err)
	}
	res = c.get("/projects")
	wantStatus(t, res, 200)
	if !strings.Contains(res.body, "Amy (removed; Sally (Female) speaks instead)") {
		t.Errorf("the projects page does not say that Sally speaks for the removed Amy")
	}
}
