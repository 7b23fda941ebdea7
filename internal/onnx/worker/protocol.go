package worker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The protocol between the server and a worker, over the worker's stdin and stdout. Every
// message is a frame:
//
//	uint32  length of the body, little-endian
//	byte    type
//	uint32  request ID, little-endian (0 in the ready frame)
//	body
//
// The worker first sends a ready frame, whose body is a JSON hello: the model's kind and
// signature. Then the server sends requests, each with an ID of its own, and the worker answers
// each with a frame of the same ID, in any order: several runs may be under way at once.
// Numbers are little-endian; samples are float32, as the model makes them.
const (
	// frameReady: {"kind": "piper", "info": {...}}.
	frameReady byte = 'R'
	// framePiper: noise_scale, length_scale, noise_w (float32), sid (int64), then the phoneme
	// IDs (int64) to the end.
	framePiper byte = 'P'
	// frameKokoro: speed (float32), the style's length (uint32) and values (float32), then the
	// tokens (int64) to the end.
	frameKokoro byte = 'K'
	// frameSamples: the samples (float32) of a run.
	frameSamples byte = 'S'
	// frameTimed: the number of phoneme IDs or tokens (uint32), each one's length in frames
	// (float32), then the samples (float32) of a run whose model gives its durations.
	frameTimed byte = 'T'
	// frameError: why a run failed, in UTF-8. The worker lives on.
	frameError byte = 'E'

	headerSize = 9
	// maxRequest bounds a request's body: a sentence's IDs and a style take a few KB.
	maxRequest = 16 << 20
	// maxReply bounds an answer's body, 16 Mi samples: 11 minutes at 24 kHz, far longer than
	// a sentence, so that a confused worker or a hostile model cannot make the server
	// allocate much (the server copies an answer once more as it decodes it).
	maxReply = 64 << 20
)

// hello is the body of the ready frame.
type hello struct {
	Kind Kind `json:"kind"`
	Info Info `json:"info"`
}

// frame is one message.
type frame struct {
	typ  byte
	id   uint32
	body []byte
}

// appendFrame appends the frame's bytes to b.
func appendFrame(b []byte, f frame) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(f.body)))
	b = append(b, f.typ)
	b = binary.LittleEndian.AppendUint32(b, f.id)
	return append(b, f.body...)
}

// readFrame reads one frame whose body is at most limit bytes. It returns io.EOF only if r
// ends before the frame starts.
func readFrame(r io.Reader, limit int) (frame, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return frame{}, fmt.Errorf("read frame header: %w", err)
		}
		return frame{}, err
	}
	n := binary.LittleEndian.Uint32(h[:4])
	if uint64(n) > uint64(limit) {
		return frame{}, fmt.Errorf("frame of %d bytes, over the limit of %d", n, limit)
	}
	f := frame{typ: h[4], id: binary.LittleEndian.Uint32(h[5:]), body: make([]byte, n)}
	if _, err := io.ReadFull(r, f.body); err != nil {
		return frame{}, fmt.Errorf("read frame body: %w", noEOF(err))
	}
	return f, nil
}

// noEOF turns an end of input in the middle of something into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func appendFloat32s(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func appendInt64s(b []byte, v []int64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

// float32s decodes b, whose length must be a multiple of 4.
func float32s(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes of float32 values", len(b))
	}
	v := make([]float32, len(b)/4)
	for k := range v {
		v[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
	}
	return v, nil
}

// int64s decodes b, whose length must be a multiple of 8.
func int64s(b []byte) ([]int64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("%d bytes of int64 values", len(b))
	}
	v := make([]int64, len(b)/8)
	for k := range v {
		v[k] = int64(binary.LittleEndian.Uint64(b[8*k:]))
	}
	return v, nil
}

func encodePiper(in PiperInput) []byte {
	b := make([]byte, 0, 20+8*len(in.IDs))
	b = appendFloat32s(b, []float32{in.NoiseScale, in.LengthScale, in.NoiseW})
	b = binary.LittleEndian.AppendUint64(b, uint64(in.Speaker))
	return appendInt64s(b, in.IDs)
}

func decodePiper(b []byte) (PiperInput, error) {
	var in PiperInput
	if len(b) < 20 {
		return in, fmt.Errorf("piper request of %d bytes", len(b))
	}
	s, _ := float32s(b[:12])
	in.NoiseScale, in.LengthScale, in.NoiseW = s[0], s[1], s[2]
	in.Speaker = int64(binary.LittleEndian.Uint64(b[12:]))
	var err error
	if in.IDs, err = int64s(b[20:]); err != nil {
		return in, fmt.Errorf("piper request: %w", err)
	}
	return in, nil
}

func encodeKokoro(in KokoroInput) []byte {
	b := make([]byte, 0, 8+4*len(in.Style)+8*len(in.Tokens))
	b = appendFloat32s(b, []float32{in.Speed})
	b = binary.LittleEndian.AppendUint32(b, uint32(len(in.Style)))
	b = appendFloat32s(b, in.Style)
	return appendInt64s(b, in.Tokens)
}

func decodeKokoro(b []byte) (KokoroInput, error) {
	var in KokoroInput
	if len(b) < 8 {
		return in, fmt.Errorf("kokoro request of %d bytes", len(b))
	}
	in.Speed = math.Float32frombits(binary.LittleEndian.Uint32(b))
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if 8+4*n > uint64(len(b)) {
		return in, fmt.Errorf("kokoro request of %d bytes with a style of %d values", len(b), n)
	}
	in.Style, _ = float32s(b[8 : 8+4*n])
	var err error
	if in.Tokens, err = int64s(b[8+4*n:]); err != nil {
		return in, fmt.Errorf("kokoro request: %w", err)
	}
	return in, nil
}

func encodeTimed(samples, frames []float32) []byte {
	b := make([]byte, 0, 4+4*len(frames)+4*len(samples))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(frames)))
	b = appendFloat32s(b, frames)
	return appendFloat32s(b, samples)
}

func decodeTimed(b []byte) (samples, frames []float32, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("timed answer of %d bytes", len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b))
	if 4+4*n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("timed answer of %d bytes with %d durations", len(b), n)
	}
	frames, _ = float32s(b[4 : 4+4*n])
	if samples, err = float32s(b[4+4*n:]); err != nil {
		return nil, nil, fmt.Errorf("timed answer: %w", err)
	}
	return samples, frames, nil
}
