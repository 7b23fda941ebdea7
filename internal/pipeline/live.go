package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/hls"
)

// FirstSegmentTarget is the length of an audio's first HLS segment, cut
// shorter than SegmentTarget so that the live stream has something to play
// as soon as the title and the first sentence are spoken.
const FirstSegmentTarget = 2 * time.Second

// liveStream publishes a rendering's live playlist and reports its
// progress.
type liveStream struct {
	media  MediaWriter
	key    string // the live playlist's media key
	report func(narrator.RenderProgress)

	mu       sync.Mutex
	progress narrator.RenderProgress
}

func newLiveStream(media MediaWriter, prefix string, units int, report func(narrator.RenderProgress)) *liveStream {
	if report == nil {
		report = func(narrator.RenderProgress) {}
	}
	return &liveStream{
		media:    media,
		key:      prefix + narrator.LivePlaylistName,
		report:   report,
		progress: narrator.RenderProgress{UnitsTotal: units},
	}
}

// stored publishes the live playlist of the segments stored so far. It is
// the Segmenter's stored callback.
func (l *liveStream) stored(ctx context.Context, segments []hls.Segment) error {
	if err := l.put(ctx, hls.EventPlaylist(segments, SegmentTarget, false)); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.progress.LiveKey == "" {
		l.progress.LiveKey = l.key
		l.report(l.progress)
	}
	return nil
}

// end publishes the final live playlist, which lists every segment and
// says that the stream is complete.
func (l *liveStream) end(ctx context.Context, segments []hls.Segment) error {
	return l.put(ctx, hls.EventPlaylist(segments, SegmentTarget, true))
}

func (l *liveStream) put(ctx context.Context, playlist []byte) error {
	if err := l.media.Put(ctx, l.key, bytes.NewReader(playlist)); err != nil {
		return fmt.Errorf("store live playlist: %w", err)
	}
	return nil
}

// unitWritten counts a unit written to the audio.
func (l *liveStream) unitWritten() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.progress.UnitsDone++
	l.report(l.progress)
}

// countingWriter counts the units written through it: speak writes each
// unit with one Write.
type countingWriter struct {
	pcmWriter
	live *liveStream
}

func (w countingWriter) Write(speech []int16, pause int) (int, error) {
	pad, err := w.pcmWriter.Write(speech, pause)
	if err != nil {
		return pad, err
	}
	w.live.unitWritten()
	return pad, nil
}
