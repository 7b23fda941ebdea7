package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/narrator/narrator/internal/mp3"
)

// How the audio is cut into chunks, which are encoded in parallel, and of
// which an edit re-encodes only those whose audio changed. A chunk may end
// only in a pause between sentences. Where it ends depends on the sentence
// before the pause alone, not on the length of the chunk so far: it ends
// there if the hash of that sentence's samples is a multiple of chunkOdds,
// so that chunks hold chunkOdds sentences on average (about 8 s). An edit
// then moves no boundary but its own sentence's, and the chunks after it
// stay the same. Chunks end at every pause until they cover the live
// stream's first segment (FirstSegmentTarget), so that the stream starts
// at once, and a chunk longer than ChunkMax ends at the next.
const (
	chunkOdds = 2
	// ChunkMax bounds the chunks, and with them memory and the cost of
	// an edit, whatever the hashes.
	ChunkMax = 30 * time.Second
)

// chunkRoom is the samples a chunk is given room for when it starts: most
// chunks are shorter.
const chunkRoom = 12 * SampleRate

// chunkCut is the silence a chunk ends in: the chunk keeps the first
// half, and both halves are at least mp3.ChunkPrime, so that the audio the
// encoder sees around a cut is silence on both sides, the same whatever
// the chunks hold.
const chunkCut = 2 * mp3.ChunkPrime

// chunkPause is the shortest pause a chunk may end in: every pause between
// sentences (Pause… in internal/speak: 250 ms, more between paragraphs)
// and none within one (120 ms at most). A shorter one than chunkCut (288
// ms at 32 kHz) is stretched to it, which no listener hears. It is at
// least mp3.ChunkPrime.
const chunkPause = SampleRate / 5

// chunkVersion changes whenever the encoding of chunks does (the lame
// options are part of the key), so that old encodings are never reused.
const chunkVersion = "2"

// encodeOptions returns the settings of every MP3.
func (p *Pipeline) encodeOptions() mp3.Options {
	return mp3.Options{SampleRate: SampleRate, Bitrate: Bitrate, Quality: EncoderQuality, Sandbox: p.sandbox}
}

// A chunkEncoder is the pipeline's MP3 encoder. It cuts the PCM written to
// it into chunks that end in pauses and hold whole MP3 frames, encodes
// them on the pipeline's lame workers (mp3.ChunkPool), reusing the
// encodings the cache holds, and writes the MP3 in order to its writer.
//
// Each chunk's length is made a whole number of frames by lengthening the
// pause it ends in by less than a frame (36 ms), so that every chunk
// starts on a frame and holds the same samples wherever it lies in the
// audio: after an edit that changes one sentence, the chunks of the other
// sentences are the same, and the cache has their encodings. What Write
// returns says how much it lengthened the pause, for the timeline.
//
// Write and Close are called from one goroutine. At most a few chunks per
// worker are in memory at a time.
type chunkEncoder struct {
	cache  *UnitCache
	logger *slog.Logger
	lame   *mp3.ChunkPool
	g      *errgroup.Group
	gctx   context.Context
	cancel context.CancelFunc
	order  chan chan []byte // the chunks' encodings to come, in order
	buf    []int16          // the chunk being filled
	prev   []int16          // the end of the chunk before it
	free   chan []int16     // buffers of chunks encoded, for the next ones
	chunks int              // chunks cut so far
	// encoded counts the samples of the chunks cut so far.
	encoded int64
	closed  bool
}

