// Package pcm holds helpers for mono, 16-bit signed PCM audio held as
// []int16: resampling, loudness normalisation, silence, trimming and WAV
// decoding. Functions that return samples never modify their input.
package pcm

import (
	"math"
	"time"
)

// Samples returns how many samples d lasts at rate Hz, rounded to the
// nearest; 0 if d or rate is not positive.
func Samples(d time.Duration, rate int) int {
	if d <= 0 || rate <= 0 {
		return 0
	}
	return int((int64(d)*int64(rate) + int64(time.Second)/2) / int64(time.Second))
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
	threshold := int(math.Ceil(fullScale * math.Pow(10, TrimThresholdDBFS/20)))
	margin := int(int64(rate) * int64(trimMargin) / int64(time.Second))
	loud := func(i int) bool {
		s := samples[i]
		return int(s) >= threshold || -int(s) >= threshold
	}
	first := -1
	for i := range samples {
		if loud(i) {
			first = i
			break
		}
	}
	if first < 0 {
		return 0, 0
	}
	last := first
	for i := len(samples) - 1; i > first; i-- {
		if loud(i) {
			last = i
			break
		}
	}
	return max(0, first-margin), min(len(samples), last+1+margin)
}

// onsetWindow is the length over which Onset measures the level.
const onsetWindow = 10 * time.Millisecond

// Onset returns where the level of samples first reaches dbfs: the middle
// of the first 10 ms window whose RMS does. It returns -1 if none does.
func Onset(samples []int16, rate int, dbfs float64) int {
	win := max(1, int(int64(rate)*int64(onsetWindow)/int64(time.Second)))
	if len(samples) < win {
		win = len(samples)
	}
	if win == 0 {
		return -1
	}
	t := fullScale * math.Pow(10, dbfs/20)
	threshold := t * t * float64(win) // on the sum of squares
	var sum float64
	for i, s := range samples {
		sum += float64(s) * float64(s)
		if i >= win {
			old := float64(samples[i-win])
			sum -= old * old
		}
		if i >= win-1 && sum >= threshold {
			return i + 1 - win + win/2
		}
	}
	return -1
}
