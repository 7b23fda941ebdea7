package speak

import (
	"strings"
	"testing"
	"time"
)

// TestPathologicalInputs runs Script on 100,000-character inputs built to
// trip quadratic loops or slow regular expressions, and bounds the time.
func TestPathologicalInputs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	inputs := map[string]string{
		"dots":         strings.Repeat("a.", 50_000),
		"spaced-dots":  strings.Repeat("A. ", 33_334),
		"digits":       strings.Repeat("1", 100_000),
		"digit-groups": strings.Repeat("1,000", 20_000),
		"dashes":       strings.Repeat("1-", 50_000),
		"markup":       strings.Repeat("<b><i>", 16_667),
		"ssml":         "<speak>" + strings.Repeat(`<prosody rate="fast"><break/>a `, 3_000),
		"markdown":     strings.Repeat("**_[a](b) ", 10_000),
		"newlines":     strings.Repeat("a\n", 50_000),
		"blank-lines":  strings.Repeat("a\n\n", 33_334),
		"quotes":       strings.Repeat(`"a." `, 20_000),
		"capitals":     strings.Repeat("ABC ", 25_000),
		"money":        strings.Repeat("$1.5m ", 16_667),
		"placeholders": strings.Repeat("\uE000\uE100\uE001", 11_111),
		"long-word":    strings.Repeat("x", 100_000),
		"url":          "http://" + strings.Repeat("a.", 50_000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			units := Script("en_US", "", "", in, CompileRules([]Rule{{"a", "ay"}}))
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			for _, u := range units {
				if len(u.Text) > MaxUnitChars {
					t.Fatalf("unit of %d bytes", len(u.Text))
				}
			}
			t.Logf("%d units in %v", len(units), time.Since(start))
		})
	}
}
