package pcm

import (
	"math"
)

// Loudness targets used by Normalize. The target is a speech-gated RMS level
// in dBFS, where 0 dBFS is the RMS of a full-scale square wave. -20 dBFS of
// gated speech RMS lands close to -19 LUFS, the usual target for mono spoken
// word (podcasts, audiobooks), and leaves room below the peak ceiling.
const (
	// DefaultTargetDBFS is the loudness that speech is normalised to.
	DefaultTargetDBFS = -20.0
	// PeakCeilingDBFS is the highest sample level Normalize lets through.
	PeakCeilingDBFS = -1.0
	// MaxGainDB bounds the gain Normalize applies, so that near-silent
	// input (breath, noise) is not blown up into loud noise.
	MaxGainDB = 30.0
)

// Gating parameters for Loudness: 50 ms blocks; blocks quieter than
// absoluteGateDBFS are silence, and blocks more than relativeGateDB below the
// mean of the remaining blocks are pauses between words.
const (
	blockDuration    = 50 // ms
	absoluteGateDBFS = -60.0
	relativeGateDB   = 20.0
)

// Loudness returns the speech-gated RMS level of samples in dBFS: the signal
// is cut into 50 ms blocks, silent blocks (below -60 dBFS) and pauses (more
// than 20 dB below the mean of the rest) are ignored, and the RMS of the
// remaining blocks is returned. ok is false when nothing but silence remains.
func Loudness(samples []int16, rate int) (dbfs float64, ok bool) {
	block := max(1, rate*blockDuration/1000)
	var energies []float64
	for start := 0; start < len(samples); start += block {
		end := min(start+block, len(samples))
		if end-start < block/2 && start > 0 {
			// A tail shorter than half a block says too little; skip it.
			break
		}
		var sum float64
		for _, s := range samples[start:end] {
			v := float64(s)
			sum += v * v
		}
		energies = append(energies, sum/float64(end-start))
	}
	gate := func(threshold float64) (float64, int) {
		var sum float64
		var n int
		for _, e := range energies {
			if e > threshold {
				sum += e
				n++
			}
		}
		if n == 0 {
			return 0, 0
		}
		return sum / float64(n), n
	}
	mean, n := gate(energyOf(absoluteGateDBFS))
	if n == 0 {
		return math.Inf(-1), false
	}
	rel := mean * math.Pow(10, -relativeGateDB/10)
	mean, _ = gate(max(rel, energyOf(absoluteGateDBFS)))
	return dbOfEnergy(mean), true
}

// energyOf is the mean square sample value of a signal at level dbfs.
func energyOf(dbfs float64) float64 {
	a := fullScale * math.Pow(10, dbfs/20)
	return a * a
}

func dbOfEnergy(e float64) float64 {
	return 10 * math.Log10(e/(fullScale*fullScale))
}

const fullScale = 32768.0

// Normalize returns a copy of samples scaled so that their Loudness is
// targetDBFS (see DefaultTargetDBFS), with a look-ahead peak limiter that
// keeps every sample at or below PeakCeilingDBFS. The gain is capped at
// MaxGainDB. Input that is all silence is returned unchanged (as a copy).
// samples is not modified.
func Normalize(samples []int16, rate int, targetDBFS float64) []int16 {
	level, ok := Loudness(samples, rate)
	if !ok {
		return append([]int16(nil), samples...)
	}
	gain := min(targetDBFS-level, MaxGainDB)
	out := Gain(samples, rate, gain)
	// Heavy limiting of peaks lowers the loudness; make up for it, a
	// couple of times at most.
	for range 2 {
		after, ok := Loudness(out, rate)
		if !ok || targetDBFS-after < 0.2 || gain >= MaxGainDB {
			break
		}
		gain = min(gain+targetDBFS-after, MaxGainDB)
		out = Gain(samples, rate, gain)
	}
	return out
}

// Gain returns a copy of samples amplified by db decibels. A look-ahead
// limiter (5 ms attack, smooth release) lowers the gain around peaks that
// would exceed PeakCeilingDBFS, so the result never clips. samples is not
// modified.
func Gain(samples []int16, rate int, db float64) []int16 {
	out := make([]int16, len(samples))
	if len(samples) == 0 {
		return out
	}
	g := math.Pow(10, db/20)
	ceiling := fullScale * math.Pow(10, PeakCeilingDBFS/20)

	var peak float64
	for _, s := range samples {
		peak = max(peak, math.Abs(float64(s)))
	}
	if peak*g <= ceiling {
		// Nothing to limit: no gain curve needed.
		for i, s := range samples {
			out[i] = clamp16(float64(s) * g)
		}
		return out
	}
	// need[i] is the largest gain that keeps sample i under the ceiling.
	need := make([]float64, len(samples))
	for i, s := range samples {
		a := math.Abs(float64(s))
		if a*g > ceiling {
			need[i] = ceiling / a
		} else {
			need[i] = g
		}
	}
	w := max(1, rate*5/1000) // half window: 5 ms
	// A running minimum over ±w followed by a moving average over ±w gives
	// a smooth gain curve that is never above need[i] at any i, because
	// every minimum averaged at i already covers i.
	need = movingAverage(runningMin(need, w), w)
	for i, s := range samples {
		v := float64(s) * need[i]
		// Guard against rounding at the ceiling.
		v = math.Max(-ceiling, math.Min(ceiling, v))
		out[i] = clamp16(v)
	}
	return out
}

// runningMin returns m[i] = min(x[i-w : i+w+1]) using a monotonic deque.
func runningMin(x []float64, w int) []float64 {
	n := len(x)
	m := make([]float64, n)
	deque := make([]int, 0, 2*w+2)
	head := 0
	next := 0 // next index of x to push
	for i := range n {
		for ; next < n && next <= i+w; next++ {
			for len(deque) > head && x[deque[len(deque)-1]] >= x[next] {
				deque = deque[:len(deque)-1]
			}
			deque = append(deque, next)
		}
		for deque[head] < i-w {
			head++
		}
		m[i] = x[deque[head]]
		if head > len(deque)/2 && head > 64 {
			deque = append(deque[:0], deque[head:]...)
			head = 0
		}
	}
	return m
}

// movingAverage returns a[i] = mean(x[i-w : i+w+1]), with the window cut at
// the ends.
func movingAverage(x []float64, w int) []float64 {
	n := len(x)
	prefix := make([]float64, n+1)
	for i, v := range x {
		prefix[i+1] = prefix[i] + v
	}
	a := make([]float64, n)
	for i := range n {
		lo, hi := max(0, i-w), min(n, i+w+1)
		a[i] = (prefix[hi] - prefix[lo]) / float64(hi-lo)
	}
	return a
}
