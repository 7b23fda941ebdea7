package mp3_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
)

// newPool returns a chunk pool of two workers that the test closes.
func newPool(tb testing.TB, opts mp3.Options) *mp3.ChunkPool {
	tb.Helper()
	p := mp3.NewChunkPool(opts, 2, tb.TempDir())
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Error(err)
		}
	})
	return p
}

// encodeChunks encodes stream in chunks cut at the sample positions cuts
// (multiples of mp3.FrameSamples), as a caller of ChunkPool.Encode does,
// and returns their concatenation.
func encodeChunks(tb testing.TB, stream []int16, cuts []int, opts mp3.Options) []byte {
	tb.Helper()
	needTool(tb, "lame")
	pool := newPool(tb, opts)
	var out bytes.Buffer
	bounds := append(append([]int{0}, cuts...), len(stream))
	for i := 0; i+1 < len(bounds); i++ {
		from, to := bounds[i], bounds[i+1]
		c := mp3.Chunk{
			Before:  stream[max(0, from-mp3.ChunkPrime):from],
			Samples: stream[from:to],
			After:   stream[to:min(len(stream), to+mp3.ChunkPrime)],
			Last:    i+2 == len(bounds),
		}
		data, err := pool.Encode(tb.Context(), c)
		if err != nil {
			tb.Fatal(err)
		}
		out.Write(data)
	}
	return out.Bytes()
}

func TestEncodeChunkSeamless(t *testing.T) {
	t.Parallel()
	const frame = mp3.FrameSamples
	pause := make([]int16, rate/4) // the shortest pause between sentences
	var speech []int16
	var speechCuts []int
	for i, s := range []string{
		"The council met on Tuesday evening.",
		"Its members voted on the new budget, after a long debate.",
		"Several residents spoke before the vote.",
		"Most of them asked for more money for the library.",
	} {
		if i > 0 {
			// Cut in the middle of the pause, on a frame.
			speechCuts = append(speechCuts, (len(speech)-len(pause)/2)/frame*frame)
		}
		speech = append(speech, mustSpeech(t, s)...)
		speech = append(speech, pause...)
	}
	// A chord with a slow tremolo, cut anywhere: the encoder's state
	// matters most where the sound never stops.
	chord := make([]int16, 8*rate)
	for i := range chord {
		x := float64(i) / rate
		chord[i] = int16(8000 * (1 + 0.5*math.Sin(2*math.Pi*3*x)) *
			(math.Sin(2*math.Pi*220*x) + 0.5*math.Sin(2*math.Pi*1375*x) + 0.25*math.Sin(2*math.Pi*4410*x)) / 1.75)
	}
	var chordCuts []int
	for c := 37 * frame; c < len(chord)-frame; c += 41 * frame {
		chordCuts = append(chordCuts, c)
	}
	for _, tc := range []struct {
		name   string
		stream []int16
		cuts   []int
	}{
		{"speech cut in pauses", speech, speechCuts},
		{"chord cut anywhere", chord, chordCuts},
		{"short chunks", chord[:3*frame+17], []int{frame, 2 * frame}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := mp3.Options{Quality: 3}
			// The reference: the whole stream as one chunk, a single
			// encoding with the same settings.
			whole := pcmtest.DecodeMP3(t, encodeChunks(t, tc.stream, nil, opts), rate)
			chunked := pcmtest.DecodeMP3(t, encodeChunks(t, tc.stream, tc.cuts, opts), rate)
			// The same timeline: as many samples, each where a single
			// encoding plays it.
			if len(chunked) != len(whole) {
				t.Fatalf("chunked MP3 decodes to %d samples, a single encoding to %d", len(chunked), len(whole))
			}
			// Coding noise against the source, in 10 ms windows: where a
			// frame from one chunk meets a frame from the next, it is no
			// louder than the single encoding's in the same window. A
			// click, a gap, a repeated or lost sample or a jump in level
			// would be far louder; 1.5 (-87 dBFS) allows for the
			// rounding of silence.
			const win = rate / 100
			got := pcmtest.NoiseRMS(chunked, tc.stream, mp3.Delay, win)
			want := pcmtest.NoiseRMS(whole, tc.stream, mp3.Delay, win)
			var worst float64
			for _, c := range tc.cuts {
				// Frame c/frame, the first of a chunk, plays the stream
				// from c-Delay; check two frames either side.
				for i := max(0, (c-mp3.Delay-2*frame)/win); i <= (c-mp3.Delay+2*frame)/win && i < len(got); i++ {
					if got[i] > 1.1*want[i]+1.5 {
						t.Errorf("cut at %d: noise %.1f in the window from sample %d, a single encoding's %.1f", c, got[i], i*win, want[i])
					}
					worst = max(worst, got[i]/max(want[i], 1.5))
				}
			}
			t.Logf("noise at the cuts: at most %.2f× a single encoding's", worst)
		})
	}
}

// The bit reservoir, which chunks go without, lends a frame the bits its
// neighbours did not need. Without it, the coding noise of speech at the
// pipeline's settings rises a little; the pipeline's intelligibility test
// measures what it costs a listener.
func TestEncodeChunkNoiseWithoutReservoir(t *testing.T) {
	t.Parallel()
	speech := mustSpeech(t, "Several residents spoke before the vote. Most of them asked for more money for the library.")
	opts := mp3.Options{Bitrate: 64, Quality: 3}
	snr := func(decoded []int16) float64 {
		var sig, noise float64
		for i, v := range speech {
			d := float64(decoded[i+mp3.Delay]) - float64(v)
			sig += float64(v) * float64(v)
			noise += d * d
		}
		return 10 * math.Log10(sig/noise)
	}
	with := snr(pcmtest.DecodeMP3(t, mustEncode(t, speech, opts), rate))
	without := snr(pcmtest.DecodeMP3(t, encodeChunks(t, speech, nil, opts), rate))
	t.Logf("SNR of speech at 64 kbps: %.1f dB with the reservoir, %.1f dB without", with, without)
	if without < with-3 {
		t.Errorf("SNR without the reservoir %.1f dB, with it %.1f dB: more than 3 dB lost", without, with)
	}
}

func TestEncodeChunkErrors(t *testing.T) {
	t.Parallel()
	frames := make([]int16, 2*mp3.FrameSamples)
	for _, tc := range []struct {
		name  string
		chunk mp3.Chunk
		opts  mp3.Options
		want  string
	}{
		{"before not whole frames", mp3.Chunk{Before: frames[:100], Samples: frames}, mp3.Options{}, "samples before it"},
		{"chunk not whole frames", mp3.Chunk{Samples: frames[:100]}, mp3.Options{}, "not whole frames"},
		{"lame fails", mp3.Chunk{Samples: frames, Last: true}, mp3.Options{Lame: "false"}, "lame failed: fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newPool(t, tc.opts).Encode(t.Context(), tc.chunk)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Encode: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	// The last chunk may hold any number of samples.
	needTool(t, "lame")
	data, err := newPool(t, mp3.Options{}).Encode(t.Context(), mp3.Chunk{Before: frames, Samples: frames[:100], Last: true})
	if err != nil || len(data) == 0 {
		t.Errorf("Encode of a short last chunk: %d bytes, %v", len(data), err)
	}
}
