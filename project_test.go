package narrator_test

import (
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

func TestProjectValidate(t *testing.T) {
	t.Parallel()
	valid := func() narrator.Project {
		title, body, _ := narrator.DefaultVoices("en_US")
		return narrator.Project{Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	}
	cases := []struct {
		name  string
		edit  func(p *narrator.Project)
		field string // "" means valid
	}{
		{"valid", func(p *narrator.Project) {}, ""},
		{"valid url", func(p *narrator.Project) { p.URL = "https://example.com/news" }, ""},
		{"blank title", func(p *narrator.Project) { p.Title = " " }, "title"},
		{"unknown type", func(p *narrator.Project) { p.Type = "rss" }, "type"},
		{"malformed language", func(p *narrator.Project) { p.Language = "english" }, "language"},
		{"no body voice", func(p *narrator.Project) { p.BodyVoice = " " }, "body_voice"},
		{"url not http", func(p *narrator.Project) { p.URL = "ftp://example.com" }, "url"},
		{"url too long", func(p *narrator.Project) { p.URL = "https://example.com/" + strings.Repeat("a", narrator.MaxURLChars) }, "url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := valid()
			c.edit(&p)
			err := p.Validate()
			switch {
			case c.field == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.field != "" && (narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), c.field)):
				t.Errorf("error %v, want EINVALID naming %s", err, c.field)
			}
		})
	}
}
