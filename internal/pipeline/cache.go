package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// cacheVersion changes whenever the processing after synthesis changes
// (rate, trimming, loudness), so that old entries are never reused.
const cacheVersion = "1"

// UnitCache keeps synthesised units on disk, keyed by engine, voice, rate
// and the unit's final text (after pronunciation rules and normalisation).
// An update that changes one sentence re-synthesises only that sentence.
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

// cacheKey names one unit's synthesis.
func cacheKey(engine, voice string, rate float64, text string) string {
	h := sha256.New()
	for _, part := range []string{cacheVersion, engine, voice, strconv.FormatFloat(rate, 'g', -1, 64), text} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *UnitCache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".pcm")
}

// get returns a cached unit's samples. A nil cache has nothing.
func (c *UnitCache) get(key string) ([]int16, bool) {
	if c == nil {
		return nil, false
	}
	p := c.path(key)
	raw, err := os.ReadFile(p)
	if err != nil || len(raw)%2 != 0 {
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // recently used; failure only ages it
	samples := make([]int16, len(raw)/2)
	for i := range samples {
		samples[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return samples, true
}

// put stores a unit's samples. Failures are not fatal to a rendering, so
// put reports them only for logging. A nil cache stores nothing.
func (c *UnitCache) put(key string, samples []int16) error {
	if c == nil {
		return nil
	}
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	raw := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(s))
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
