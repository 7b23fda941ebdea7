package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/speak"
	"github.com/narrator/narrator/internal/transcript"
)

// transcriptOf returns the transcript of a rendering: one sentence per
// unit, or per run of units that split one sentence, each as written in
// the article, timed in the MP3 of duration d, with its words as written
// (writtenWords) where the engine timed the spoken ones. A sample written to the
// encoder at n plays at n+mp3.Delay, in the MP3 and the HLS stream alike.
func transcriptOf(units []speak.Unit, spans []span, d time.Duration) *narrator.Transcript {
	dur := d.Seconds()
	at := func(n int64) float64 {
		return min(float64(n+mp3.Delay)/SampleRate, dur)
	}
	t := &narrator.Transcript{Duration: dur}
	for i, u := range units {
		sp := spans[i]
		var cur *narrator.TranscriptSentence
		if n := len(t.Sentences); n > 0 && u.Source == "" {
			cur = &t.Sentences[n-1] // the next piece of a long sentence
		} else {
			text := u.Source
			if text == "" {
				text = u.Text
			}
			t.Sentences = append(t.Sentences, narrator.TranscriptSentence{Start: at(sp.start), Text: text, Kind: sentenceKind(u), Block: u.Block})
			cur = &t.Sentences[len(t.Sentences)-1]
		}
		cur.End = max(at(sp.end), cur.Start)
		// Words lie within their unit's speech: an engine's word boundary
		// may fall a little before the level that starts the sentence.
		base, from, to := at(sp.unitStart), at(sp.start), at(sp.end)
		for _, w := range sp.words {
			start := min(max(base+w.Start, from), to)
			cur.Words = append(cur.Words, narrator.TranscriptWord{
				Start: start, End: min(max(base+w.End, start), to), Text: w.Text,
			})
		}
	}
	for i := range t.Sentences {
		if s := &t.Sentences[i]; len(s.Words) > 0 {
			s.Words = writtenWords(s.Text, s.Words)
		}
	}
	return t
}

// sentenceKind returns the kind of the sentence unit u starts.
func sentenceKind(u speak.Unit) narrator.SentenceKind {
	switch {
	case u.Role == speak.RoleTitle:
		return narrator.SentenceTitle
	case u.Heading:
		return narrator.SentenceHeading
	}
	return narrator.SentenceBody
}

// chaptersTitle returns the title of the first chapter of a, whose
// transcript is t: a's title, as its podcast item has it, or for an
// untitled audio its first sentence.
func chaptersTitle(a *narrator.Audio, t *narrator.Transcript) string {
	if title := strings.TrimSpace(a.Title); title != "" || len(t.Sentences) == 0 {
		return title
	}
	return t.Sentences[0].Text
}

// storeTranscript stores the transcript of a beside the MP3 at mp3Key: as
// JSON, as WebVTT and as a Podcasting 2.0 JSON transcript, and its
// chapters.
func (p *Pipeline) storeTranscript(ctx context.Context, mp3Key string, a *narrator.Audio, t *narrator.Transcript) error {
	jsonKey, vttKey := narrator.TranscriptKeys(mp3Key)
	data, err := transcript.MarshalJSON(t)
	if err != nil {
		return err
	}
	podcast, err := transcript.MarshalPodcastJSON(t)
	if err != nil {
		return err
	}
	chapters, err := transcript.MarshalChapters(t.Chapters(chaptersTitle(a, t)))
	if err != nil {
		return err
	}
	files := []struct {
		key, what string
		data      []byte
	}{
		{jsonKey, "transcript", data},
		{vttKey, "captions", transcript.VTT(t)},
		{narrator.PodcastTranscriptKey(mp3Key), "podcast transcript", podcast},
		{narrator.ChaptersKey(mp3Key), "chapters", chapters},
	}
	for _, f := range files {
		if err := p.media.Put(ctx, f.key, bytes.NewReader(f.data)); err != nil {
			return fmt.Errorf("store %s: %w", f.what, err)
		}
	}
	return nil
}
