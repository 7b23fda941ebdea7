package mediaserve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/hls"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mediaserve"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/proctest"
	"github.com/narrator/narrator/internal/s3"
	"github.com/narrator/narrator/internal/s3/s3test"
)

const (
	mp3Key = "tok123/audio.mp3"
	secret = "TOP SECRET, outside the media store"
)

type testBundle struct {
	mux     http.Handler // the handler mounted as the lead does
	handler http.Handler // StripPrefix alone, with no ServeMux path cleaning
	mp3     []byte
	media   store
}

// store is what the tests need of a media store.
type store interface {
	mediaserve.Opener
	Put(ctx context.Context, key string, r io.Reader) error
}

// stores are the media stores the handler is served from. Each one makes
// a store for the media and its parent, a store one level up, where setup
// puts a secret beside the media.
var stores = []struct {
	name string
	new  func(t *testing.T) (media, parent store)
}{
	{"localfs", func(t *testing.T) (store, store) {
		dir := t.TempDir()
		return mustLocalfs(t, filepath.Join(dir, "media")), mustLocalfs(t, dir)
	}},
	{"s3", func(t *testing.T) (store, store) {
		opts := s3test.Options(t)
		parent := mustS3(t, opts)
		opts.Prefix += "/media"
		return mustS3(t, opts), parent
	}},
}

func mustLocalfs(t *testing.T, root string) *localfs.Store {
	t.Helper()
	s, err := localfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustS3(t *testing.T, opts s3.Options) *s3.Store {
	t.Helper()
	s, err := s3.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forEachStore runs test as a parallel subtest for each of stores, on a
// fresh setup.
func forEachStore(t *testing.T, test func(t *testing.T, b *testBundle)) {
	t.Helper()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			test(t, setup(t, st.new))
		})
	}
}

// setup stores a few objects in a store made by newStores, and a secret
// beside them in its parent, and mounts the handler at /media/.
func setup(t *testing.T, newStores func(t *testing.T) (media, parent store)) *testBundle {
	t.Helper()
	media, parent := newStores(t)
	if err := parent.Put(t.Context(), "secret.txt", strings.NewReader(secret)); err != nil {
		t.Fatal(err)
	}
	mp3 := make([]byte, 1000)
	for i := range mp3 {
		mp3[i] = byte(i * 7)
	}
	objects := map[string][]byte{
		mp3Key:                      mp3,
		"tok123/hls/index.m3u8":     []byte("#EXTM3U\n"),
		"tok123/hls/seg00000.ts":    []byte("G segment"),
		"tok123/audio.aac":          []byte("aac"),
		"tok123/audio.m4a":          []byte("m4a"),
		"tok123/notes.bin":          []byte("<html><script>alert(1)</script>"),
		"tok123/UPPER.MP3":          []byte("upper"),
		"tok123/transcript.vtt":     []byte("WEBVTT\n"),
		"tok123/transcript.json":    []byte(`{"duration":0,"sentences":[]}`),
		"tok123/deep/er/secret.txt": []byte("inside"),
		voiceKey:                    []byte("an operator's voice model"),
	}
	for k, v := range objects {
		if err := media.Put(t.Context(), k, bytes.NewReader(v)); err != nil {
			t.Fatal(err)
		}
	}
	h := http.StripPrefix("/media/", mediaserve.New(media, mediaserve.Options{Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}))
	mux := http.NewServeMux()
	mux.Handle("/media/", h)
	return &testBundle{mux: mux, handler: h, mp3: mp3, media: media}
}

func do(h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func checkHeaders(t *testing.T, rec *httptest.ResponseRecorder, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func checkErrorBody(t *testing.T, rec *httptest.ResponseRecorder, status, code int) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %q", rec.Code, status, rec.Body)
	}
	checkHeaders(t, rec, map[string]string{
		"Content-Type":                "application/json",
		"Cache-Control":               "no-store",
		"Access-Control-Allow-Origin": "*",
	})
	var body struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body, err)
	}
	if body.Code == nil || *body.Code != code || body.Message == nil || *body.Message == "" {
		t.Errorf("body = %s, want code %d and a message", rec.Body, code)
	}
}

var corsHeaders = map[string]string{
	"Access-Control-Allow-Origin":   "*",
	"Access-Control-Expose-Headers": "Content-Length, Content-Range, Accept-Ranges",
	"X-Content-Type-Options":        "nosniff",
}

