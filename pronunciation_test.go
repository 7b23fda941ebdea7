package narrator_test

import (
	"testing"

	"github.com/narrator/narrator"
)

func TestPronunciationMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, phrase, text string
		want               bool
	}{
		{"whole word", "nginx", "We run nginx here.", true},
		{"any case", "nginx", "NGINX is fast", true},
		{"inside a word", "gin", "the engine", false},
		{"phrase", "New York", "in new york city", true},
		{"at the start", "Kubernetes", "Kubernetes, again", true},
		{"second occurrence whole", "cat", "concatenate the cat", true},
		{"absent", "foo", "bar", false},
		{"unicode boundary", "café", "un café noir", true},
		{"unicode inside", "caf", "un café noir", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := narrator.Pronunciation{Phrase: c.phrase, Say: "x"}
			if got := p.Matches(c.text); got != c.want {
				t.Errorf("Matches(%q) for %q = %v, want %v", c.text, c.phrase, got, c.want)
			}
		})
	}
}

func TestPronunciationValidate(t *testing.T) {
	t.Parallel()
	for _, p := range []narrator.Pronunciation{{Phrase: "", Say: "x"}, {Phrase: "x", Say: " "}, {Phrase: "<b>", Say: "x"}} {
		if narrator.ErrorCode(p.Validate()) != narrator.EINVALID {
			t.Errorf("%+v validated", p)
		}
	}
	if err := (&narrator.Pronunciation{Phrase: "nginx", Say: "engine x"}).Validate(); err != nil {
		t.Error(err)
	}
}
