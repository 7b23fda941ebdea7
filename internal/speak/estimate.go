package speak

import (
	"time"
	"unicode"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/article"
)

// EstimateCharsPerSecond is the speaking speed Estimate assumes at the
// normal rate: faster than any of the engines reads (about 15 characters a
// second), so that the estimate stays below the real length.
const EstimateCharsPerSecond = 20

// LengthCheck returns the check of an audio's length against max
// (narrator.MaxAudioDuration when 0) whose estimate of a text is Estimate.
func LengthCheck(max time.Duration) narrator.LengthCheck {
	return narrator.LengthCheck{Estimate: Estimate, Max: max}
}

// Estimate returns a length that the audio of an article will not fall
// short of, for refusing at once an article whose audio would be far too
// long (narrator.LengthCheck): its pauses as Script places them, SSML
// breaks included, and its speech at EstimateCharsPerSecond, slowed by
// SSML prosody rates. It only parses the body, which costs a small part
// of what Script does, so that a create can afford it.
func Estimate(title, author, body string) time.Duration {
	var (
		chars   float64 // characters, each divided by its rate
		pauses  time.Duration
		pending bool // words since the last pause counted
	)
	text := func(s string, rate float64) {
		if rate <= 0 {
			rate = 1
		}
		var n int
		for _, r := range s {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				pending = true
				n++
			case !unicode.IsSpace(r):
				n++
			}
		}
		chars += float64(n) / rate
	}
	// pause counts a pause that follows words. Script lets the longest of
	// pauses with no words between them stand, so the first counts, and a
	// block's own pause only when nothing stood after its last words.
	pause := func(d time.Duration) {
		if pending {
			pauses += d
			pending = false
		}
	}
	for _, t := range []string{plainTitle(title), plainTitle(author)} {
		text(t, 1)
		pause(PauseTitle)
	}
	for _, b := range article.Parse(body).Blocks {
		for _, sp := range b.Spans {
			switch sp.Kind {
			case article.SpanText:
				text(sp.Text, sp.Rate)
			case article.SpanBreak:
				pause(sp.Pause)
			}
		}
		if b.Kind == article.Heading {
			pause(PauseHeading)
		} else {
			pause(PauseParagraph)
		}
	}
	return pauses + time.Duration(chars/EstimateCharsPerSecond*float64(time.Second))
}
