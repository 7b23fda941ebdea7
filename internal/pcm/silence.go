// Package pcm holds helpers for mono, 16-bit signed PCM audio held as
// []int16: resampling, loudness normalisation, silence, trimming and WAV
// decoding. Functions that return samples never modify their input.
package pcm

import (
	"math"
	"time"
)

// Silence returns d of silence at rate Hz, rounded to the nearest sample.
func Silence(rate int, d time.Duration) []int16 {
	if d <= 0 || rate <= 0 {
		return nil
	}
	n := (int64(d)*int64(rate) + int64(time.Second)/2) / int64(time.Second)
	return make([]int16, n)
}

// Duration returns how long n samples last at rate Hz.
func Duration(n int, rate int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(int64(n) * int64(time.Second) / int64(rate))
}

// Trimming parameters: a sample counts as sound when its level reaches
// TrimThresholdDBFS; trimMargin of the original signal is kept on each side
// of the sound so that soft onsets and decays are not clipped.
const (
	// TrimThresholdDBFS is the peak level below which TrimSilence treats
	// audio as silence.
	TrimThresholdDBFS = -50.0
	trimMargin        = 20 * time.Millisecond
)

// TrimSilence returns the part of samples between the first and the last
// sound (see TrimThresholdDBFS), keeping 20 ms of margin on each side. The
// result shares memory with samples. It returns an empty slice if samples
// holds only silence.
func TrimSilence(samples []int16, rate int) []int16 {
	start, end := TrimBounds(samples, rate)
	return samples[start:end]
}

// TrimBounds returns the bounds of the part of samples that TrimSilence
// keeps: samples[start:end]. Both are 0 if samples holds only silence.
func TrimBounds(samples []int16, rate int) (start, end int) {
	margin := int(int64(rate) * int64(trimMargin) / int64(time.Second))
	first := Onset(samples)
	if first == len(samples) {
		return 0, 0
	}
	threshold := trimThreshold()
	last := first
	for i := len(samples) - 1; i > first; i-- {
		if s := int(samples[i]); s >= threshold || -s >= threshold {
			last = i
			break
		}
	}
	return max(0, first-margin), min(len(samples), last+1+margin)
}

// Onset returns the index of the first sample whose level reaches
// TrimThresholdDBFS, where sound begins, or len(samples) if there is none.
func Onset(samples []int16) int {
	threshold := trimThreshold()
	for i, s := range samples {
		if int(s) >= threshold || -int(s) >= threshold {
			return i
		}
	}
	return len(samples)
}

// trimThreshold is TrimThresholdDBFS as a sample value.
func trimThreshold() int {
	return int(math.Ceil(fullScale * math.Pow(10, TrimThresholdDBFS/20)))
}
