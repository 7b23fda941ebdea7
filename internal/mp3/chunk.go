package mp3

// FrameSamples is the number of samples of one MPEG-1 Layer III frame.
const FrameSamples = 1152

// ChunkPrime is how much audio ChunkPool.Encode needs before and after a
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
