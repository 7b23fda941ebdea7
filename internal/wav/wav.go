// Package wav reads RIFF WAVE files holding 16-bit PCM, the format every speech engine on this
// machine writes.
package wav

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrFormat is returned, wrapped, for input that is not 16-bit PCM RIFF WAVE.
var ErrFormat = errors.New("wav: unsupported format")

// Decode parses a RIFF WAVE file of 16-bit little-endian PCM and returns its samples as mono
// (channels are averaged) and its sample rate.
//
// Chunk sizes larger than the data present are clamped, so streamed output whose header
// carries a placeholder size (espeak-ng --stdout writes 0x7ffff000) decodes to what was written.
func Decode(data []byte) (samples []int16, sampleRate int, err error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return nil, 0, fmt.Errorf("decode wav (%d bytes): no RIFF WAVE header: %w", len(data), ErrFormat)
	}
	var (
		channels, bits int
		haveFmt        bool
	)
	p := 12
	for p+8 <= len(data) {
		id := string(data[p : p+4])
		size := int(binary.LittleEndian.Uint32(data[p+4 : p+8]))
		body := data[p+8:]
		if size < 0 || size > len(body) {
			size = len(body)
		}
		body = body[:size]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return nil, 0, fmt.Errorf("decode wav: fmt chunk of %d bytes: %w", len(body), ErrFormat)
			}
			format := binary.LittleEndian.Uint16(body[0:2])
			channels = int(binary.LittleEndian.Uint16(body[2:4]))
			sampleRate = int(binary.LittleEndian.Uint32(body[4:8]))
			bits = int(binary.LittleEndian.Uint16(body[14:16]))
			// 0xFFFE is WAVE_FORMAT_EXTENSIBLE; its sub-format is assumed PCM when bits is 16.
			if (format != 1 && format != 0xFFFE) || bits != 16 || channels < 1 || sampleRate <= 0 {
				return nil, 0, fmt.Errorf("decode wav: format %d, %d bits, %d channels, %d Hz: %w",
					format, bits, channels, sampleRate, ErrFormat)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, 0, fmt.Errorf("decode wav: data chunk before fmt chunk: %w", ErrFormat)
			}
			return pcm(body, channels), sampleRate, nil
		}
		p += 8 + size + size&1 // chunks are padded to an even size
	}
	return nil, 0, fmt.Errorf("decode wav: no data chunk: %w", ErrFormat)
}

// pcm converts interleaved little-endian 16-bit frames to mono samples.
func pcm(b []byte, channels int) []int16 {
	frame := 2 * channels
	n := len(b) / frame
	out := make([]int16, n)
	for i := range n {
		if channels == 1 {
			out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
			continue
		}
		sum := 0
		for c := range channels {
			sum += int(int16(binary.LittleEndian.Uint16(b[i*frame+2*c:])))
		}
		out[i] = int16(sum / channels)
	}
	return out
}

// Encode returns a RIFF WAVE file holding mono 16-bit PCM samples at sampleRate. Tests and
// tools use it to write engine output for listening and scoring.
func Encode(samples []int16, sampleRate int) []byte {
	n := 2 * len(samples)
	b := make([]byte, 44+n)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], uint32(sampleRate))
	binary.LittleEndian.PutUint32(b[28:], uint32(2*sampleRate))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(s))
	}
	return b
}
