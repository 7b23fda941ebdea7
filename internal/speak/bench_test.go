package speak

import (
	"os"
	"strings"
	"testing"
)

// bigArticle returns an HTML article of at least n characters built from
// the samples' kind of text, with numbers, money, dates and abbreviations.
func bigArticle(n int) string {
	para := "<p>The city council approved a new transport budget on Tuesday, October 3rd, after a long debate. " +
		"The plan will cost $3.5 million over 4 years, Dr. Maria Lopez said at 10:30 am in the U.S. capital. " +
		"About 65% of 40,000 residents, e.g. those near St. Mary's, asked for 10–15 new buses by 2028; " +
		"see https://example.com/budget or write to info@example.org for details.</p>\n"
	var sb strings.Builder
	sb.WriteString("<h1>Council approves new transport budget</h1>\n")
	for sb.Len() < n {
		sb.WriteString(para)
	}
	return sb.String()
}

// BenchmarkScript100k measures Script on a 100,000-character article, the
// largest the API accepts.
func BenchmarkScript100k(b *testing.B) {
	body := bigArticle(100_000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Script("en_US", "Title", "Author", body, CompileRules([]Rule{{"council", "COWN-sil"}}))
	}
}

// BenchmarkScriptRunOn100k measures a pathological 100,000-character
// article: one paragraph, no sentence ends, no commas.
func BenchmarkScriptRunOn100k(b *testing.B) {
	body := strings.Repeat("word ", 20_000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Script("en_US", "", "", body, nil)
	}
}

// BenchmarkScriptSymbols100k measures 100,000 characters of punctuation,
// digits and markup-like noise.
func BenchmarkScriptSymbols100k(b *testing.B) {
	body := strings.Repeat("1.2.3 <a> $4,5 U.S. 10-11 a.b.c. 9am ", 3000)[:100_000]
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Script("en_US", "", "", body, nil)
	}
}

func TestBigArticleUnits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	units := Script("en_US", "Title", "", bigArticle(100_000), nil)
	if len(units) < 500 {
		t.Fatalf("only %d units", len(units))
	}
	for _, u := range units {
		if len(u.Text) > MaxUnitChars || strings.ContainsAny(u.Text, "<>") {
			t.Fatalf("bad unit %q", u.Text)
		}
	}
	if os.Getenv("SPEAK_DUMP") != "" {
		for _, u := range units[:8] {
			t.Logf("%v %q", u.Pause, u.Text)
		}
	}
}

// BenchmarkScriptRules500 compares, in one run, scripting a short article
// with no rules, with a project's 500 rules compiled each time (as every
// rendering and audio page did) and with them taken from a RuleCache.
func BenchmarkScriptRules500(b *testing.B) {
	rules := make([]Rule, 500)
	for i := range rules {
		rules[i] = Rule{Phrase: "term" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)), Say: "say it"}
	}
	body := bigArticle(2_000)
	b.Run("compile only", func(b *testing.B) {
		for b.Loop() {
			CompileRules(rules)
		}
	})
	b.Run("no rules", func(b *testing.B) {
		for b.Loop() {
			Script("en_US", "Title", "", body, nil)
		}
	})
	b.Run("compiled each time", func(b *testing.B) {
		for b.Loop() {
			Script("en_US", "Title", "", body, CompileRules(rules))
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := NewRuleCache(0)
		for b.Loop() {
			Script("en_US", "Title", "", body, c.Rules(1, rules))
		}
	})
}
