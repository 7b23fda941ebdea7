package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/narrator/narrator"
)

// cacheVersion changes whenever the processing after synthesis changes
// (rate, trimming, loudness) or the entries' format does, so that old
// entries are never reused. 2: entries hold word timings, and faint
// sound before the speech is cut. 3: 32 kHz.
const cacheVersion = "3"

// cacheEntry is one synthesised unit: its samples, trimmed and normalised,
// and the spoken words in seconds from its first sample (nil if the engine
// does not report them).
type cacheEntry struct {
	samples []int16
	words   []narrator.TranscriptWord
}

// cachedWord is a word's form in a cache entry.
type cachedWord struct {
	Start float64 `json:"s"`
	End   float64 `json:"e"`
	Text  string  `json:"t"`
}

// UnitCache keeps synthesised units on disk, with their word timings,
// keyed by engine, voice, rate and the unit's final text (after
// pronunciation rules and normalisation). An entry is a file: the number
// of samples (uint32), the samples (little-endian int16), then the words
// as JSON.
// An update that changes one sentence resynthesises only that sentence.
// The cache also keeps encoded chunks of MP3 (chunkEncoder), keyed by the
// PCM they encode, as files of MP3 frames.
// The cache is bounded: past its size, the least recently used entries go.
type UnitCache struct {
	dir string
	max int64

	mu    sync.Mutex
	total int64
}

// OpenUnitCache opens (creating) a cache in dir holding at most maxBytes.
func OpenUnitCache(dir string, maxBytes int64) (*UnitCache, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create unit cache: %w", err)
	}
	c := &UnitCache{dir: dir, max: maxBytes}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if info, err := d.Info(); err == nil {
			c.total += info.Size()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan unit cache: %w", err)
	}
	return c, nil
}

// cacheKey names one unit's synthesis: by the engine, its voice and, for an installed
// voice, its files (narrator.Voice.Build), the rate and the text.
func cacheKey(engine, voice, build string, rate float64, text string) string {
	h := sha256.New()
	for _, part := range []string{cacheVersion, engine, voice, build, strconv.FormatFloat(rate, 'g', -1, 64), text} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *UnitCache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".pcm")
}

// read returns the file at p, marking it recently used.
func (c *UnitCache) read(p string) ([]byte, bool) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // recently used; failure only ages it
	return raw, true
}

// get returns a cached unit. A nil cache has nothing.
func (c *UnitCache) get(key string) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	raw, ok := c.read(c.path(key))
	if !ok || len(raw) < 4 {
		return cacheEntry{}, false
	}
	n := int(binary.LittleEndian.Uint32(raw))
	raw = raw[4:]
	if len(raw) < 2*n {
		return cacheEntry{}, false
	}
	var words []cachedWord
	if rest := raw[2*n:]; len(rest) > 0 {
		if json.Unmarshal(rest, &words) != nil {
			return cacheEntry{}, false
		}
	}
	e := cacheEntry{samples: make([]int16, n)}
	for i := range e.samples {
		e.samples[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	for _, w := range words {
		e.words = append(e.words, narrator.TranscriptWord{Start: w.Start, End: w.End, Text: w.Text})
	}
	return e, true
}

// putBuffers hold the encodings of units being stored, reused from unit
// to unit; the collector takes them back when the cache is idle.
var putBuffers = sync.Pool{New: func() any { return new([]byte) }}

// put stores a unit. Failures are not fatal to a rendering, so put reports
// them only for logging. A nil cache stores nothing.
func (c *UnitCache) put(key string, e cacheEntry) error {
	if c == nil {
		return nil
	}
	p := c.path(key)
	var words []byte
	if len(e.words) > 0 {
		cw := make([]cachedWord, len(e.words))
		for i, w := range e.words {
			cw[i] = cachedWord{Start: w.Start, End: w.End, Text: w.Text}
		}
		var err error
		if words, err = json.Marshal(cw); err != nil {
			return fmt.Errorf("cache put: %w", err)
		}
	}
	bp := putBuffers.Get().(*[]byte)
	defer putBuffers.Put(bp)
	raw := slices.Grow((*bp)[:0], 4+2*len(e.samples)+len(words))
	raw = binary.LittleEndian.AppendUint32(raw, uint32(len(e.samples)))
	for _, s := range e.samples {
		raw = binary.LittleEndian.AppendUint16(raw, uint16(s))
	}
	raw = append(raw, words...)
	*bp = raw
	return c.write(p, raw)
}

// write stores raw at p atomically, then prunes the cache if it has grown
// past its bound.
func (c *UnitCache) write(p string, raw []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache put: %w", errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache put: %w", err)
	}
	c.mu.Lock()
	c.total += int64(len(raw))
	over := c.total > c.max
	c.mu.Unlock()
	if over {
		c.prune()
	}
	return nil
}

// prune removes the least recently used entries until the cache is under
// 90% of its bound.
func (c *UnitCache) prune() {
	c.mu.Lock()
	defer c.mu.Unlock()
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var entries []entry
	var total int64
	_ = filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			entries = append(entries, entry{path, info.Size(), info.ModTime()})
			total += info.Size()
		}
		return nil
	})
	slices.SortFunc(entries, func(a, b entry) int { return a.used.Compare(b.used) })
	for _, e := range entries {
		if total <= c.max*9/10 {
			break
		}
		if os.Remove(e.path) == nil {
			total -= e.size
		}
	}
	c.total = total
}

// chunkPath names an encoded chunk's file.
func (c *UnitCache) chunkPath(key string) string {
	return filepath.Join(c.dir, key[:2], key+".mp3")
}

// getChunk returns a cached chunk's MP3 frames. A nil cache has nothing.
func (c *UnitCache) getChunk(key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	return c.read(c.chunkPath(key))
}

// putChunk stores a chunk's MP3 frames; like put, it reports failures only
// for logging. A nil cache stores nothing.
func (c *UnitCache) putChunk(key string, data []byte) error {
	if c == nil {
		return nil
	}
	return c.write(c.chunkPath(key), data)
}