// newChunkEncoder returns an encoder writing the MP3 to w, from another
// goroutine, until Close returns. Cancelling ctx stops it; Write and Close
// then return an error.
func (p *Pipeline) newChunkEncoder(ctx context.Context, w io.Writer) *chunkEncoder {
	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	c := &chunkEncoder{
		cache:  p.cache,
		logger: p.logger,
		lame:   p.lame,
		g:      g,
		gctx:   gctx,
		cancel: cancel,
		order:  make(chan chan []byte, p.workers+1),
		free:   make(chan []int16, 2),
	}
	g.Go(func() error {
		for next := range c.order {
			select {
			case data := <-next:
				if _, err := w.Write(data); err != nil {
					return fmt.Errorf("write mp3: %w", err)
				}
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	return c
}

// Write takes one unit, its speech then pause samples of silence, and
// returns how many samples of silence it added to the pause.
func (c *chunkEncoder) Write(speech []int16, pause int) (int, error) {
	if err := c.gctx.Err(); err != nil {
		return 0, c.fail()
	}
	trail := 0
	for trail < len(speech) && speech[len(speech)-1-trail] == 0 {
		trail++
	}
	quiet := trail + pause
	long := len(c.buf)+len(speech)+pause >= int(ChunkMax.Seconds()*SampleRate)
	// Until the live stream's first segment is covered, every pause ends
	// a chunk, so that its audio is encoded as soon as it is spoken.
	early := c.encoded < int64(FirstSegmentTarget.Seconds()*SampleRate)
	if quiet < chunkPause || (!early && !long && soundHash(speech, pause)%chunkOdds != 0) {
		c.buf = appendSilence(append(c.buf, speech...), pause)
		return 0, nil
	}
	// A pause shorter than chunkCut is stretched to it; the chunk keeps
	// the stretch and half the rest, the next one starts with the other
	// half (at least mp3.ChunkPrime, as chunkPause is).
	stretch := max(0, chunkCut-quiet)
	carry := (quiet + stretch) / 2
	if carry <= pause {
		c.buf = appendSilence(append(c.buf, speech...), pause-carry)
	} else {
		c.buf = append(c.buf, speech[:len(speech)-(carry-pause)]...)
	}
	pad := (mp3.FrameSamples - (len(c.buf)+stretch)%mp3.FrameSamples) % mp3.FrameSamples
	c.buf = appendSilence(c.buf, stretch+pad)
	next := appendSilence(c.buffer(), carry)
	if err := c.cut(next[:mp3.ChunkPrime], false); err != nil {
		return 0, err
	}
	c.buf = next
	return stretch + pad, nil
}

// buffer returns an empty buffer for the next chunk: one a finished
// chunk has given back, else a new one with room for a chunk of the usual
// length, instead of doubling its way there and leaving the halves as
// garbage.
func (c *chunkEncoder) buffer() []int16 {
	select {
	case b := <-c.free:
		return b[:0]
	default:
		return make([]int16, 0, chunkRoom)
	}
}

// recycle gives the buffer of an encoded chunk back for a later one, if
// there is room for it and it is of the usual size: a buffer that grew
// for a long chunk is left to the collector, so that the few kept stay
// small.
func (c *chunkEncoder) recycle(b []int16) {
	if cap(b) > chunkRoom {
		return
	}
	select {
	case c.free <- b:
	default:
	}
}

// appendSilence appends n samples of silence to b.
func appendSilence(b []int16, n int) []int16 {
	b = slices.Grow(b, n)
	tail := b[len(b) : len(b)+n]
	clear(tail)
	return b[:len(b)+n]
}

// Close encodes the last chunk, waits for every chunk to be written, and
// returns the first error.
func (c *chunkEncoder) Close() error {
	defer c.cancel()
	if c.closed {
		return c.fail()
	}
	if err := c.cut(nil, true); err != nil {
		return err
	}
	c.closed = true
	close(c.order)
	return c.g.Wait()
}

// Abort stops the encoder, killing its lame processes, and waits for it.
func (c *chunkEncoder) Abort() {
	c.cancel()
	_ = c.fail()
}

// fail waits for the encoder to stop and returns the error that stopped it.
func (c *chunkEncoder) fail() error {
	if !c.closed {
		c.closed = true
		close(c.order)
	}
	if err := c.g.Wait(); err != nil {
		return err
	}
	return c.gctx.Err()
}

// cut hands the chunk in buf, followed in the audio by after, to a lame
// worker, and queues its encoding to be written in turn.
func (c *chunkEncoder) cut(after []int16, last bool) error {
	// The chunk's buffer goes back to c.free once it is encoded, while the
	// chunks beside it may still be: what they share is copied.
	chunk := mp3.Chunk{Before: c.prev, Samples: c.buf, After: slices.Clone(after), Last: last}
	// Whole frames, as every chunk but the last is.
	c.prev = slices.Clone(c.buf[len(c.buf)-min(len(c.buf), mp3.ChunkPrime):])
	c.chunks++
	c.encoded += int64(len(c.buf))
	done := make(chan []byte, 1)
	select {
	case c.order <- done:
	case <-c.gctx.Done():
		return c.fail()
	}
	c.g.Go(func() error {
		key := chunkKey(chunk)
		if data, ok := c.cache.getChunk(key); ok {
			c.recycle(chunk.Samples)
			done <- data
			return nil
		}
		data, err := c.lame.Encode(c.gctx, chunk)
		if err != nil {
			return err
		}
		c.recycle(chunk.Samples)
		if err := c.cache.putChunk(key, data); err != nil {
			c.logger.Warn("cache mp3 chunk", "err", err)
		}
		done <- data
		return nil
	})
	return nil
}

// soundHash is the FNV-1a hash of a unit's samples, speech then pause
// samples of silence: the same in every process.
func soundHash(speech []int16, pause int) uint32 {
	h := uint32(2166136261)
	for _, v := range speech {
		h ^= uint32(uint16(v))
		h *= 16777619
	}
	for range pause {
		h *= 16777619
	}
	return h
}

// chunkKey names the encoding of a chunk: what lame is given, and how.
func chunkKey(c mp3.Chunk) string {
	h := sha256.New()
	fmt.Fprintf(h, "chunk %s; %d Hz, %d kbps, q%d; last %t;", chunkVersion,
		SampleRate, Bitrate, EncoderQuality, c.Last)
	var b [8 << 10]byte
	for _, part := range [][]int16{c.Before, c.Samples, c.After} {
		h.Write(binary.LittleEndian.AppendUint64(b[:0], uint64(len(part))))
		for len(part) > 0 {
			n := min(len(part), len(b)/2)
			for i, s := range part[:n] {
				binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
			}
			h.Write(b[:2*n])
			part = part[n:]
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
