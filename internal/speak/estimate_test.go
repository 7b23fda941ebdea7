package speak

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/narrator/narrator"
)

// fromUnits is the length of an article's units as Estimate reckons
// speech: their pauses, and their characters at EstimateCharsPerSecond
// slowed by their rates.
func fromUnits(units []Unit) time.Duration {
	var d time.Duration
	var chars float64
	for _, u := range units {
		d += u.Pause
		rate := u.Rate
		if rate <= 0 {
			rate = 1
		}
		n := 0
		for _, r := range u.Text {
			if !unicode.IsSpace(r) {
				n++
			}
		}
		chars += float64(n) / rate
	}
	return d + time.Duration(chars/EstimateCharsPerSecond*float64(time.Second))
}

// TestEstimateBelowScript: the estimate, made from the parsed body only,
// stays at or below what the units Script makes come to, so that refusing
// an article on it never refuses one whose audio would fit; and it is
// close enough to be of use.
func TestEstimateBelowScript(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"plain":      "First sentence here. Second one follows.\n\nA new paragraph, with a clause.",
		"markdown":   "# A heading\n\nSome *text* and a [link](https://example.com).\n\n- one item\n- another item",
		"html":       "<h1>Title</h1><p>Hello <b>world</b>. More text here.</p><blockquote>A quote.</blockquote>",
		"breaks":     `<speak>One<break time="10s"/>two<break time="3s"/><break time="10s"/>three.<break strength="strong"/></speak>`,
		"break-end":  `<speak><p>Words here.<break time="5s"/></p><p>More words.</p></speak>`,
		"prosody":    `<speak><prosody rate="x-slow">Slowly read words.</prosody> <prosody rate="25%">Very slow.</prosody></speak>`,
		"say-as":     `<speak>Call <say-as interpret-as="characters">ABC</say-as> at <say-as interpret-as="cardinal">12</say-as>.</speak>`,
		"only-break": `<speak><break time="10s"/><break time="10s"/></speak>`,
		"numbers":    "It cost $1,234.56 on 03/10/2026 at 10:30, about 45% more.",
	}
	samples, _ := filepath.Glob(filepath.Join("testdata", "samples", "*.*"))
	for _, p := range samples {
		if strings.HasSuffix(p, ".spoken.txt") || strings.HasSuffix(p, ".md") && filepath.Base(p) == "README.md" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tests[filepath.Base(p)] = string(data)
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Estimate("A title", "Ann Author", body)
			want := fromUnits(Script("en_US", "A title", "Ann Author", body, nil))
			if got > want+time.Second/2 {
				t.Errorf("Estimate = %v, over the units' %v", got, want)
			}
			if got < want/2 {
				t.Errorf("Estimate = %v, under half the units' %v", got, want)
			}
		})
	}
}

// TestEstimateBreakBomb: an SSML body of short words between the longest
// breaks, the review's article of over 13 hours in under 100,000 characters,
// is estimated at its real length.
func TestEstimateBreakBomb(t *testing.T) {
	t.Parallel()
	body := "<speak>" + strings.Repeat(`a<break time="10s"/>`, 4_900) + "</speak>"
	if got := Estimate("", "", body); got < 13*time.Hour {
		t.Errorf("Estimate = %v, want at least 13h", got)
	}
}

// BenchmarkEstimate100k measures Estimate on the article of
// BenchmarkScript100k: what a create pays to check the length.
func BenchmarkEstimate100k(b *testing.B) {
	body := bigArticle(100_000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Estimate("Title", "Author", body)
	}
}

// TestLengthCheck checks that the length check judges a text by Estimate
// against its cap, the default one when it is 0.
func TestLengthCheck(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("A sentence of words. ", 200) // over a minute by Estimate
	if d := Estimate("", "", body); d <= time.Minute || d > narrator.MaxAudioDuration {
		t.Fatalf("Estimate of the body = %v; the test needs over a minute and under the default cap", d)
	}
	tests := []struct {
		name    string
		max     time.Duration
		body    string
		invalid bool
	}{
		{"over its cap", time.Minute, body, true},
		{"under its cap", time.Hour, body, false},
		{"under the default cap", 0, body, false},
		{"short", time.Minute, "Hello.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := LengthCheck(tt.max).Text("A title", "An author", tt.body)
			if got := narrator.ErrorCode(err) == narrator.EINVALID; got != tt.invalid || (err != nil && !tt.invalid) {
				t.Errorf("LengthCheck(%v).Text = %v, want EINVALID: %t", tt.max, err, tt.invalid)
			}
		})
	}
}
