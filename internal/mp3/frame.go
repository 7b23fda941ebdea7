package mp3

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// A Frame is one MPEG audio frame, as found in an MP3 stream.
type Frame struct {
	// Data is the whole frame, header included. It is a fresh slice that
	// the callee may keep.
	Data []byte
	// Offset is the position of the frame in the stream, in bytes.
	Offset int64
	// SampleRate is in Hz.
	SampleRate int
	// Samples is the number of samples per channel the frame decodes to
	// (1152 for MPEG-1 Layer III).
	Samples int
	// Bitrate is in bits per second.
	Bitrate int
	// Channels is 1 for mono, 2 otherwise.
	Channels int
}

// Duration returns how long the frame plays.
func (f Frame) Duration() time.Duration {
	return time.Duration(int64(f.Samples) * int64(time.Second) / int64(f.SampleRate))
}

// header is a decoded 4-byte frame header.
type header struct {
	version  int // 1, 2, or 25 for MPEG-2.5
	layer    int // 1, 2 or 3
	bitrate  int // bits per second
	rate     int // Hz
	channels int
	size     int // whole frame in bytes
	samples  int // per channel
	crc      bool
}

var bitrates = [5][16]int{ // kbps; index 0 (free format) and 15 are invalid
	{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 0}, // V1 L1
	{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0},    // V1 L2
	{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},     // V1 L3
	{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0},    // V2 L1
	{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},         // V2 L2, L3
}

// parseHeader decodes b[0:4]; ok is false if it is not a valid header of a
// frame this package can size (free-format bitrate is not supported).
func parseHeader(b []byte) (h header, ok bool) {
	if b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return h, false
	}
	// Bits 4-3 give the version and bits 2-1 the layer; 0 marks the
	// reserved values.
	h.version = [4]int{25, 0, 2, 1}[(b[1]>>3)&3]
	h.layer = [4]int{0, 3, 2, 1}[(b[1]>>1)&3]
	if h.version == 0 || h.layer == 0 {
		return h, false
	}
	h.crc = b[1]&1 == 0
	row := h.layer - 1
	if h.version != 1 {
		row = min(3+h.layer-1, 4)
	}
	h.bitrate = bitrates[row][b[2]>>4] * 1000
	if h.bitrate == 0 {
		return h, false
	}
	rateIdx := (b[2] >> 2) & 3
	if rateIdx == 3 {
		return h, false
	}
	h.rate = [3]int{44100, 48000, 32000}[rateIdx]
	switch h.version {
	case 2:
		h.rate /= 2
	case 25:
		h.rate /= 4
	}
	pad := int((b[2] >> 1) & 1)
	h.channels = 2
	if b[3]>>6 == 3 {
		h.channels = 1
	}
	switch {
	case h.layer == 1:
		h.samples = 384
		h.size = (12*h.bitrate/h.rate + pad) * 4
	case h.layer == 2 || h.version == 1:
		h.samples = 1152
		h.size = 144*h.bitrate/h.rate + pad
	default: // Layer III, MPEG-2 and 2.5
		h.samples = 576
		h.size = 72*h.bitrate/h.rate + pad
	}
	return h, true
}

// compatible reports whether h can follow the stream's first frame f: the
// fields that never change within one stream must match.
func (h header) compatible(f header) bool {
	return h.version == f.version && h.layer == f.layer && h.rate == f.rate && h.channels == f.channels
}

// isInfoFrame reports whether frame data (a Layer III frame) is a Xing, Info
// or VBRI header frame rather than audio.
func isInfoFrame(h header, data []byte) bool {
	if h.layer != 3 {
		return false
	}
	side := 32
	switch {
	case h.version == 1 && h.channels == 1:
		side = 17
	case h.version != 1 && h.channels == 1:
		side = 9
	case h.version != 1:
		side = 17
	}
	off := 4 + side
	if h.crc {
		off += 2
	}
	if len(data) >= off+4 {
		if tag := string(data[off : off+4]); tag == "Xing" || tag == "Info" {
			return true
		}
	}
	return len(data) >= 40 && string(data[36:40]) == "VBRI"
}

// A FrameWriter splits the MP3 stream written to it into frames and hands
// each to a callback, as soon as the frame is complete. It holds at most a
// frame or so in memory, so it can sit behind an encoder on a stream of any
// length. ID3v2 tags are skipped, as is a leading Xing/Info/VBRI frame (it
// holds metadata, not audio). Bytes that are not part of a frame (junk,
// ID3v1 tags) are skipped and counted. Once the first frame is seen, only
// frames with the same version, layer, sample rate and channel count are
// accepted. A FrameWriter is not safe for concurrent use.
type FrameWriter struct {
	fn     func(Frame) error
	buf    []byte // bytes not parsed yet
	mem    []byte // the array buf lies in, from its start
	off    int64  // stream offset of buf[0]
	skip   int64  // bytes of a tag still to skip
	first  *header
	info   Info
	err    error
	closed bool
}

// NewFrameWriter returns a FrameWriter that calls fn for every audio frame.
// An error from fn stops the FrameWriter: Write and Close return it.
func NewFrameWriter(fn func(Frame) error) *FrameWriter {
	return &FrameWriter{fn: fn}
}

