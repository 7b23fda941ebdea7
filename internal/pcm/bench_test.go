package pcm_test

import (
	"fmt"
	"testing"

	"github.com/narrator/narrator/internal/pcm"
)

// BenchmarkResample resamples 60 s of audio from each engine rate to 44.1 kHz.
func BenchmarkResample(b *testing.B) {
	for _, from := range []int{16000, 22050, 48000} {
		in := sine(440, 0.5, from, 60*from)
		b.Run(fmt.Sprint(from), func(b *testing.B) {
			for b.Loop() {
				pcm.Resample(in, from, 44100)
			}
			b.ReportMetric(60/(b.Elapsed().Seconds()/float64(b.N)), "x-realtime")
		})
	}
}

// BenchmarkNormalize normalises 60 s of 44.1 kHz speech-like audio.
func BenchmarkNormalize(b *testing.B) {
	in := sine(300, 0.9, 44100, 60*44100)
	for i := range in {
		if (i/11025)%2 == 1 {
			in[i] = 0
		}
	}
	for b.Loop() {
		pcm.Normalize(in, 44100, pcm.DefaultTargetDBFS)
	}
	b.ReportMetric(60/(b.Elapsed().Seconds()/float64(b.N)), "x-realtime")
}

// BenchmarkNewResampler measures building the filter, paid once per call
// of Resample.
func BenchmarkNewResampler(b *testing.B) {
	for _, from := range []int{16000, 22050, 48000} {
		b.Run(fmt.Sprint(from), func(b *testing.B) {
			for b.Loop() {
				if _, err := pcm.NewResampler(from, 44100); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResampleFestival resamples 60 s of audio at the rate of
// festival's HTS voice, as the pipeline does a unit at a time.
func BenchmarkResampleFestival(b *testing.B) {
	in := sine(440, 0.5, 32000, 60*32000)
	for b.Loop() {
		pcm.Resample(in, 32000, 44100)
	}
	b.ReportMetric(60/(b.Elapsed().Seconds()/float64(b.N)), "x-realtime")
}
