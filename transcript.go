package narrator

import "path"

// File names of a rendering's transcript, stored beside its MP3 under the
// same unguessable token, so that they are published, replaced and deleted
// with it.
const (
	TranscriptJSONName = "transcript.json"
	TranscriptVTTName  = "transcript.vtt"
	// PodcastTranscriptName is the transcript in the Podcasting 2.0 JSON
	// transcript format, which podcast apps read.
	PodcastTranscriptName = "podcast-transcript.json"
)

// Transcript says what is spoken when in one rendering of an audio: the
// player's read-along text, the WebVTT captions and the podcast feed's
// transcript. Times are seconds from the start of the MP3, which the HLS
// stream shares.
type Transcript struct {
	Duration  float64
	Sentences []TranscriptSentence
}

// TranscriptSentence is one synthesis unit: its span in the audio and its
// text as written in the article, not as normalised for the engine.
type TranscriptSentence struct {
	Start, End float64
	Text       string
	// Words are the spoken words with their spans, where the engine reports
	// word boundaries; nil where it does not. A word's Text is as spoken,
	// which may differ from the article (numbers written out, for example).
	Words []TranscriptWord
	// Kind says which part of the article the sentence reads.
	Kind SentenceKind
	// Block numbers the article's blocks in the order they are read, from
	// 0 (the title, the author line, each heading and paragraph); the
	// sentences of one block share its number.
	Block int
}

// SentenceKind says which part of an article a transcript sentence reads.
type SentenceKind string

// The kinds of sentence.
const (
	SentenceBody    SentenceKind = ""        // a paragraph, list item or quote
	SentenceTitle   SentenceKind = "title"   // the title or the author line
	SentenceHeading SentenceKind = "heading" // one of the article's headings
)

// TranscriptWord is one spoken word and its span in the audio.
type TranscriptWord struct {
	Start, End float64
	Text       string
}

// TranscriptKeys returns the media keys of the transcript that belongs to
// the rendering whose MP3 is stored at mp3Key, or "" for an empty key (an
// audio not yet processed).
func TranscriptKeys(mp3Key string) (jsonKey, vttKey string) {
	if mp3Key == "" {
		return "", ""
	}
	dir := path.Dir(mp3Key)
	return path.Join(dir, TranscriptJSONName), path.Join(dir, TranscriptVTTName)
}

// PodcastTranscriptKey returns the media key of the Podcasting 2.0 JSON
// transcript of the rendering whose MP3 is stored at mp3Key, or "" for an
// empty key.
func PodcastTranscriptKey(mp3Key string) string {
	if mp3Key == "" {
		return ""
	}
	return path.Join(path.Dir(mp3Key), PodcastTranscriptName)
}

// ChaptersName is the file name of a rendering's chapters, in the
// Podcasting 2.0 JSON chapters format, beside its MP3.
const ChaptersName = "chapters.json"

// ChaptersKey returns the media key of the chapters of the rendering whose
// MP3 is stored at mp3Key, or "" for an empty key.
func ChaptersKey(mp3Key string) string {
	if mp3Key == "" {
		return ""
	}
	return path.Join(path.Dir(mp3Key), ChaptersName)
}

// Chapter is a chapter of an audio: it starts Start seconds into the MP3.
type Chapter struct {
	Start float64
	Title string
}

// Chapters returns the chapters of t: one titled title at 0, then one
// for each heading of the article, starting where its first sentence is
// spoken, titled with the heading's sentences. A heading spoken before
// the previous chapter starts is left out, so chapters are in order.
func (t *Transcript) Chapters(title string) []Chapter {
	chapters := []Chapter{{Start: 0, Title: title}}
	cur, seen := -1, -1 // the block of the last chapter's heading; of the last heading
	for _, s := range t.Sentences {
		if s.Kind != SentenceHeading || s.Block == seen && s.Block != cur {
			continue
		}
		last := &chapters[len(chapters)-1]
		if s.Block == cur {
			last.Title += " " + s.Text
			continue
		}
		seen = s.Block
		if s.Start > last.Start {
			chapters = append(chapters, Chapter{Start: s.Start, Title: s.Text})
			cur = s.Block
		}
	}
	return chapters
}
