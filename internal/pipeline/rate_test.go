package pipeline_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pipeline"
)

// rateEngine is a tone engine that records the rate each text was asked
// at and, like a real engine, speaks faster at a higher rate.
type rateEngine struct {
	toneEngine
	mu    sync.Mutex
	asked []rateCall
}

type rateCall struct {
	Text string
	Rate float64
}

func (e *rateEngine) Synthesize(ctx context.Context, voice, text string, rate float64) ([]int16, int, error) {
	e.mu.Lock()
	e.asked = append(e.asked, rateCall{text, rate})
	e.mu.Unlock()
	samples, sr, err := e.toneEngine.Synthesize(ctx, voice, text, rate)
	return samples[:int(float64(len(samples))/rate)], sr, err
}

func (e *rateEngine) since(n int) []rateCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	calls := append([]rateCall(nil), e.asked[n:]...)
	// Units are synthesised in parallel: the order of the calls is not the script's.
	slices.SortFunc(calls, func(a, b rateCall) int { return strings.Compare(a.Text, b.Text) })
	return calls
}

// TestRenderSpeechRate: a project's rate reaches the engine for every
// unit, multiplying a rate the article's SSML sets, and the unit cache
// keeps each rate's speech apart, so a rendering after a rate change
// speaks every sentence anew, at the new rate, and one at an unchanged
// rate reuses it.
func TestRenderSpeechRate(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	eng := &rateEngine{}
	b.pipe = newPipe(t, pipeline.Config{Engines: everyEngine(eng), Media: b.media, Cache: b.openCache(t), Workers: 1})
	a := &narrator.Audio{Body: `<speak>Plain words here. <prosody rate="1.2">Quicker words here.</prosody></speak>`}
	render := func(rate float64) ([]rateCall, float64) {
		t.Helper()
		n := len(eng.since(0))
		proj := *b.proj
		proj.SpeechRate = rate
		r, err := b.pipe.Render(t.Context(), a, &proj)
		if err != nil {
			t.Fatal(err)
		}
		return eng.since(n), r.Duration.Seconds()
	}
	calls, normal := render(0)
	want := []rateCall{{"Plain words here.", 1}, {"Quicker words here.", 1.2}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("default rate: engine calls (-want +got):\n%s", diff)
	}
	calls, fast := render(1.25)
	want = []rateCall{{"Plain words here.", 1.25}, {"Quicker words here.", 1.5}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("rate 1.25: engine calls (-want +got):\n%s; a unit cached at another rate was reused", diff)
	}
	if fast >= normal {
		t.Errorf("rate 1.25 lasts %.3f s, rate 1 %.3f s", fast, normal)
	}
	if calls, _ = render(1.25); len(calls) != 0 {
		t.Errorf("rate 1.25 again: engine calls %+v, want all from the cache", calls)
	}
	calls, _ = render(2)
	want = []rateCall{{"Plain words here.", 2}, {"Quicker words here.", 2.4}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("rate 2: engine calls (-want +got):\n%s", diff)
	}
}
