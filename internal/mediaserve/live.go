package mediaserve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/hls"
)

// Timing of a growing MP3 (serveLiveMP3).
const (
	// livePoll is how often a stream's live playlist is read while anyone
	// listens to it: once per stream and node, whatever the listeners.
	livePoll = time.Second
	// liveIdle ends it when no segment came for this long: the rendering
	// stalled, and the player had better start again.
	liveIdle = 2 * time.Minute
)

// serveLiveMP3 sends the live stream of the folder of key as one MP3 that
// grows while the audio is made: the MP3 frames of each segment as soon as
// the live playlist lists it, until the playlist ends and every segment it
// lists is sent. Any node can send it: it reads only the media store. The
// listeners of a stream on a node share one reader of its playlist
// (liveWatch), which reads it once a second, so that waiting costs the
// store nothing per listener. Players that cannot play a live HLS playlist
// play it as a plain MP3 of unknown length. A folder without a live
// playlist is a 404.
func (h *Handler) serveLiveMP3(w *deadlineWriter, r *http.Request, key string) {
	ctx := r.Context()
	playlistKey := path.Dir(key) + "/" + narrator.LivePlaylistName
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
	if err := w.Flush(); err != nil {
		return
	}
	sub := h.live.subscribe(ctx, playlistKey)
	defer h.live.unsubscribe(playlistKey, sub)
	idle := time.NewTimer(liveIdle)
	defer idle.Stop()
	for n := 0; ; {
		state, changed := sub.get()
		for ; n < len(state.keys); n++ {
			seg, err := h.read(ctx, state.keys[n])
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, narrator.ErrBlobNotFound) {
					h.logger.ErrorContext(ctx, "live mp3: open segment", "key", state.keys[n], "err", err)
				}
				return // a segment listed and gone: the rendering failed and its files went
			}
			frames, err := hls.SegmentMP3(seg)
			if err != nil {
				h.logger.ErrorContext(ctx, "live mp3: read segment", "key", state.keys[n], "err", err)
				return
			}
			if _, err := w.Write(frames); err != nil {
				return // the player went away
			}
			if err := w.Flush(); err != nil {
				return // the player stopped reading
			}
			idle.Reset(liveIdle)
		}
		if state.ended || state.gone {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-idle.C:
			return
		case <-changed:
		}
	}
}

// liveState is what a live playlist said when last read.
type liveState struct {
	keys  []string // the segments it lists, in order
	ended bool     // it has #EXT-X-ENDLIST: no segment will follow
	gone  bool     // it was removed, or does not parse: the stream is over
}

// liveStream is one stream's shared reader: the latest state, and a
// channel closed when it changes.
type liveStream struct {
	mu      sync.Mutex
	state   liveState
	changed chan struct{}

	listeners int                // guarded by liveWatch.mu
	stop      context.CancelFunc // ends the reader
	done      chan struct{}      // closed when the reader has ended
}

// get returns the latest state and a channel closed when a newer one is
// there.
func (s *liveStream) get() (liveState, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.changed
}

func (s *liveStream) set(st liveState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(st.keys) == len(s.state.keys) && st.ended == s.state.ended && st.gone == s.state.gone {
		return
	}
	s.state = st
	close(s.changed)
	s.changed = make(chan struct{})
}

// liveWatch keeps one reader per live playlist that anyone on this node
// listens to; the reader stops when its last listener leaves.
type liveWatch struct {
	read func(ctx context.Context, key string) ([]byte, error)

	mu      sync.Mutex
	streams map[string]*liveStream
}

// subscribe adds a listener to the stream of playlistKey, starting its
// reader if it is the first. The reader runs under ctx's values, not its
// cancellation, since it outlives the first listener if others stay.
func (lw *liveWatch) subscribe(ctx context.Context, playlistKey string) *liveStream {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if s := lw.streams[playlistKey]; s != nil {
		s.listeners++
		return s
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s := &liveStream{changed: make(chan struct{}), listeners: 1, stop: stop, done: make(chan struct{})}
	lw.streams[playlistKey] = s
	go func() {
		defer close(s.done)
		lw.poll(rctx, playlistKey, s)
	}()
	return s
}

// unsubscribe removes a listener; the last one stops the reader and waits
// for it.
func (lw *liveWatch) unsubscribe(playlistKey string, s *liveStream) {
	lw.mu.Lock()
	s.listeners--
	last := s.listeners == 0
	if last {
		delete(lw.streams, playlistKey)
	}
	lw.mu.Unlock()
	if last {
		s.stop()
		<-s.done
	}
}

// poll reads the playlist at once, then every livePoll, until ctx ends or
// the playlist ends or goes.
func (lw *liveWatch) poll(ctx context.Context, playlistKey string, s *liveStream) {
	t := time.NewTicker(livePoll)
	defer t.Stop()
	for {
		playlist, err := lw.read(ctx, playlistKey)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, narrator.ErrBlobNotFound):
			s.set(liveState{gone: true})
			return
		case err == nil:
			keys, err := hls.SegmentKeys(playlistKey, playlist)
			if err != nil {
				s.set(liveState{gone: true})
				return
			}
			ended := bytes.Contains(playlist, []byte("#EXT-X-ENDLIST"))
			s.set(liveState{keys: keys, ended: ended})
			if ended {
				return
			}
		}
		// Any other error is the store's: the next poll tries again.
		select {
		case <-ctx.Done():
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
