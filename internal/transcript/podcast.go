package transcript

import (
	"strings"

	"github.com/narrator/narrator"
)

// PodcastVersion is the version of the Podcasting 2.0 JSON transcript
// format that PodcastJSON writes.
const PodcastVersion = "1.0.0"

// PodcastDocument is a transcript in the Podcasting 2.0 JSON transcript
// format (the podcast namespace's docs/examples/transcripts/transcripts.md):
//
//	{"version": "1.0.0", "segments": [{"startTime": 0, "endTime": 0.41, "body": "As"}]}
type PodcastDocument struct {
	Version  string           `json:"version"`
	Segments []PodcastSegment `json:"segments"`
}

// PodcastSegment is one segment of a PodcastDocument: a word, or a
// sentence where the engine reported no word boundaries. The format's
// optional speaker is left out: one synthetic voice reads the article.
type PodcastSegment struct {
	StartTime Seconds `json:"startTime"`
	EndTime   Seconds `json:"endTime"`
	Body      string  `json:"body"`
}

// FromTranscriptPodcast returns t in the Podcasting 2.0 format: for each
// sentence with words, a segment per token of its text as written (with
// its punctuation), timed by the word it holds; for every other sentence,
// one segment. The last segment of each sentence ends with a line break,
// as the format's example marks a sentence's end.
func FromTranscriptPodcast(t *narrator.Transcript) PodcastDocument {
	d := PodcastDocument{Version: PodcastVersion, Segments: []PodcastSegment{}}
	for _, s := range t.Sentences {
		text := strings.Join(strings.Fields(s.Text), " ")
		if text == "" {
			continue
		}
		segs := wordSegments(s)
		if len(segs) == 0 {
			segs = []PodcastSegment{{StartTime: Seconds(s.Start), EndTime: Seconds(max(s.End, s.Start)), Body: text}}
		}
		segs[len(segs)-1].Body += "\n"
		d.Segments = append(d.Segments, segs...)
	}
	return d
}

// wordSegments returns a segment per timed word of s, its body the
// sentence's tokens as written from the one that holds the word to the
// next that holds one; tokens before the first such token start the first
// segment. It returns nil if s has no words or no token holds its first.
func wordSegments(s narrator.TranscriptSentence) []PodcastSegment {
	var segs []PodcastSegment
	var lead []string
	k := 0
	for _, tok := range strings.Fields(s.Text) {
		if k < len(s.Words) && strings.Contains(strings.ToLower(tok), strings.ToLower(s.Words[k].Text)) {
			w := s.Words[k]
			body := strings.Join(append(lead, tok), " ")
			segs = append(segs, PodcastSegment{StartTime: Seconds(w.Start), EndTime: Seconds(max(w.End, w.Start)), Body: body})
			lead, k = nil, k+1
			continue
		}
		if len(segs) == 0 {
			lead = append(lead, tok)
			continue
		}
		segs[len(segs)-1].Body += " " + tok
	}
	return segs
}

// MarshalPodcastJSON returns t as a Podcasting 2.0 JSON transcript.
func MarshalPodcastJSON(t *narrator.Transcript) ([]byte, error) {
	return encode(FromTranscriptPodcast(t), "podcast transcript")
}

// ChaptersVersion is the version of the Podcasting 2.0 JSON chapters
// format that MarshalChapters writes.
const ChaptersVersion = "1.2.0"

// Chapters is an audio's chapters in the Podcasting 2.0 JSON chapters
// format (the podcast namespace's docs/examples/chapters/jsonChapters.md):
//
//	{"version": "1.2.0", "chapters": [{"startTime": 0, "title": "The title"}]}
type Chapters struct {
	Version  string    `json:"version"`
	Chapters []Chapter `json:"chapters"`
}

// Chapter is one chapter of Chapters.
type Chapter struct {
	StartTime Seconds `json:"startTime"`
	Title     string  `json:"title"`
}

// MarshalChapters returns chapters in the Podcasting 2.0 JSON chapters
// format.
func MarshalChapters(chapters []narrator.Chapter) ([]byte, error) {
	d := Chapters{Version: ChaptersVersion, Chapters: make([]Chapter, 0, len(chapters))}
	for _, c := range chapters {
		d.Chapters = append(d.Chapters, Chapter{StartTime: Seconds(c.Start), Title: c.Title})
	}
	return encode(d, "chapters")
}
