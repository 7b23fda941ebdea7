package article

import (
	"strings"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"<h1>T</h1><p data-voice=\"x\">Hello &amp; <a href=x>bye</a></p><script>x</script><!-- c -->",
		`<speak><p>Hi <break time="1s"/><say-as interpret-as="characters">abc</say-as><sub alias="x">y</sub><prosody rate="150%">fast</prosody></p></speak>`,
		"# Title\n\n- item **one**\n\n> quote [link](http://x.y)\n\n```\ncode\n```\n",
		"plain text\n\nsecond paragraph",
		strings.Repeat("<div>", 600) + "deep", strings.Repeat("<b><i>", 300) + "x",
		"<speak>" + strings.Repeat("<prosody rate=\"fast\">", 200) + "x",
		"<p>unclosed <b>bold", "a < b > c", "<3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		done := make(chan Document, 1)
		go func() { done <- Parse(body) }()
		var doc Document
		select {
		case doc = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Parse did not finish in 5s on %d bytes: %q", len(body), body)
		}
		for _, b := range doc.Blocks {
			if len(b.Spans) == 0 {
				t.Fatalf("block without spans")
			}
			for _, s := range b.Spans {
				if s.Rate <= 0 {
					t.Fatalf("rate %v", s.Rate)
				}
				if s.Pause < 0 {
					t.Fatalf("pause %v", s.Pause)
				}
			}
		}
	})
}
