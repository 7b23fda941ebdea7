package narrator_test

import (
	"testing"

	"github.com/narrator/narrator"
)

// TestStoredTextIsValid checks that every text a client stores is refused
// unless PostgreSQL can keep it: invalid UTF-8 and NUL are EINVALID.
func TestStoredTextIsValid(t *testing.T) {
	t.Parallel()
	title, body, _ := narrator.DefaultVoices("en_US")
	project := func(edit func(p *narrator.Project)) error {
		p := narrator.Project{Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
		edit(&p)
		return p.Validate()
	}
	audio := func(edit func(a *narrator.Audio)) error {
		a := narrator.Audio{Body: "Text."}
		edit(&a)
		return a.Validate()
	}
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		for name, err := range map[string]error{
			"account name":    (&narrator.Account{Name: bad}).Validate(),
			"project title":   project(func(p *narrator.Project) { p.Title = bad }),
			"project url":     project(func(p *narrator.Project) { p.URL = "https://example.com/" + bad }),
			"audio title":     audio(func(a *narrator.Audio) { a.Title = bad }),
			"audio body":      audio(func(a *narrator.Audio) { a.Body = bad }),
			"audio author":    audio(func(a *narrator.Audio) { a.Author = bad }),
			"metadata key":    audio(func(a *narrator.Audio) { a.Metadata = map[string]string{bad: "v"} }),
			"metadata value":  audio(func(a *narrator.Audio) { a.Metadata = map[string]string{"k": bad} }),
			"pronunciation":   (&narrator.Pronunciation{Phrase: bad, Say: "x"}).Validate(),
			"pronounced as":   (&narrator.Pronunciation{Phrase: "x", Say: bad}).Validate(),
			"external_id NUL": audio(func(a *narrator.Audio) { a.ExternalID = bad }),
		} {
			if narrator.ErrorCode(err) != narrator.EINVALID {
				t.Errorf("%s %q: %v, want EINVALID", name, bad, err)
			}
		}
		if narrator.ValidText(bad) {
			t.Errorf("ValidText(%q) = true", bad)
		}
	}
	if !narrator.ValidText("Grüße, 你好 \t\n") {
		t.Error("ValidText refuses ordinary text")
	}
}
