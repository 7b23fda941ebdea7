package mediaserve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/hls"
)

// Timing of a growing MP3 (serveLiveMP3).
const (
	// livePoll is how often it looks for the next segment.
	livePoll = 100 * time.Millisecond
	// liveIdle ends it when no segment came for this long: the rendering
	// stalled, and the player had better start again.
	liveIdle = 2 * time.Minute
)

// serveLiveMP3 sends the live stream of the folder of key as one MP3 that
// grows while the audio is made: the MP3 frames of each segment as soon as
// it is stored, until the live playlist ends and every segment it lists is
// sent. Any node can send it: it reads only the media store. Players that
// cannot play a live HLS playlist play it as a plain MP3 of unknown length.
// A folder without a live playlist is a 404.
func (h *Handler) serveLiveMP3(w *deadlineWriter, r *http.Request, key string) {
	ctx := r.Context()
	dir := path.Dir(key) + "/"
	playlistKey := dir + narrator.LivePlaylistName
	if _, err := h.read(ctx, playlistKey); err != nil {
		h.openFailed(w, r, playlistKey, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", narrator.MediaContentType(key))
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	idleSince := time.Now()
	for n := 0; ; {
		segKey := dir + hls.SegmentName(n)
		seg, err := h.read(ctx, segKey)
		switch {
		case err == nil:
			frames, err := hls.SegmentMP3(seg)
			if err != nil {
				h.logger.ErrorContext(ctx, "live mp3: read segment", "key", segKey, "err", err)
				return
			}
			if _, err := w.Write(frames); err != nil {
				return // the player went away
			}
			if err := w.Flush(); err != nil {
				return // the player stopped reading
			}
			n++
			idleSince = time.Now()
			continue
		case !errors.Is(err, narrator.ErrBlobNotFound):
			if ctx.Err() == nil {
				h.logger.ErrorContext(ctx, "live mp3: open segment", "key", segKey, "err", err)
			}
			return
		}
		// Segment n is not there (yet). Segments are stored before the
		// playlist that lists them, so an ended playlist that lists n
		// segments or fewer means the stream is complete; a missing one,
		// that the rendering failed and its files are gone.
		playlist, err := h.read(ctx, playlistKey)
		if err != nil {
			return
		}
		if bytes.Contains(playlist, []byte("#EXT-X-ENDLIST")) {
			keys, err := hls.SegmentKeys(playlistKey, playlist)
			if err != nil || len(keys) <= n {
				return
			}
			continue // stored meanwhile
		}
		if time.Since(idleSince) > liveIdle {
			return
		}
		t := time.NewTimer(livePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// read returns the whole object at key.
func (h *Handler) read(ctx context.Context, key string) ([]byte, error) {
	f, _, err := h.store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
