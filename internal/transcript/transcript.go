// Package transcript owns the wire formats of a rendering's transcript
// (narrator.Transcript): the JSON document stored as transcript.json and
// served by the API, and the WebVTT captions stored as transcript.vtt.
//
// The JSON document is
//
//	{"duration": 12.345, "sentences": [{"start": 0, "end": 2.31, "text": "As written.",
//	  "words": [{"start": 0, "end": 0.41, "text": "as"}], "kind": "title", "block": 0}]}
//
// with times in seconds from the start of the MP3, rounded to the
// millisecond; "words" is left out where the engine reports no word
// boundaries, "kind" for body text. The package also writes the
// Podcasting 2.0 JSON transcript and chapters (podcast.go).
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/narrator/narrator"
)

// Seconds is a time in seconds, written with millisecond precision.
type Seconds float64

// MarshalJSON writes s rounded to the millisecond, without exponent.
func (s Seconds) MarshalJSON() ([]byte, error) {
	f := float64(s)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("transcript time %v is not a number of seconds", f)
	}
	r := roundMS(f)
	if r == 0 {
		r = 0 // not -0
	}
	return strconv.AppendFloat(nil, r, 'f', -1, 64), nil
}

// Document is the JSON form of a transcript.
type Document struct {
	Duration  Seconds    `json:"duration"`
	Sentences []Sentence `json:"sentences"`
}

// Sentence is the JSON form of one sentence.
type Sentence struct {
	Start Seconds `json:"start"`
	End   Seconds `json:"end"`
	Text  string  `json:"text"`
	Words []Word  `json:"words,omitempty"`
	// Kind is "title" or "heading" for those parts of the article, and
	// left out for the rest.
	Kind narrator.SentenceKind `json:"kind,omitempty"`
	// Block numbers the article's blocks in reading order.
	Block int `json:"block"`
}

// Word is the JSON form of one spoken word.
type Word struct {
	Start Seconds `json:"start"`
	End   Seconds `json:"end"`
	Text  string  `json:"text"`
}

// FromTranscript returns the JSON form of t. Sentences is never nil, so
// that an empty transcript has "sentences": [].
func FromTranscript(t *narrator.Transcript) Document {
	d := Document{Duration: Seconds(t.Duration), Sentences: make([]Sentence, 0, len(t.Sentences))}
	for _, s := range t.Sentences {
		ws := Sentence{Start: Seconds(s.Start), End: Seconds(s.End), Text: s.Text, Kind: s.Kind, Block: s.Block}
		for _, w := range s.Words {
			ws.Words = append(ws.Words, Word{Start: Seconds(w.Start), End: Seconds(w.End), Text: w.Text})
		}
		d.Sentences = append(d.Sentences, ws)
	}
	return d
}

// Transcript returns the domain form of d.
func (d Document) Transcript() *narrator.Transcript {
	t := &narrator.Transcript{Duration: float64(d.Duration)}
	for _, s := range d.Sentences {
		ts := narrator.TranscriptSentence{Start: float64(s.Start), End: float64(s.End), Text: s.Text, Kind: s.Kind, Block: s.Block}
		for _, w := range s.Words {
			ts.Words = append(ts.Words, narrator.TranscriptWord{Start: float64(w.Start), End: float64(w.End), Text: w.Text})
		}
		t.Sentences = append(t.Sentences, ts)
	}
	return t
}

// MarshalJSON returns the JSON document of t.
func MarshalJSON(t *narrator.Transcript) ([]byte, error) {
	return encode(FromTranscript(t), "transcript")
}

// encode returns v as JSON with a final newline, leaving "<", ">" and "&"
// unescaped; what names v in the error.
func encode(v any, what string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return buf.Bytes(), nil
}

// ErrInvalid is matched (errors.Is) by the error of ReadJSON for a
// document that is not a transcript.
var ErrInvalid = errors.New("invalid transcript")

// maxJSON bounds a transcript document read back: about 40 hours of speech.
const maxJSON = 64 << 20

// maxSeconds bounds a time read back: far beyond any audio, and small
// enough that MarshalJSON's rounding to milliseconds stays finite.
const maxSeconds = 1e9

// ReadJSON reads a JSON document written by MarshalJSON. It checks that
// every time is a number of seconds from 0 to maxSeconds and that no span
// ends before it starts.
func ReadJSON(r io.Reader) (*narrator.Transcript, error) {
	var d Document
	dec := json.NewDecoder(io.LimitReader(r, maxJSON))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if d.Duration < 0 || d.Duration > maxSeconds {
		return nil, fmt.Errorf("%w: duration %v is out of range", ErrInvalid, d.Duration)
	}
	for i, s := range d.Sentences {
		if s.Start < 0 || s.End < s.Start || s.End > maxSeconds {
			return nil, fmt.Errorf("%w: sentence %d spans %v to %v", ErrInvalid, i, s.Start, s.End)
		}
		for j, w := range s.Words {
			if w.Start < 0 || w.End < w.Start || w.End > maxSeconds {
				return nil, fmt.Errorf("%w: word %d of sentence %d spans %v to %v", ErrInvalid, j, i, w.Start, w.End)
			}
		}
	}
	return d.Transcript(), nil
}

// VTT returns t as WebVTT captions: one cue per sentence, numbered from 1,
// its text escaped so that no markup or cue syntax can come from the
// article. A cue lasts at least a millisecond, as players drop empty ones.
// Where the sentence has words, each that starts after the cue (and after
// the word before) is preceded by its start as a cue timestamp
// ("As <00:00:00.410>written."), WebVTT's word timing.
func VTT(t *narrator.Transcript) []byte {
	var b bytes.Buffer
	b.WriteString("WEBVTT\n")
	for i, s := range t.Sentences {
		start := roundMS(max(s.Start, 0))
		end := max(roundMS(s.End), start+0.001)
		fmt.Fprintf(&b, "\n%d\n%s --> %s\n%s\n", i+1, timestamp(start), timestamp(end), cueWords(s, start, end))
	}
	return b.Bytes()
}

// cueWords returns a sentence's cue text: cueText, with a timestamp before
// each token that holds the sentence's next word, where that word starts
// after the cue's start and the timestamp before, and before its end, as
// WebVTT requires of cue timestamps.
func cueWords(s narrator.TranscriptSentence, start, end float64) string {
	tokens := strings.Fields(s.Text)
	k, last := 0, start
	for i, tok := range tokens {
		tokens[i] = cueText(tok)
		if k >= len(s.Words) || !strings.Contains(strings.ToLower(tok), strings.ToLower(s.Words[k].Text)) {
			continue
		}
		if at := roundMS(s.Words[k].Start); at > last && at < end {
			tokens[i] = "<" + timestamp(at) + ">" + tokens[i]
			last = at
		}
		k++
	}
	return strings.Join(tokens, " ")
}

// timestamp formats seconds as a WebVTT timestamp, HH:MM:SS.mmm.
func timestamp(sec float64) string {
	ms := int64(math.Round(max(sec, 0) * 1000))
	return fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}

// cueText escapes text for a cue payload: &, < and > as character
// references (so "-->" cannot appear either), on one line.
func cueText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// roundMS rounds seconds to the millisecond.
func roundMS(f float64) float64 {
	return math.Round(f*1000) / 1000
}
