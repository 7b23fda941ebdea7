package speak

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// fuzzLimit bounds the time one fuzz input may take; inputs are at most a
// few kilobytes, so even a slow machine stays far below it.
const fuzzLimit = 2 * time.Second

var fuzzSeeds = []string{
	"The plan will cost $3.5 million over 4 years.",
	"Dr. Maria Lopez said 65% on October 3rd, 2028 at 9 am.",
	"<p>Hello <b>world</b></p><script>x</script>",
	`<speak><p>Hi <break time="1s"/><say-as interpret-as="characters">abc</say-as></p></speak>`,
	"# Title\n\n- item **one**\n\n> quote [link](http://x.y)\n\n```\ncode\n```",
	"U.S. e.g. etc. i.e. 10–15 10:05 £2.4m €40 1,000,000.5 x@y.org example.com",
	"3,5 Mio. € am 3. Oktober", "le 1er janvier à 10h30",
	strings.Repeat("a.", 200), strings.Repeat("1", 40), "\uE000\uE100\uE001", "<<<>>>", "&amp;&lt;",
}

func checkUnitText(t *testing.T, s string) {
	t.Helper()
	if strings.ContainsAny(s, "<>") {
		t.Fatalf("markup in %q", s)
	}
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8 in %q", s)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("en_US", s)
	}
	f.Add("de_DE", "3,5 Mio. €")
	f.Add("fr_FR", "40 000 €")
	f.Fuzz(func(t *testing.T, lang, s string) {
		start := time.Now()
		got := Normalize(lang, s)
		if d := time.Since(start); d > fuzzLimit {
			t.Fatalf("took %v on %d bytes", d, len(s))
		}
		checkUnitText(t, got)
	})
}

func FuzzSentences(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		got := Sentences("en_US", s)
		if d := time.Since(start); d > fuzzLimit {
			t.Fatalf("took %v on %d bytes", d, len(s))
		}
		// Sentences lose only white space.
		want := strings.Join(strings.Fields(s), "")
		if j := strings.Join(strings.Fields(strings.Join(got, " ")), ""); j != want {
			t.Fatalf("text changed: %q → %q", s, got)
		}
		for _, x := range got {
			if strings.TrimSpace(x) == "" {
				t.Fatalf("empty sentence in %q", got)
			}
		}
	})
}

func FuzzScript(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("en_US", "A title", s)
	}
	f.Add("de_DE", "Titel", "Der 3. Oktober")
	f.Add("en_GB", "<b>x</b>", strings.Repeat("word, ", 200))
	f.Fuzz(func(t *testing.T, lang, title, body string) {
		start := time.Now()
		units := Script(lang, title, "", body, CompileRules([]Rule{{"cost", "kost"}, {"a", "<b>"}}))
		if d := time.Since(start); d > fuzzLimit {
			t.Fatalf("took %v on %d bytes", d, len(body))
		}
		for _, u := range units {
			checkUnitText(t, u.Text)
			if len(u.Text) > MaxUnitChars {
				t.Fatalf("unit of %d bytes: %q", len(u.Text), u.Text)
			}
			if !hasWord(u.Text) {
				t.Fatalf("unit without words: %q", u.Text)
			}
			if u.Rate <= 0 || u.Pause < 0 {
				t.Fatalf("bad unit %+v", u)
			}
			// The text as written is clean text for captions.
			if u.Source != strings.Join(strings.Fields(u.Source), " ") || !utf8.ValidString(u.Source) ||
				strings.ContainsFunc(u.Source, func(r rune) bool { return r >= 0xE000 && r <= 0xF8FF || unicode.IsControl(r) }) {
				t.Fatalf("unit source %q", u.Source)
			}
		}
		if len(units) > 0 && units[0].Source == "" {
			t.Fatalf("first unit %+v has no source", units[0])
		}
	})
}
