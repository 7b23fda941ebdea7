package narrator_test

import (
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

func TestClipValidate(t *testing.T) {
	t.Parallel()
	const rate = 32000
	cases := []struct {
		name    string
		kind    narrator.ClipKind
		samples int
		rate    int
		ok      bool
		// text and voice make a spoken clip.
		text, voice string
	}{
		{"intro", narrator.ClipIntro, 3 * rate, rate, true, "", ""},
		{"outro at the longest", narrator.ClipOutro, 30 * rate, rate, true, "", ""},
		{"at the shortest", narrator.ClipIntro, rate / 10, rate, true, "", ""},
		{"too long", narrator.ClipIntro, 30*rate + 1, rate, false, "", ""},
		{"too short", narrator.ClipOutro, rate/10 - 1, rate, false, "", ""},
		{"no rate", narrator.ClipIntro, rate, 0, false, "", ""},
		{"unknown kind", "middle", rate, rate, false, "", ""},
		{"spoken", narrator.ClipIntro, rate, rate, true, "Welcome to the Acme podcast.", "en_US/Kevin"},
		{"spoken at the longest text", narrator.ClipOutro, rate, rate, true, strings.Repeat("é", narrator.MaxClipText), "en_US/Kevin"},
		{"spoken, text too long", narrator.ClipOutro, rate, rate, false, strings.Repeat("é", narrator.MaxClipText+1), "en_US/Kevin"},
		{"spoken, blank text", narrator.ClipIntro, rate, rate, false, " \n ", "en_US/Kevin"},
		{"spoken, no voice", narrator.ClipIntro, rate, rate, false, "Welcome.", ""},
		{"spoken, voice only", narrator.ClipIntro, rate, rate, false, "", "en_US/Kevin"},
		{"spoken, NUL", narrator.ClipIntro, rate, rate, false, "Wel\x00come.", "en_US/Kevin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clip := narrator.Clip{Kind: c.kind, Samples: make([]int16, c.samples), SampleRate: c.rate, Text: c.text, Voice: c.voice}
			err := clip.Validate()
			if c.ok && err != nil {
				t.Errorf("Validate: %v", err)
			}
			if !c.ok && narrator.ErrorCode(err) != narrator.EINVALID {
				t.Errorf("Validate = %v, want EINVALID", err)
			}
		})
	}
}

func TestParseClipKind(t *testing.T) {
	t.Parallel()
	for _, k := range narrator.ClipKinds() {
		if got, err := narrator.ParseClipKind(string(k)); err != nil || got != k {
			t.Errorf("ParseClipKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := narrator.ParseClipKind("Intro"); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("ParseClipKind(Intro) = %v, want EINVALID", err)
	}
}

// TestCheckClipText checks the refusals of a spoken clip's text, which
// come before it is spoken.
func TestCheckClipText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		msg  string // "" when accepted
	}{
		{"Welcome to the Acme podcast.", ""},
		{strings.Repeat("a", narrator.MaxClipText), ""},
		{"", "empty"},
		{"  \t", "empty"},
		{strings.Repeat("a", narrator.MaxClipText+1), "at most 1000"},
		{"\xff", "valid UTF-8"},
	} {
		err := narrator.CheckClipText(narrator.ClipOutro, c.text)
		switch {
		case c.msg == "" && err != nil:
			t.Errorf("CheckClipText(%.20q) = %v", c.text, err)
		case c.msg != "" && (narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), c.msg)):
			t.Errorf("CheckClipText(%.20q) = %v, want EINVALID saying %q", c.text, err, c.msg)
		}
	}
}