// Write consumes MP3 bytes. It returns the error of the callback, if any.
func (w *FrameWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errors.New("mp3: write to closed FrameWriter")
	}
	// What the last Write left, less than a frame, moves to the front of
	// the buffer, so that p is appended in place.
	w.buf = append(w.mem[:copy(w.mem[:cap(w.mem)], w.buf)], p...)
	w.mem = w.buf[:0]
	if err := w.parse(false); err != nil {
		w.err = err
		return 0, err
	}
	return len(p), nil
}

// Close ends the stream. Trailing bytes that do not make a whole frame are
// counted as skipped. It returns the callback's error, if any.
func (w *FrameWriter) Close() error {
	if w.err != nil || w.closed {
		return w.err
	}
	w.closed = true
	if err := w.parse(true); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Info returns what the FrameWriter has seen so far.
func (w *FrameWriter) Info() Info { return w.info }

func (w *FrameWriter) consume(n int) {
	w.buf = w.buf[n:]
	w.off += int64(n)
}

func (w *FrameWriter) junk(n int) {
	w.info.Skipped += int64(n)
	w.consume(n)
}

func (w *FrameWriter) parse(final bool) error {
	for {
		if w.skip > 0 {
			// Tag bytes count as skipped as they arrive, so that a tag
			// cut short counts only the bytes there are.
			n := int(min(w.skip, int64(len(w.buf))))
			w.skip -= int64(n)
			w.junk(n)
			if w.skip > 0 {
				return nil
			}
		}
		if len(w.buf) < 10 && !final {
			return nil // enough for an ID3v2 header or a frame header
		}
		if len(w.buf) >= 10 && bytes.HasPrefix(w.buf, []byte("ID3")) {
			if size, ok := id3Size(w.buf[:10]); ok {
				w.skip = size
				continue
			}
		}
		if len(w.buf) < 4 {
			w.junk(len(w.buf))
			return nil
		}
		h, ok := parseHeader(w.buf)
		if ok && w.first != nil && !h.compatible(*w.first) {
			ok = false
		}
		if !ok {
			// Resynchronise: skip to the next possible sync byte.
			i := bytes.IndexByte(w.buf[1:], 0xFF)
			if i < 0 {
				w.junk(len(w.buf))
				continue
			}
			w.junk(1 + i)
			continue
		}
		if len(w.buf) < h.size {
			if final {
				w.junk(len(w.buf))
			}
			return nil
		}
		data := bytes.Clone(w.buf[:h.size])
		off := w.off
		w.consume(h.size)
		if w.first == nil {
			w.first = &h
			w.info.SampleRate = h.rate
			w.info.Channels = h.channels
			if isInfoFrame(h, data) {
				w.info.Skipped += int64(h.size)
				continue
			}
		}
		w.info.Frames++
		w.info.Samples += int64(h.samples)
		w.info.Bytes += int64(h.size)
		if err := w.fn(Frame{
			Data: data, Offset: off, SampleRate: h.rate, Samples: h.samples,
			Bitrate: h.bitrate, Channels: h.channels,
		}); err != nil {
			return err
		}
	}
}

// id3Size returns the total size of the ID3v2 tag whose 10-byte header is b.
func id3Size(b []byte) (int64, bool) {
	if b[3] == 0xFF || b[4] == 0xFF || (b[6]|b[7]|b[8]|b[9])&0x80 != 0 {
		return 0, false
	}
	size := int64(b[6])<<21 | int64(b[7])<<14 | int64(b[8])<<7 | int64(b[9])
	size += 10
	if b[5]&0x10 != 0 { // footer present
		size += 10
	}
	return size, true
}

// Info summarises an MP3 stream.
type Info struct {
	// Frames counts audio frames (a Xing/Info frame is not one).
	Frames int
	// Samples is the number of samples per channel in all audio frames.
	Samples int64
	// SampleRate is in Hz, and Channels is 1 or 2; both come from the
	// first frame.
	SampleRate int
	Channels   int
	// Bytes is the size of all audio frames.
	Bytes int64
	// Skipped counts bytes that were not audio frames: tags, the
	// Xing/Info frame and junk.
	Skipped int64
}

// Duration returns how long the stream plays: Samples / SampleRate,
// truncated to the nanosecond.
func (i Info) Duration() time.Duration {
	if i.SampleRate == 0 {
		return 0
	}
	return time.Duration(i.Samples * int64(time.Second) / int64(i.SampleRate))
}

// Frames reads the MP3 stream r and calls fn for every audio frame, in order,
// as a FrameWriter does. It stops at the first error of r or fn.
func Frames(r io.Reader, fn func(Frame) error) (Info, error) {
	w := NewFrameWriter(fn)
	if _, err := io.Copy(w, r); err != nil {
		return w.Info(), fmt.Errorf("read mp3 frames: %w", err)
	}
	if err := w.Close(); err != nil {
		return w.Info(), fmt.Errorf("read mp3 frames: %w", err)
	}
	return w.Info(), nil
}

// Scan reads the MP3 stream r to its end and returns its Info.
func Scan(r io.Reader) (Info, error) {
	return Frames(r, func(Frame) error { return nil })
}

// Duration reads the MP3 stream r to its end and returns how long it plays,
// counting frames (Info.Duration). It returns an error if r holds no frame.
func Duration(r io.Reader) (time.Duration, error) {
	info, err := Scan(r)
	if err != nil {
		return 0, err
	}
	if info.Frames == 0 {
		return 0, errors.New("mp3 duration: no MPEG audio frame found")
	}
	return info.Duration(), nil
}
