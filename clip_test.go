package narrator_test

import (
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
	}{
		{"intro", narrator.ClipIntro, 3 * rate, rate, true},
		{"outro at the longest", narrator.ClipOutro, 30 * rate, rate, true},
		{"at the shortest", narrator.ClipIntro, rate / 10, rate, true},
		{"too long", narrator.ClipIntro, 30*rate + 1, rate, false},
		{"too short", narrator.ClipOutro, rate/10 - 1, rate, false},
		{"no rate", narrator.ClipIntro, rate, 0, false},
		{"unknown kind", "middle", rate, rate, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clip := narrator.Clip{Kind: c.kind, Samples: make([]int16, c.samples), SampleRate: c.rate}
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
