package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/transcript"
)

// MediaOpener reads published media, where transcripts are kept.
type MediaOpener interface {
	// Open returns the object at key; an error matching
	// narrator.ErrBlobNotFound if there is none.
	Open(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error)
}

// transcriptJSON is the answer of the transcript extension: the stored
// transcript document with the audio's ID and the URLs of its files.
type transcriptJSON struct {
	AudioID   int64                 `json:"audio_id"`
	Duration  transcript.Seconds    `json:"duration"`
	VTTURL    string                `json:"vtt_url"`
	JSONURL   string                `json:"json_url"`
	Sentences []transcript.Sentence `json:"sentences"`
}

// audioTranscript answers with the transcript of the path's audio, found
// as GET one audio finds it. An audio without one yet, or rendered before
// transcripts existed, is a conflict that says so.
func (s *Server) audioTranscript(w http.ResponseWriter, r *http.Request, c *call) error {
	a, err := s.liveAudio(r, c)
	if err != nil {
		return err
	}
	switch {
	case a.State == narrator.StateFailed:
		return narrator.Errorf(narrator.ECONFLICT, "the audio has no transcript: its synthesis failed.")
	case a.State != narrator.StateProcessed:
		return narrator.Errorf(narrator.ECONFLICT, "the audio is not processed yet; its transcript is ready when its state is processed.")
	}
	m, ok := a.MediaOf(narrator.ContentTypeMP3)
	if !ok || m.Key == "" {
		return narrator.Errorf(narrator.ECONFLICT, "the audio has no published MP3, so no transcript.")
	}
	jsonKey, vttKey := narrator.TranscriptKeys(m.Key)
	if s.media == nil {
		return fmt.Errorf("transcript of audio %d: no media store configured", a.ID)
	}
	f, _, err := s.media.Open(r.Context(), jsonKey)
	if errors.Is(err, narrator.ErrBlobNotFound) {
		return narrator.Errorf(narrator.ECONFLICT, "the audio was rendered before transcripts existed; change its text or resynthesize it to make one.")
	}
	if err != nil {
		return fmt.Errorf("open transcript of audio %d: %w", a.ID, err)
	}
	defer f.Close()
	t, err := transcript.ReadJSON(f)
	if err != nil {
		return fmt.Errorf("read transcript of audio %d: %w", a.ID, err)
	}
	doc := transcript.FromTranscript(t)
	writeJSON(w, http.StatusOK, transcriptJSON{
		AudioID:   a.ID,
		Duration:  doc.Duration,
		VTTURL:    s.mediaURL(vttKey),
		JSONURL:   s.mediaURL(jsonKey),
		Sentences: doc.Sentences,
	})
	return nil
}
