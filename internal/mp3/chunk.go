package mp3

import (
	"bytes"
	"context"
	"fmt"
)

// FrameSamples is the number of samples of one MPEG-1 Layer III frame.
const FrameSamples = 1152

// ChunkPrime is how much audio EncodeChunk needs before and after a
// chunk (Chunk.Before, Chunk.After) for its first and last frames to be
// those of one encoding of the whole stream: lame's encoder delay and its
// look-ahead, the MDCT's overlap with the neighbouring frames and the
// psychoacoustic model's history all lie within four frames, 144 ms at
// 32 kHz. (TestEncodeChunkSeamless passes with two; the pipeline's test,
// which compares every window of a whole audio, needs four.)
const ChunkPrime = 4 * FrameSamples

// A Chunk is a stretch of a longer stream of PCM, to be encoded alone:
// Samples are the chunk, Before the samples that precede it in the stream
// (ChunkPrime of them, or all there are) and After those that follow it
// (ChunkPrime, or all there are).
type Chunk struct {
	Before, Samples, After []int16
	// Last is set on the stream's last chunk, whose encoding ends with
	// the frames that flush the encoder.
	Last bool
}

// EncodeChunk encodes one chunk of a stream so that the chunks' MP3s,
// concatenated in order, are one MP3 of the stream with the timeline of a
// single encoding: sample n of the stream plays at n+Delay, and no sample
// is lost or repeated at a boundary. Each chunk must start at a multiple
// of FrameSamples in the stream, so every chunk but the last must hold a
// multiple of FrameSamples samples; len(Before) must be a multiple of
// FrameSamples too, which it is when it is ChunkPrime or the whole stream
// before the chunk.
//
// It runs lame on Before, Samples and After together, without the bit
// reservoir (a frame's bits never lie in the frame before it, which may
// come from another chunk's encoding), and keeps the frames that play the
// chunk's part of the timeline: frames len(Before)/FrameSamples onwards,
// len(Samples)/FrameSamples of them, or all to the end for the last chunk.
// A frame f plays samples [f×FrameSamples−Delay, (f+1)×FrameSamples−Delay)
// of the stream, so the first frames of a chunk play the end of the one
// before it. Where the encoder sees the same audio around a boundary,
// both sides encode it the same way, and the boundary is inaudible; it is
// exactly inaudible where the chunks are cut in silence.
//
// Cancelling ctx kills lame; EncodeChunk then returns an error that
// matches ctx.Err().
func EncodeChunk(ctx context.Context, c Chunk, opts Options) ([]byte, error) {
	if len(c.Before)%FrameSamples != 0 {
		return nil, fmt.Errorf("encode mp3 chunk: %d samples before it, not whole frames", len(c.Before))
	}
	if !c.Last && len(c.Samples)%FrameSamples != 0 {
		return nil, fmt.Errorf("encode mp3 chunk: %d samples, not whole frames", len(c.Samples))
	}
	opts.noReservoir = true
	// Room for lame's output at the constant bitrate, plus a frame.
	n := len(c.Before) + len(c.Samples) + len(c.After)
	var out bytes.Buffer
	out.Grow(n/FrameSamples*opts.frameBytes() + 2*opts.frameBytes())
	enc, err := NewEncoder(ctx, &out, opts)
	if err != nil {
		return nil, fmt.Errorf("encode mp3 chunk: %w", err)
	}
	for _, s := range [][]int16{c.Before, c.Samples, c.After} {
		if err := enc.Write(s); err != nil {
			_ = enc.Close()
			return nil, fmt.Errorf("encode mp3 chunk: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode mp3 chunk: %w", err)
	}
	skip := len(c.Before) / FrameSamples
	keep := len(c.Samples) / FrameSamples
	kept := make([]byte, 0, out.Len())
	f := 0
	info, err := Frames(&out, func(fr Frame) error {
		if f >= skip && (c.Last || f < skip+keep) {
			kept = append(kept, fr.Data...)
		}
		f++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("encode mp3 chunk: %w", err)
	}
	if info.Frames < skip+keep {
		return nil, fmt.Errorf("encode mp3 chunk: lame wrote %d frames, want at least %d", info.Frames, skip+keep)
	}
	return kept, nil
}