func TestGet(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		rec := do(b.mux, http.MethodGet, "/media/"+mp3Key, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("status = %d, want 200; body %q", rec.Code, rec.Body)
		}
		if !bytes.Equal(rec.Body.Bytes(), b.mp3) {
			t.Errorf("body: %d bytes, not the stored object", rec.Body.Len())
		}
		checkHeaders(t, rec, corsHeaders)
		checkHeaders(t, rec, map[string]string{
			"Content-Type":   "audio/mpeg",
			"Content-Length": "1000",
			"Accept-Ranges":  "bytes",
			"Cache-Control":  "public, max-age=3600",
		})
		if rec.Header().Get("ETag") == "" || rec.Header().Get("Last-Modified") == "" {
			t.Errorf("ETag %q, Last-Modified %q; want both set", rec.Header().Get("ETag"), rec.Header().Get("Last-Modified"))
		}

		// Revalidation by ETag or date is answered without the body.
		for name, h := range map[string]map[string]string{
			"If-None-Match":     {"If-None-Match": rec.Header().Get("ETag")},
			"If-Modified-Since": {"If-Modified-Since": rec.Header().Get("Last-Modified")},
		} {
			if rec := do(b.mux, http.MethodGet, "/media/"+mp3Key, h); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
				t.Errorf("%s: status %d with %d body bytes, want 304 and none", name, rec.Code, rec.Body.Len())
			}
		}
	})
}

func TestContentTypes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		tests := []struct{ key, want string }{
			{"tok123/audio.mp3", "audio/mpeg"},
			{"tok123/UPPER.MP3", "audio/mpeg"},
			{"tok123/hls/index.m3u8", "application/vnd.apple.mpegurl"},
			{"tok123/hls/seg00000.ts", "video/mp2t"},
			{"tok123/audio.aac", "audio/aac"},
			{"tok123/audio.m4a", "audio/mp4"},
			{"tok123/notes.bin", "application/octet-stream"}, // never sniffed as HTML
			// The podcast feed's transcripts, which web players read from
			// other origins.
			{"tok123/" + narrator.TranscriptVTTName, "text/vtt; charset=utf-8"},
			{"tok123/" + narrator.TranscriptJSONName, "application/json"},
		}
		for _, tt := range tests {
			t.Run(tt.key, func(t *testing.T) {
				t.Parallel()
				rec := do(b.mux, http.MethodGet, "/media/"+tt.key, nil)
				if rec.Code != http.StatusOK {
					t.Fatalf("status = %d, want 200", rec.Code)
				}
				checkHeaders(t, rec, map[string]string{"Content-Type": tt.want})
				checkHeaders(t, rec, corsHeaders)
			})
		}
	})
}

func TestRange(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		tests := []struct {
			name, rng    string
			status       int
			contentRange string
			from, to     int // expected body b.mp3[from:to]
		}{
			{"first 100", "bytes=0-99", http.StatusPartialContent, "bytes 0-99/1000", 0, 100},
			{"middle", "bytes=500-509", http.StatusPartialContent, "bytes 500-509/1000", 500, 510},
			{"suffix", "bytes=-100", http.StatusPartialContent, "bytes 900-999/1000", 900, 1000},
			{"open end", "bytes=990-", http.StatusPartialContent, "bytes 990-999/1000", 990, 1000},
			{"end past size", "bytes=995-5000", http.StatusPartialContent, "bytes 995-999/1000", 995, 1000},
			{"unsatisfiable", "bytes=5000-6000", http.StatusRequestedRangeNotSatisfiable, "bytes */1000", 0, 0},
			// ServeContent refuses a malformed range without a Content-Range.
			{"garbage", "bytes=zz", http.StatusRequestedRangeNotSatisfiable, "", 0, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				rec := do(b.mux, http.MethodGet, "/media/"+mp3Key, map[string]string{"Range": tt.rng})
				if rec.Code != tt.status {
					t.Fatalf("status = %d, want %d; body %q", rec.Code, tt.status, rec.Body)
				}
				checkHeaders(t, rec, corsHeaders)
				checkHeaders(t, rec, map[string]string{"Content-Range": tt.contentRange})
				if tt.status != http.StatusPartialContent {
					if cc := rec.Header().Get("Cache-Control"); strings.Contains(cc, "immutable") {
						t.Errorf("error response is cacheable: Cache-Control %q", cc)
					}
					checkHeaders(t, rec, map[string]string{"Content-Type": "application/json"})
					var body struct{ Code int }
					if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Code != 10 {
						t.Errorf("error body %q is not the v3 error: %v", rec.Body, err)
					}
					return
				}
				checkHeaders(t, rec, map[string]string{
					"Content-Type":   "audio/mpeg",
					"Content-Length": fmt.Sprint(tt.to - tt.from),
				})
				if !bytes.Equal(rec.Body.Bytes(), b.mp3[tt.from:tt.to]) {
					t.Errorf("body is not bytes %d-%d of the object", tt.from, tt.to-1)
				}
			})
		}
	})
}

