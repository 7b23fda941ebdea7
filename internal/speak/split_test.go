package speak

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSentences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, lang, in string
		want           []string
	}{
		{"simple", "en_US", "One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"title-abbreviation", "en_US", "Dr. Maria Lopez spoke. Then Mr. Smith left.", []string{"Dr. Maria Lopez spoke.", "Then Mr. Smith left."}},
		{"decimal", "en_US", "It cost $3.5 million. That is a lot.", []string{"It cost $3.5 million.", "That is a lot."}},
		{"initials", "en_US", "J. R. R. Tolkien wrote it. He died in 1973.", []string{"J. R. R. Tolkien wrote it.", "He died in 1973."}},
		{"dotted-acronym-mid", "en_US", "The U.S. Army said so.", []string{"The U.S. Army said so."}},
		{"dotted-acronym-end", "en_US", "He lives in the U.S. The weather is fine.", []string{"He lives in the U.S.", "The weather is fine."}},
		{"eg-lowercase", "en_US", "Fruit, e.g. apples, is good. Yes.", []string{"Fruit, e.g. apples, is good.", "Yes."}},
		{"etc-end", "en_US", "Apples, pears, etc. The list goes on.", []string{"Apples, pears, etc.", "The list goes on."}},
		{"closing-quote", "en_US", `He said "Go." Then he left.`, []string{`He said "Go."`, "Then he left."}},
		{"closing-curly-quote", "en_US", "She said “Stop.” They did.", []string{"She said “Stop.”", "They did."}},
		{"closing-bracket", "en_US", "It ended (finally.) We left.", []string{"It ended (finally.)", "We left."}},
		{"opening-quote", "en_US", `It rained. "We lost," he said.`, []string{"It rained.", `"We lost," he said.`}},
		{"question-lowercase", "en_US", `"Why?" he asked.`, []string{`"Why?" he asked.`}},
		{"ellipsis", "en_US", "Wait... It worked.", []string{"Wait...", "It worked."}},
		{"am-pm", "en_US", "Open at 9 a.m. Monday to Friday.", []string{"Open at 9 a.m. Monday to Friday."}},
		{"newlines", "en_US", "One\nline. Two\n\nlines.", []string{"One line.", "Two lines."}},
		{"german-date", "de_DE", "Am 3. Oktober war Feiertag. Alle feierten.", []string{"Am 3. Oktober war Feiertag.", "Alle feierten."}},
		{"german-abbreviation", "de_DE", "Wir essen z. B. Äpfel. Gut.", []string{"Wir essen z. B. Äpfel.", "Gut."}},
		{"french-monsieur", "fr_FR", "M. Dupont est venu. Il est parti.", []string{"M. Dupont est venu.", "Il est parti."}},
		{"cjk", "xx", "你好。再见。", []string{"你好。", "再见。"}},
		{"empty", "en_US", "  ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Sentences(tc.lang, tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Sentences(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSplitLong(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 100)
	clauses := strings.Repeat("this is a clause of some length, ", 20)
	giant := strings.Repeat("x", 1000)
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, pieces []string)
	}{
		{"short-unchanged", "a short sentence", func(t *testing.T, p []string) {
			if len(p) != 1 || p[0] != "a short sentence" {
				t.Errorf("got %q", p)
			}
		}},
		{"at-comma", clauses, func(t *testing.T, p []string) {
			for _, x := range p[:len(p)-1] {
				if !strings.HasSuffix(x, ",") {
					t.Errorf("piece %q does not end at a comma", x)
				}
			}
		}},
		{"at-word", long, func(t *testing.T, p []string) {
			if strings.Join(p, " ") != strings.TrimSpace(long) {
				t.Errorf("words lost: %q", p)
			}
		}},
		{"giant-word", giant, func(t *testing.T, p []string) {
			if strings.Join(p, "") != giant {
				t.Errorf("characters lost")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := splitLong(tc.in, 100)
			for _, x := range p {
				if len(x) > 100 {
					t.Errorf("piece of %d bytes: %q", len(x), x)
				}
			}
			tc.check(t, p)
		})
	}
}

func TestSplitLead(t *testing.T) {
	t.Parallel()
	const long = "The small ferry that links the old harbour with the island village went back into service on Monday morning, after four months in the shipyard."
	next := Unit{Role: RoleBody, Text: "Its engine was rebuilt.", Pause: PauseParagraph, Rate: 1, Source: "Its engine was rebuilt.", Block: 1}
	tests := []struct {
		name       string
		first      string
		head, tail string // the pieces; tail "" for no split
	}{
		{"comma", long, "The small ferry that links the old harbour with the island village went back into service on Monday morning,", "after four months in the shipyard."},
		{"first pause that leaves four words", "So, the small ferry that links the harbour with the island; it went back into service on Monday.", "So, the small ferry that links the harbour with the island;", "it went back into service on Monday."},
		{"colon", "One thing was clear to everyone on the quay: the ferry would be late again on Monday.", "One thing was clear to everyone on the quay:", "the ferry would be late again on Monday."},
		{"short", "The small ferry, which is old, went back into service.", "", ""},
		{"no pause", "The small ferry that links the old harbour with the island village went back into service on Monday.", "", ""},
		{"pause too late", "The small ferry that links the old harbour with the island village went back into service, on Monday.", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			first := Unit{Role: RoleBody, Text: tt.first, Pause: PauseSentence, Rate: 1.5, Source: tt.first}
			units := []Unit{first, next}
			want := units
			if tt.tail != "" {
				head, tail := first, first
				head.Text, head.Pause = tt.head, PauseLead
				tail.Text, tail.Source = tt.tail, ""
				want = []Unit{head, tail, next}
			}
			got := SplitLead(units)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("SplitLead (-want +got):\n%s", diff)
			}
			if units[0] != first {
				t.Errorf("SplitLead changed its argument: %+v", units[0])
			}
		})
	}
	if got := SplitLead(nil); got != nil {
		t.Errorf("SplitLead(nil) = %v", got)
	}
	// Script's units are what it splits: only the first sentence, and at
	// a dash too, which Script makes a comma.
	for _, tt := range []struct{ text, want string }{
		{long + " " + long, "The small ferry that links the old harbour with the island village went back into service on Monday morning,|after four months in the shipyard.|" + long},
		{"The small ferry that links the harbour — and the village — went back into service on Monday.", "The small ferry that links the harbour,|and the village, went back into service on Monday."},
	} {
		var texts []string
		for _, u := range SplitLead(Script("en_US", "", "", tt.text, nil)) {
			texts = append(texts, u.Text)
		}
		if got := strings.Join(texts, "|"); got != tt.want {
			t.Errorf("SplitLead(Script(%q)) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
