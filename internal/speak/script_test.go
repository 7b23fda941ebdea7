package speak

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
					{Role: RoleTitle, Text: "Big news.", Pause: PauseTitle, Rate: 1, Source: "Big news"},
					{Role: RoleTitle, Text: "By Jane Doe.", Pause: PauseTitle, Rate: 1, Source: "By Jane Doe", Block: 1},
					{Role: RoleBody, Text: "First.", Pause: PauseSentence, Rate: 1, Source: "First.", Block: 2},
					{Role: RoleBody, Text: "Second.", Pause: PauseParagraph, Rate: 1, Source: "Second.", Block: 2},
					{Role: RoleBody, Text: "Third.", Pause: PauseParagraph, Rate: 1, Source: "Third.", Block: 3},
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
		{name: "title-markdown-and-html", lang: "en_US", title: "- <b>Big</b> news", body: "# Heading <i>here</i>\n\nText <b>bold</b>.",
			check: func(t *testing.T, u []Unit) {
				if got := strings.Join(texts(u), " | "); got != "Big news. | Heading here. | Text bold." {
					t.Errorf("got %q", got)
				}
			}},
		{name: "blocks", lang: "en_US", title: "Big news", body: "<h2>Part one. Begins</h2><h3>Sub</h3><p>Text. More.</p><p>  </p><h2>Two</h2><p>End.</p>",
			check: func(t *testing.T, u []Unit) {
				type block struct {
					Text    string
					Block   int
					Heading bool
				}
				var got []block
				for _, x := range u {
					got = append(got, block{x.Text, x.Block, x.Heading})
				}
				want := []block{{"Big news.", 0, false}, {"Part one.", 1, true}, {"Begins.", 1, true}, {"Sub.", 2, true},
					{"Text.", 3, false}, {"More.", 3, false}, {"Two.", 4, true}, {"End.", 5, false}}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("blocks (-want +got):\n%s", diff)
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
			tc.check(t, Script(tc.lang, tc.title, tc.author, tc.body, CompileRules(tc.rules)))
		})
	}
}

func TestScriptSource(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("The committee met again on Tuesday, and it talked for hours about the budget, ", 6) + "then it went home."
	tests := []struct {
		name                      string
		lang, title, author, body string
		rules                     []Rule
		want                      []string // Source of each unit
	}{
		{name: "title-author", lang: "en_US", title: "Big <b>news</b> &amp; 3 more", author: "Dr.  Jane Doe", body: "Text.",
			want: []string{"Big news & 3 more", "By Dr. Jane Doe", "Text."}},
		{name: "numbers-abbreviations", lang: "en_US",
			body: "<p>Dr. Smith paid $3.5m on 3 Oct. 2026 for  NASA's   kit, e.g. this. It's 10:30 a.m. now!</p>",
			want: []string{"Dr. Smith paid $3.5m on 3 Oct. 2026 for NASA's kit, e.g. this.", "It's 10:30 a.m. now!"}},
		{name: "pronunciation-rules", lang: "en_US", body: "Narrator runs Kubernetes Engine (Kubernetes). Narrator, again.",
			rules: []Rule{{"narrator", "NAIR-ay-tor"}, {"Kubernetes", "koo-ber-NET-eez"}, {"Kubernetes Engine", "koo EN-jin"}},
			want:  []string{"Narrator runs Kubernetes Engine (Kubernetes).", "Narrator, again."}},
		{name: "html", lang: "en_US", body: `<h2>A &lt;heading&gt;</h2><p>Some <em>very</em><br>odd <a href="/x">link</a>&nbsp;text.</p><ul><li>Item one</li></ul>`,
			want: []string{"A <heading>", "Some very", "odd link text.", "Item one"}},
		{name: "markdown", lang: "en_US", body: "# Head\n\nSome *bold* text and [a link](http://x.y). Second one.",
			want: []string{"Head", "Some bold text and a link.", "Second one."}},
		{name: "ssml", lang: "en_US",
			body: `<speak><p>Hello <break time="1s"/> world.</p><p><prosody rate="slow">Slowly <say-as interpret-as="characters">abc</say-as>.</prosody> Call <say-as interpret-as="telephone">555-1234</say-as> on <say-as interpret-as="date" format="mdy">10/03/2026</say-as>, ok?</p></speak>`,
			want: []string{"Hello", "world.", "Slowly abc.", "Call 555-1234 on 10/03/2026, ok?"}},
		{name: "german", lang: "de_DE", body: "Am 3. Oktober kostet es 5 €. Dr. Müller kommt.",
			want: []string{"Am 3. Oktober kostet es 5 €.", "Dr. Müller kommt."}},
		{name: "long-sentence", lang: "en_US", body: long, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			units := Script(tt.lang, tt.title, tt.author, tt.body, CompileRules(tt.rules))
			if tt.want == nil {
				// A sentence split for length: the first piece carries it.
				if len(units) < 2 {
					t.Fatalf("got %d units, want the sentence split", len(units))
				}
				if units[0].Source != long {
					t.Errorf("first piece: got Source %q, want the whole sentence", units[0].Source)
				}
				for i, u := range units[1:] {
					if u.Source != "" {
						t.Errorf("piece %d: got Source %q, want empty", i+1, u.Source)
					}
				}
				return
			}
			got := make([]string, len(units))
			for i, u := range units {
				got[i] = u.Source
			}
			if strings.Join(got, " | ") != strings.Join(tt.want, " | ") {
				t.Errorf("got %q, want %q (texts %q)", got, tt.want, texts(units))
			}
		})
	}
}
