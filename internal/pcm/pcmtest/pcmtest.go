// Package pcmtest makes the audio that tests feed to Narrator: tones,
// square waves and the WAV files that hold them. It also reads back the
// MP3 that Narrator makes of them, and measures its coding noise.
package pcmtest

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"testing"
	"time"

	gomp3 "github.com/hajimehoshi/go-mp3"
)

// WAV returns samples as a mono 16-bit PCM WAV file at rate.
func WAV(samples []int16, rate int) []byte {
	b := make([]byte, 0, 44+2*len(samples))
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(36+2*len(samples)))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16) // the fmt chunk's size
	b = binary.LittleEndian.AppendUint16(b, 1)  // PCM
	b = binary.LittleEndian.AppendUint16(b, 1)  // mono
	b = binary.LittleEndian.AppendUint32(b, uint32(rate))
	b = binary.LittleEndian.AppendUint32(b, uint32(2*rate)) // bytes a second
	b = binary.LittleEndian.AppendUint16(b, 2)              // bytes a frame
	b = binary.LittleEndian.AppendUint16(b, 16)             // bits a sample
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(2*len(samples)))
	for _, s := range samples {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

// Tone returns a sine of hz lasting d at rate, at amplitude.
func Tone(hz float64, d time.Duration, rate int, amplitude float64) []int16 {
	out := make([]int16, int(d.Seconds()*float64(rate)))
	for i := range out {
		out[i] = int16(amplitude * math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
	}
	return out
}

// Square returns n samples of a square wave whose half period is half
// samples long, at ±amplitude.
func Square(n, half int, amplitude int16) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = amplitude
		if i/half%2 == 1 {
			out[i] = -amplitude
		}
	}
	return out
}

// DecodeMP3 decodes an MP3 with go-mp3 and returns its left channel. It
// fails tb unless the MP3 is at rate and decodes to as many samples as it
// says.
func DecodeMP3(tb testing.TB, data []byte, rate int) []int16 {
	tb.Helper()
	d, err := gomp3.NewDecoder(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("go-mp3: %v", err)
	}
	if d.SampleRate() != rate {
		tb.Errorf("go-mp3 sample rate = %d, want %d", d.SampleRate(), rate)
	}
	raw, err := io.ReadAll(d)
	if err != nil {
		tb.Fatalf("go-mp3 decode: %v", err)
	}
	if int64(len(raw)) != d.Length() {
		tb.Errorf("go-mp3 decoded %d bytes, Length() = %d", len(raw), d.Length())
	}
	// go-mp3 gives 16-bit little-endian stereo: 4 bytes a sample.
	left := make([]int16, len(raw)/4)
	for i := range left {
		left[i] = int16(uint16(raw[4*i]) | uint16(raw[4*i+1])<<8)
	}
	return left
}

// NoiseRMS returns the RMS of decoded against source over windows of n
// samples, source played lag samples late (decoded[i] against
// source[i-lag]; source is zero outside its bounds): the coding noise of an
// encoding of source, window by window.
func NoiseRMS(decoded, source []int16, lag, n int) []float64 {
	var out []float64
	for w := 0; w+n <= len(decoded); w += n {
		var sum float64
		for i := w; i < w+n; i++ {
			var s float64
			if j := i - lag; j >= 0 && j < len(source) {
				s = float64(source[j])
			}
			d := float64(decoded[i]) - s
			sum += d * d
		}
		out = append(out, math.Sqrt(sum/float64(n)))
	}
	return out
}
