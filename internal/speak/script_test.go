package speak

import (
	"strings"
	"testing"
	"time"
)

func texts(units []Unit) []string {
	out := make([]string, len(units))
	for i, u := range units {
		out[i] = u.Text
	}
	return out
}

func TestScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		lang, title, author, body string
		rules                     []Rule
		check                     func(t *testing.T, u []Unit)
	}{
		{name: "title-author-body", lang: "en_US", title: "Big news", author: "Jane Doe", body: "<p>First. Second.</p><p>Third.</p>",
			check: func(t *testing.T, u []Unit) {
				want := []Unit{
					{Role: RoleTitle, Text: "Big news.", Pause: PauseTitle, Rate: 1},
					{Role: RoleTitle, Text: "By Jane Doe.", Pause: PauseTitle, Rate: 1},
					{Role: RoleBody, Text: "First.", Pause: PauseSentence, Rate: 1},
					{Role: RoleBody, Text: "Second.", Pause: PauseParagraph, Rate: 1},
					{Role: RoleBody, Text: "Third.", Pause: PauseParagraph, Rate: 1},
				}
				if len(u) != len(want) {
					t.Fatalf("got %d units %q, want %d", len(u), texts(u), len(want))
				}
				for i := range want {
					if u[i] != want[i] {
						t.Errorf("unit %d: got %+v, want %+v", i, u[i], want[i])
					}
				}
			}},
		{name: "title-not-read-twice", lang: "en_US", title: "Council approves budget", body: "<h1>Council approves budget</h1><p>Text.</p>",
			check: func(t *testing.T, u []Unit) {
				if got := strings.Join(texts(u), " | "); got != "Council approves budget. | Text." {
					t.Errorf("got %q", got)
				}
			}},
		{name: "voice", lang: "en_US", body: `<p>Narrator.</p><p data-voice="Bob (Male)">Quote.</p><p data-speechkit-voice="Ann">Other.</p>`,
			check: func(t *testing.T, u []Unit) {
				if len(u) != 3 || u[0].Voice != "" || u[1].Voice != "Bob (Male)" || u[2].Voice != "Ann" {
					t.Errorf("got %+v", u)
				}
			}},
		{name: "pronunciation-rule", lang: "en_US", body: "Narrator reads NARRATOR and narrators. Kubernetes Engine runs.",
			rules: []Rule{{"narrator", "NAIR-ay-tor"}, {"Kubernetes", "koo-ber-NET-eez"}, {"Kubernetes Engine", "koo-ber-NET-eez EN-jin"}},
			check: func(t *testing.T, u []Unit) {
				got := strings.Join(texts(u), " ")
				want := "NAIR-ay-tor reads NAIR-ay-tor and narrators. koo-ber-NET-eez EN-jin runs."
				if got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			}},
		{name: "ssml", lang: "en_US", body: `<speak><p>Hello <break time="2s"/> world.</p><p><prosody rate="slow">Slowly <say-as interpret-as="characters">abc</say-as>.</prosody> <sub alias="World Wide Web">WWW</sub> <say-as interpret-as="ordinal">3</say-as> <say-as interpret-as="date" format="mdy">10/03/2026</say-as> <say-as interpret-as="telephone">555-1234</say-as> <phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomato</phoneme> <emphasis>now</emphasis>.</p></speak>`,
			check: func(t *testing.T, u []Unit) {
				if len(u) < 3 {
					t.Fatalf("got %q", texts(u))
				}
				if u[0].Text != "Hello" || u[0].Pause != 2*time.Second {
					t.Errorf("break: got %+v", u[0])
				}
				if u[1].Text != "world." {
					t.Errorf("got %+v", u[1])
				}
				if u[2].Rate != 0.8 || u[2].Text != "Slowly A B C." {
					t.Errorf("prosody/say-as: got %+v", u[2])
				}
				rest := strings.Join(texts(u[3:]), " ")
				want := "World Wide Web third October third, twenty twenty six five five five, one two three four tomato now."
				if rest != want {
					t.Errorf("got %q\nwant %q", rest, want)
				}
			}},
		{name: "long-sentence", lang: "en_US", body: strings.Repeat("and the rain kept falling on the town, ", 40) + "the end.",
			check: func(t *testing.T, u []Unit) {
				if len(u) < 2 {
					t.Fatalf("not split: %d units", len(u))
				}
				for _, x := range u {
					if len(x.Text) > MaxUnitChars {
						t.Errorf("unit of %d bytes", len(x.Text))
					}
				}
				if u[0].Pause != PauseClause {
					t.Errorf("pause inside a sentence: got %v", u[0].Pause)
				}
			}},
		{name: "german", lang: "de_DE", title: "Haushalt", body: "Der Plan kostet 3,5 Mio. € bis 2028.",
			check: func(t *testing.T, u []Unit) {
				got := strings.Join(texts(u), " ")
				if got != "Haushalt. Der Plan kostet drei Komma fünf Millionen Euro bis zweitausendachtundzwanzig." {
					t.Errorf("got %q", got)
				}
			}},
		{name: "unknown-language", lang: "xx_YY", body: "<p>Hola 3 <b>amigos</b>.</p>",
			check: func(t *testing.T, u []Unit) {
				if got := strings.Join(texts(u), " "); got != "Hola 3 amigos." {
					t.Errorf("got %q", got)
				}
			}},
		{name: "empty", lang: "en_US", body: "<script>x()</script>",
			check: func(t *testing.T, u []Unit) {
				if len(u) != 0 {
					t.Errorf("got %q", texts(u))
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t, Script(tc.lang, tc.title, tc.author, tc.body, tc.rules))
		})
	}
}
