package pcm

import (
	"fmt"
	"math"
)

// Resampling quality parameters. The filter is a Kaiser-windowed sinc with
// resampleZeroCrossings zero crossings on each side of its centre, and a
// cut-off (-6 dB) at resampleRolloff of the lower of the two Nyquist
// frequencies. With beta 8 the stop band is attenuated by about 80 dB, and
// the transition band spans about ±8% of that Nyquist frequency: the pass
// band is flat to 0.1 dB up to about 18 kHz at 44.1 kHz out, and nothing
// above the output's Nyquist frequency aliases back.
const (
	resampleZeroCrossings = 32
	resampleRolloff       = 0.91
	resampleKaiserBeta    = 8.0
)

// Resample converts mono samples from fromRate to toRate with a band-limited
// (windowed-sinc, polyphase) filter and returns a new slice of
// ceil(len(samples)*toRate/fromRate) samples. The input is treated as if it
// were preceded and followed by silence. When the rates are equal it returns a
// copy. It panics if a rate is not positive.
func Resample(samples []int16, fromRate, toRate int) []int16 {
	if fromRate == toRate {
		return append([]int16(nil), samples...)
	}
	r, err := NewResampler(fromRate, toRate)
	if err != nil {
		panic(err)
	}
	out := make([]int16, 0, r.outputLen(int64(len(samples))))
	out = r.Process(out, samples)
	return r.Flush(out)
}

// A Resampler converts a stream of mono samples from one rate to another,
// chunk by chunk, with the same filter as Resample. Its memory use is bounded
// by the filter length, whatever the length of the stream. Feeding a stream in
// pieces gives exactly the same output as Resample on the whole. A Resampler
// is not safe for concurrent use.
type Resampler struct {
	up, down int64     // toRate/g and fromRate/g, g = gcd(fromRate, toRate)
	half     int       // taps on each side of the centre, in input samples
	taps     int       // 2*half
	table    []float32 // up phases × taps coefficients
	buf      []float32 // input history; buf[0] is input sample base
	base     int64     // index (in input samples) of buf[0]; starts negative
	in       int64     // input samples received
	next     int64     // index of the next output sample
	flushed  bool
}

// NewResampler returns a Resampler from fromRate to toRate, both in Hz.
func NewResampler(fromRate, toRate int) (*Resampler, error) {
	if fromRate <= 0 || toRate <= 0 {
		return nil, fmt.Errorf("new resampler %d→%d Hz: rates must be positive", fromRate, toRate)
	}
	g := gcd(fromRate, toRate)
	up, down := int64(toRate/g), int64(fromRate/g)
	// fc is the cut-off relative to the input Nyquist frequency.
	fc := resampleRolloff
	if up < down {
		fc *= float64(up) / float64(down)
	}
	half := int(math.Ceil(resampleZeroCrossings / fc))
	taps := 2 * half
	table := make([]float32, int(up)*taps)
	i0beta := besselI0(resampleKaiserBeta)
	for p := 0; p < int(up); p++ {
		frac := float64(p) / float64(up)
		row := table[p*taps : (p+1)*taps]
		var sum float64
		coef := make([]float64, taps)
		for k := range taps {
			// Distance from the output instant to input sample j = i-half+1+k.
			t := frac + float64(half-1-k)
			x := t / float64(half)
			if x <= -1 || x >= 1 {
				continue
			}
			w := besselI0(resampleKaiserBeta*math.Sqrt(1-x*x)) / i0beta
			c := fc * sinc(fc*t) * w
			coef[k] = c
			sum += c
		}
		// Normalise each phase to unity DC gain so that no phase adds ripple.
		for k := range taps {
			row[k] = float32(coef[k] / sum)
		}
	}
	return &Resampler{
		up: up, down: down, half: half, taps: taps, table: table,
		buf:  make([]float32, half), // leading silence
		base: -int64(half),
	}, nil
}

