// Package pcmtest makes the audio that tests feed to Narrator: tones,
// square waves and the WAV files that hold them.
package pcmtest

import (
	"encoding/binary"
	"math"
	"time"
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
