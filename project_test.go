package narrator_test

import (
	"math"
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
		{"unknown type", func(p *narrator.Project) { p.Type = "wordpress" }, "type"},
		{"malformed language", func(p *narrator.Project) { p.Language = "english" }, "language"},
		{"no body voice", func(p *narrator.Project) { p.BodyVoice = " " }, "body_voice"},
		{"url not http", func(p *narrator.Project) { p.URL = "ftp://example.com" }, "url"},
		{"default rate", func(p *narrator.Project) { p.SpeechRate = 0 }, ""},
		{"slowest rate", func(p *narrator.Project) { p.SpeechRate = narrator.MinSpeechRate }, ""},
		{"fastest rate", func(p *narrator.Project) { p.SpeechRate = narrator.MaxSpeechRate }, ""},
		{"rate 1.25", func(p *narrator.Project) { p.SpeechRate = 1.25 }, ""},
		{"rate too slow", func(p *narrator.Project) { p.SpeechRate = 0.49 }, "speech_rate"},
		{"rate too fast", func(p *narrator.Project) { p.SpeechRate = 2.01 }, "speech_rate"},
		{"negative rate", func(p *narrator.Project) { p.SpeechRate = -1 }, "speech_rate"},
		{"rate NaN", func(p *narrator.Project) { p.SpeechRate = math.NaN() }, "speech_rate"},
		{"rate infinite", func(p *narrator.Project) { p.SpeechRate = math.Inf(1) }, "speech_rate"},
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

func TestPlanSpeechRate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		stored      float64
		rate        float64
		want        float64
		wantChanged bool
		wantErr     bool
	}{
		{"faster", 1, 1.25, 1.25, true, false},
		{"same", 1.25, 1.25, 1.25, false, false},
		{"default from unset", 0, 1, 1, false, false},
		{"zero is the default", 1.5, 0, 1, true, false},
		{"too fast", 1, 2.5, 0, false, true},
		{"too slow", 1, 0.25, 0, false, true},
		{"NaN", 1, math.NaN(), 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cur := narrator.Project{ID: 7, Title: "News", SpeechRate: c.stored}
			plan, err := narrator.PlanSpeechRate(&cur, c.rate)
			if c.wantErr {
				if narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), "speech_rate must be a number from 0.5 to 2.0") {
					t.Fatalf("PlanSpeechRate(%g) error %v, want EINVALID naming speech_rate and its range", c.rate, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.Next.SpeechRate != c.want || plan.Changed != c.wantChanged || plan.Next.ID != 7 || plan.Next.Title != "News" {
				t.Errorf("PlanSpeechRate(%g) from %g = rate %g, changed %v; want %g, %v, the rest kept", c.rate, c.stored, plan.Next.SpeechRate, plan.Changed, c.want, c.wantChanged)
			}
		})
	}
}

func TestProjectRate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ stored, want float64 }{{0, 1}, {1.25, 1.25}, {0.5, 0.5}} {
		p := narrator.Project{SpeechRate: c.stored}
		if got := p.Rate(); got != c.want {
			t.Errorf("Project{SpeechRate: %g}.Rate() = %g, want %g", c.stored, got, c.want)
		}
	}
}