func TestHead(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		rec := do(b.mux, http.MethodHead, "/media/"+mp3Key, nil)
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Fatalf("HEAD: status %d with %d body bytes, want 200 and none", rec.Code, rec.Body.Len())
		}
		checkHeaders(t, rec, corsHeaders)
		checkHeaders(t, rec, map[string]string{"Content-Type": "audio/mpeg", "Content-Length": "1000"})

		rec = do(b.mux, http.MethodHead, "/media/"+mp3Key, map[string]string{"Range": "bytes=0-99"})
		if rec.Code != http.StatusPartialContent || rec.Body.Len() != 0 {
			t.Fatalf("HEAD with Range: status %d with %d body bytes, want 206 and none", rec.Code, rec.Body.Len())
		}
		checkHeaders(t, rec, map[string]string{"Content-Range": "bytes 0-99/1000", "Content-Length": "100"})

		rec = do(b.mux, http.MethodHead, "/media/tok123/missing.mp3", nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("HEAD of a missing object: status %d, want 404", rec.Code)
		}
	})
}

// voiceKey is where an installed voice's file is kept.
var voiceKey = narrator.VoiceFile{SHA256: strings.Repeat("ab", 32)}.Key()

func TestNotFound(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		for _, target := range []string{
			"/media/tok123/missing.mp3",
			"/media/nope/audio.mp3",
			"/media/tok123",          // a prefix, not an object
			"/media/tok123/",         // likewise, and no listing
			"/media/",                // the empty key
			"/media/tok123/.tmp-123", // temp files are unreachable
			"/media/tok123/audio.mp3/x",
			"/media/tok123%5caudio.mp3", // backslash
			"/media/tok123/%00.mp3",     // NUL
			"/media/" + voiceKey,        // installed voices' files are never served
		} {
			t.Run(target, func(t *testing.T) {
				t.Parallel()
				rec := do(b.mux, http.MethodGet, target, nil)
				checkErrorBody(t, rec, http.StatusNotFound, 30)
				if got, want := rec.Body.String(), `{"code":30,"message":"Object not found"}`+"\n"; got != want {
					t.Errorf("body = %q, want %q", got, want)
				}
			})
		}
	})
}

func TestMethods(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			t.Run(m, func(t *testing.T) {
				t.Parallel()
				rec := do(b.mux, m, "/media/"+mp3Key, nil)
				checkErrorBody(t, rec, http.StatusMethodNotAllowed, 10)
				checkHeaders(t, rec, map[string]string{"Allow": "GET, HEAD, OPTIONS"})
			})
		}

		t.Run("OPTIONS preflight", func(t *testing.T) {
			t.Parallel()
			rec := do(b.mux, http.MethodOptions, "/media/"+mp3Key, map[string]string{
				"Origin":                         "https://publisher.example",
				"Access-Control-Request-Method":  "GET",
				"Access-Control-Request-Headers": "range",
			})
			if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
				t.Fatalf("status %d with %d body bytes, want 204 and none", rec.Code, rec.Body.Len())
			}
			checkHeaders(t, rec, corsHeaders)
			checkHeaders(t, rec, map[string]string{
				"Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
				"Access-Control-Allow-Headers": "Range",
			})
		})
	})
}

// TestTraversal sends traversal attempts over a real connection, both through
// a ServeMux (which cleans paths) and to StripPrefix alone (which does not).
// Neither may ever return the secret beside the store, or a 5xx.
func TestTraversal(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		targets := []string{
			"/media/../secret.txt",
			"/media/%2e%2e/secret.txt",
			"/media/%2E%2E/secret.txt",
			"/media/tok123/../../secret.txt",
			"/media/tok123/%2e%2e/%2e%2e/secret.txt",
			"/media/tok123%2f..%2f..%2fsecret.txt",
			"/media/..%2fsecret.txt",
			"/media/..%5csecret.txt",
			"/media/%2fetc/passwd",
			"/media//etc/passwd",
			"/media/./tok123/audio.mp3",
		}
		for name, h := range map[string]http.Handler{"mux": b.mux, "stripprefix": b.handler} {
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			for _, target := range targets {
				t.Run(name+target, func(t *testing.T) {
					// NewRequest keeps the path as written: no cleaning, and
					// %2e stays encoded on the wire.
					req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+target, nil)
					if err != nil {
						t.Fatal(err)
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if bytes.Contains(body, []byte(secret)) || resp.StatusCode == http.StatusOK {
						t.Errorf("GET %s: status %d, body %q: escaped the store", target, resp.StatusCode, body)
					}
					if resp.StatusCode >= 500 {
						t.Errorf("GET %s: status %d, want no 5xx for client input", target, resp.StatusCode)
					}
					t.Logf("status %d", resp.StatusCode)
					// Without a ServeMux to redirect, the handler itself refuses.
					if name == "stripprefix" && resp.StatusCode != http.StatusNotFound {
						t.Errorf("GET %s: status %d, want 404", target, resp.StatusCode)
					}
				})
			}
		}
	})
}

