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
}

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