// Reset makes r ready for a new, unrelated stream, keeping its filter:
// building one costs about 3 ms for 16 kHz input, so a worker that
// resamples many short chunks should keep a Resampler and Reset it between
// chunks rather than call Resample.
func (r *Resampler) Reset() {
	r.buf = r.buf[:0]
	for range r.half {
		r.buf = append(r.buf, 0)
	}
	r.base = -int64(r.half)
	r.in, r.next, r.flushed = 0, 0, false
}

// outputLen is the number of output samples for n input samples.
func (r *Resampler) outputLen(n int64) int64 {
	return (n*r.up + r.down - 1) / r.down
}

// Process appends to dst the output samples that chunk makes available and
// returns the extended slice. Output lags input by about half the filter
// length; call Flush at the end of the stream for the rest.
func (r *Resampler) Process(dst, chunk []int16) []int16 {
	if r.flushed {
		panic("pcm: Resampler.Process after Flush")
	}
	for _, s := range chunk {
		r.buf = append(r.buf, float32(s))
	}
	r.in += int64(len(chunk))
	return r.run(dst, r.outputLen(r.in))
}

// Flush appends the remaining output samples to dst, as if the input were
// followed by silence, and returns the extended slice. The Resampler must not
// be used after Flush.
func (r *Resampler) Flush(dst []int16) []int16 {
	if r.flushed {
		return dst
	}
	r.flushed = true
	for range r.half + 1 {
		r.buf = append(r.buf, 0)
	}
	return r.run(dst, r.outputLen(r.in))
}

// run computes output samples up to limit (exclusive) while their input
// window is buffered, then drops history that no longer matters.
func (r *Resampler) run(dst []int16, limit int64) []int16 {
	end := r.base + int64(len(r.buf)) // one past the last buffered input index
	for r.next < limit {
		pos := r.next * r.down
		i := pos / r.up
		p := pos % r.up
		first := i - int64(r.half) + 1
		if i+int64(r.half) >= end {
			break
		}
		win := r.buf[first-r.base : first-r.base+int64(r.taps)]
		row := r.table[int(p)*r.taps : (int(p)+1)*r.taps]
		dst = append(dst, clamp16(float64(dot(row, win))))
		r.next++
	}
	// Keep input from the first sample the next output needs.
	keep := (r.next*r.down)/r.up - int64(r.half) + 1
	if drop := keep - r.base; drop > 0 && drop <= int64(len(r.buf)) {
		n := copy(r.buf, r.buf[drop:])
		r.buf = r.buf[:n]
		r.base = keep
	}
	return dst
}

// dot is the sum of row[k]*win[k]. It keeps four sums apart, so that each
// addition need not wait for the one before: resampling, one dot product of
// 72 taps per output sample, is most of the CPU time the pipeline spends on
// a unit beside the engine's. win must be at least as long as row.
func dot(row, win []float32) float32 {
	win = win[:len(row)]
	var a0, a1, a2, a3 float32
	k := 0
	for ; k+3 < len(row); k += 4 {
		a0 += row[k] * win[k]
		a1 += row[k+1] * win[k+1]
		a2 += row[k+2] * win[k+2]
		a3 += row[k+3] * win[k+3]
	}
	for ; k < len(row); k++ {
		a0 += row[k] * win[k]
	}
	return (a0 + a1) + (a2 + a3)
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the zeroth-order modified Bessel function of the first kind,
// by its power series.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 64; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < sum*1e-12 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// clamp16 rounds v to the nearest int16, saturating at the limits.
// clamp16 rounds v half away from zero, as math.Round does, and clamps it
// to the int16 range. Adding a half and truncating gives math.Round's
// result for every v but the two doubles next to ±0.5 (which it rounds
// away from zero), and is several times faster: it runs once per output
// sample of every resampling and gain.
func clamp16(v float64) int16 {
	switch {
	case v >= math.MaxInt16:
		return math.MaxInt16
	case v <= math.MinInt16:
		return math.MinInt16
	case v >= 0:
		return int16(v + 0.5)
	default:
		return int16(v - 0.5)
	}
}