// openerFunc is an Opener made of a function, for failures a real store
// cannot be made to produce on demand.
type openerFunc func(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error)

func (f openerFunc) Open(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error) {
	return f(ctx, key)
}

func TestStoreErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		status int
		code   int
	}{
		{"wrapped not found", fmt.Errorf("s3: open: %w", narrator.ErrBlobNotFound), http.StatusNotFound, 30},
		{"invalid key", narrator.Errorf(narrator.EINVALID, "bad key"), http.StatusNotFound, 30},
		{"internal", errors.New("disk on fire at /srv/secret/path"), http.StatusInternalServerError, 50},
		{"unavailable", narrator.Unavailable(errors.New("dial tcp: connection refused")), http.StatusServiceUnavailable, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			h := mediaserve.New(openerFunc(func(context.Context, string) (io.ReadSeekCloser, narrator.BlobInfo, error) {
				return nil, narrator.BlobInfo{}, tt.err
			}), mediaserve.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			rec := do(h, http.MethodGet, "/tok/a.mp3", nil)
			checkErrorBody(t, rec, tt.status, tt.code)
			if retry := rec.Header().Get("Retry-After"); (retry != "") != (tt.status == http.StatusServiceUnavailable) {
				t.Errorf("Retry-After = %q with status %d", retry, tt.status)
			}
			if strings.Contains(rec.Body.String(), "disk on fire") || strings.Contains(rec.Body.String(), "refused") {
				t.Errorf("body %q leaks the internal error", rec.Body)
			}
			if logged := strings.Contains(logs.String(), "disk on fire"); logged != (tt.status == http.StatusInternalServerError) {
				t.Errorf("logged = %v for status %d; logs: %s", logged, tt.status, logs.String())
			}
		})
	}
}

// TestStoreUnavailable checks the answer, on a real S3 store, while its
// server cannot serve (503 SlowDown) and then cannot be reached: a 503 with
// Retry-After and the JSON error body, not a 500.
func TestStoreUnavailable(t *testing.T) {
	t.Parallel()
	p, opts := s3test.NewProxy(t, s3test.Options(t))
	store := mustS3(t, opts)
	if err := store.Put(t.Context(), mp3Key, strings.NewReader("mp3")); err != nil {
		t.Fatal(err)
	}
	h := mediaserve.New(store, mediaserve.Options{})
	if rec := do(h, http.MethodGet, "/"+mp3Key, nil); rec.Code != http.StatusOK {
		t.Fatalf("GET before the fault: %d %s", rec.Code, rec.Body)
	}
	for _, fault := range []struct {
		name  string
		start func()
	}{{"answering 503", p.Fail}, {"unreachable", p.Cut}} {
		t.Run(fault.name, func(t *testing.T) {
			fault.start()
			rec := do(h, http.MethodGet, "/"+mp3Key, nil)
			checkErrorBody(t, rec, http.StatusServiceUnavailable, 50)
			if rec.Header().Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		})
	}
}

// TestLivePlaylist checks that a live playlist, which is rewritten as its
// audio grows, is served to be revalidated on every reload, by ETag only,
// while the segments beside it stay immutable.
func TestLivePlaylist(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		const key = "tok123/" + narrator.LivePlaylistName
		v1 := "#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXTINF:2.0,\nseg-00000.ts\n"
		if err := b.media.Put(t.Context(), key, strings.NewReader(v1)); err != nil {
			t.Fatal(err)
		}
		rec := do(b.mux, http.MethodGet, "/media/"+key, nil)
		if rec.Code != http.StatusOK || rec.Body.String() != v1 {
			t.Fatalf("status %d, body %q; want 200 and the playlist", rec.Code, rec.Body)
		}
		checkHeaders(t, rec, map[string]string{
			"Content-Type":  "application/vnd.apple.mpegurl",
			"Cache-Control": "no-cache",
			"Last-Modified": "",
		})
		etag := rec.Header().Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		if rec := do(b.mux, http.MethodGet, "/media/"+key, map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
			t.Errorf("unchanged playlist revalidated: status %d, want 304", rec.Code)
		}

		v2 := v1 + "#EXTINF:6.0,\nseg-00001.ts\n"
		if err := b.media.Put(t.Context(), key, strings.NewReader(v2)); err != nil {
			t.Fatal(err)
		}
		rec = do(b.mux, http.MethodGet, "/media/"+key, map[string]string{"If-None-Match": etag})
		if rec.Code != http.StatusOK || rec.Body.String() != v2 {
			t.Errorf("grown playlist revalidated: status %d, body %q; want 200 and the new version", rec.Code, rec.Body)
		}
		// A segment is cached like every other object.
		rec = do(b.mux, http.MethodGet, "/media/tok123/hls/seg00000.ts", nil)
		checkHeaders(t, rec, map[string]string{"Cache-Control": "public, max-age=3600"})
	})
}

