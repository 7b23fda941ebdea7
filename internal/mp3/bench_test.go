package mp3_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/proctest"
)

// speech60s returns 60 s of espeak-ng speech at the test rate.
func speech60s(tb testing.TB) []int16 {
	tb.Helper()
	one := mustSpeech(tb, "Narrator turns articles into speech that people want to hear. "+
		"On a news paragraph, an independent speech recognizer understood most of the words. "+
		"Articles are full of numbers, dates, currency amounts and abbreviations.")
	var s []int16
	for len(s) < 60*rate {
		s = append(s, one...)
	}
	return s[:60*rate]
}

// BenchmarkEncode60s encodes 60 s of speech with lame, in 100 ms writes,
// at lame's default quality and at -q 7, and reports how many times faster
// than real time that is.
func BenchmarkEncode60s(b *testing.B) {
	samples := speech60s(b)
	for _, q := range []int{0, 7} {
		b.Run(fmt.Sprintf("q%d", q), func(b *testing.B) { benchmarkEncode(b, samples, mp3.Options{Quality: q}) })
	}
}

func benchmarkEncode(b *testing.B, samples []int16, opts mp3.Options) {
	needTool(b, "lame")
	b.SetBytes(int64(2 * len(samples)))
	b.ResetTimer()
	for b.Loop() {
		enc, err := mp3.NewEncoder(b.Context(), io.Discard, opts)
		if err != nil {
			b.Fatal(err)
		}
		for s := samples; len(s) > 0; {
			n := min(len(s), rate/10)
			if err := enc.Write(s[:n]); err != nil {
				b.Fatal(err)
			}
			s = s[n:]
		}
		if err := enc.Close(); err != nil {
			b.Fatal(err)
		}
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(60/perOp, "x-realtime")
}

// BenchmarkEncodeChunk encodes an 8 s chunk, the pipeline's average, unsandboxed and
// sandboxed: each chunk starts a lame, in a worker whose sandbox is built once.
func BenchmarkEncodeChunk(b *testing.B) {
	samples := speech60s(b)
	c := mp3.Chunk{Samples: samples[:8*rate/mp3.FrameSamples*mp3.FrameSamples]}
	for _, sandboxed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sandboxed=%t", sandboxed), func(b *testing.B) {
			needTool(b, "lame")
			var opts mp3.Options
			if sandboxed {
				opts.Sandbox = proctest.Sandbox(b)
			}
			pool := newPool(b, opts)
			for b.Loop() {
				if _, err := pool.Encode(b.Context(), c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
