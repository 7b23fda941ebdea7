// Package standin is a speech engine stand-in for benchmarks: it spends a
// fixed wall-clock time per sentence, without using the CPU, and returns a
// quiet tone as long as the sentence would roughly take to say. It lets a
// benchmark on a small machine show how synthesis throughput grows with
// the number of worker nodes, as it would with real engines on machines of
// their own.
package standin

import (
	"context"
	"math"
	"strings"
	"time"
)

// Rate is the sample rate of the audio the stand-in returns.
const Rate = 16_000

// Engine is the stand-in. It satisfies the pipeline's synthesizer.
type Engine struct {
	perSentence time.Duration
}

// New returns a stand-in that takes perSentence for each sentence.
func New(perSentence time.Duration) *Engine { return &Engine{perSentence: perSentence} }

// Ping reports that the stand-in is ready; it always is.
func (e *Engine) Ping(context.Context) error { return nil }

// Synthesize waits the stand-in's time, or until ctx ends, and returns a
// 220 Hz tone of about a third of a second per word.
func (e *Engine) Synthesize(ctx context.Context, _, text string, rate float64) ([]int16, int, error) {
	t := time.NewTimer(e.perSentence)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	case <-t.C:
	}
	if rate <= 0 {
		rate = 1
	}
	words := max(1, len(strings.Fields(text)))
	n := int(float64(words) * Rate / 3 / rate)
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(2000 * math.Sin(2*math.Pi*220*float64(i)/Rate))
	}
	return pcm, Rate, nil
}