// TestLiveMP3 checks the growing MP3 of a live stream: it sends the first
// segment's frames while the rest is still to come, then each segment as
// it is stored, and ends, complete, once the live playlist ends.
func TestLiveMP3(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "lame", "apt-get install lame")
	var data bytes.Buffer
	enc, err := mp3.NewEncoder(t.Context(), &data, mp3.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tone := make([]int16, 8*44100)
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/44100))
	}
	if err := enc.Write(tone); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	var names []string
	segs := map[string][]byte{}
	if _, err := hls.Package(t.Context(), bytes.NewReader(data.Bytes()), 2*time.Second, func(name string, b []byte) error {
		names = append(names, name)
		segs[name] = b
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		put := func(key string, v []byte) {
			t.Helper()
			if err := b.media.Put(ctx, key, bytes.NewReader(v)); err != nil {
				t.Fatal(err)
			}
		}
		srv := httptest.NewServer(b.mux)
		t.Cleanup(srv.Close)
		if res, err := http.Get(srv.URL + "/media/tok123/" + narrator.LiveMP3Name); err != nil || res.StatusCode != 404 {
			t.Fatalf("growing MP3 without a live playlist: %v %v, want 404", res.StatusCode, err)
		}

		put("live/"+names[0], segs[names[0]])
		put("live/"+narrator.LivePlaylistName, []byte("#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXTINF:2,\n"+names[0]+"\n"))
		res, err := http.Get(srv.URL + "/media/live/" + narrator.LiveMP3Name)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if ct, cc := res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"); res.StatusCode != 200 || ct != "audio/mpeg" || cc != "no-store" {
			t.Errorf("growing MP3: status %d, Content-Type %q, Cache-Control %q; want 200, audio/mpeg, no-store", res.StatusCode, ct, cc)
		}
		first, err := hls.SegmentMP3(segs[names[0]])
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(first))
		if _, err := io.ReadFull(res.Body, got); err != nil || !bytes.Equal(got, first) {
			t.Fatalf("first segment's frames: %v, equal %v", err, bytes.Equal(got, first))
		}
		// The rest comes as it is stored; the ended playlist ends it.
		playlist := "#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n"
		for _, name := range names {
			if name != names[0] {
				put("live/"+name, segs[name])
			}
			playlist += "#EXTINF:2,\n" + name + "\n"
		}
		put("live/"+narrator.LivePlaylistName, []byte(playlist+"#EXT-X-ENDLIST\n"))
		rest, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if all := append(got, rest...); !bytes.Equal(all, data.Bytes()) {
			t.Errorf("growing MP3 sent %d bytes, want the %d bytes of the MP3", len(all), data.Len())
		}
	})
}

// TestCacheRespectsDeletion: an object's content never changes at its URL,
// but the object can be deleted, so it is never cached for good: caches
// may keep it an hour, then must ask again, and a deleted one is a 404
// to their revalidation.
func TestCacheRespectsDeletion(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		key := "deleted/audio.mp3"
		if err := b.media.Put(t.Context(), key, bytes.NewReader(b.mp3)); err != nil {
			t.Fatal(err)
		}
		rec := do(b.mux, http.MethodGet, "/media/"+key, nil)
		cc := rec.Header().Get("Cache-Control")
		if strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=3600") {
			t.Errorf("Cache-Control %q: want a max-age of an hour and no immutable", cc)
		}
		deleter, ok := b.media.(interface {
			Delete(ctx context.Context, key string) error
		})
		if !ok {
			t.Fatalf("%T cannot delete", b.media)
		}
		if err := deleter.Delete(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		rec = do(b.mux, http.MethodGet, "/media/"+key, map[string]string{"If-None-Match": rec.Header().Get("ETag")})
		if rec.Code != http.StatusNotFound {
			t.Errorf("revalidation of a deleted object: %d, want 404", rec.Code)
		}
	})
}
