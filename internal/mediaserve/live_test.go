package mediaserve_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/mediaserve"
)

// countingOpener serves a live playlist that lists no segment yet, and
// counts the opens of every key.
type countingOpener struct {
	mu    sync.Mutex
	opens map[string]int
	seen  chan struct{} // a send per open of the playlist
}

func (o *countingOpener) Open(_ context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error) {
	o.mu.Lock()
	o.opens[key]++
	o.mu.Unlock()
	if strings.HasSuffix(key, "/"+narrator.LivePlaylistName) {
		select {
		case o.seen <- struct{}{}:
		default:
		}
		b := []byte("#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n")
		return nopSeekCloser{bytes.NewReader(b)}, narrator.BlobInfo{Size: int64(len(b)), ModTime: time.Unix(1, 0)}, nil
	}
	return nil, narrator.BlobInfo{}, narrator.ErrBlobNotFound
}

func (o *countingOpener) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, c := range o.opens {
		n += c
	}
	return n
}

// TestLiveMP3PollShared: the listeners of one live stream share one poll
// of the media store, at most once a second, however many they are: each
// costs one open to start, and waiting costs no more.
func TestLiveMP3PollShared(t *testing.T) {
	t.Parallel()
	const listeners = 10
	store := &countingOpener{opens: map[string]int{}, seen: make(chan struct{}, 1000)}
	srv := httptest.NewServer(http.StripPrefix("/media/", mediaserve.New(store, mediaserve.Options{})))
	t.Cleanup(srv.Close)
	client := srv.Client()
	client.Timeout = time.Minute // the response headers come at once
	start := time.Now()
	for range listeners {
		req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/media/tok/"+narrator.LiveMP3Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	// Wait for a few polls beyond each listener's first look.
	for range listeners + 3 {
		select {
		case <-store.seen:
		case <-time.After(30 * time.Second):
			t.Fatal("the live playlist is not polled")
		}
	}
	elapsed := time.Since(start)
	// One open per listener to start, then one poll at once and one a
	// second.
	if got, max := store.total(), listeners+2+int(elapsed/time.Second); got > max {
		t.Errorf("%d listeners waiting %v made %d opens of the media store, want at most %d", listeners, elapsed.Round(time.Millisecond), got, max)
	}
}
