package pcm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/narrator/narrator/internal/proc"
)

// WAV format tags.
const (
	wavFormatPCM        = 1
	wavFormatFloat      = 3
	wavFormatExtensible = 0xFFFE
)

// DecodeWAVFile decodes the WAV file at path, as DecodeWAV does, reading
// it in blocks rather than whole: an engine's output is decoded without a
// copy of the file in memory. The file is an engine's, opened as
// proc.OpenScratchFile opens it: a link, a pipe or a device is refused.
func DecodeWAVFile(path string) (samples []int16, rate int, err error) {
	f, _, err := proc.OpenScratchFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("decode wav: %w", err)
	}
	defer f.Close()
	return DecodeWAV(f)
}

// DecodeWAV reads a RIFF/WAVE file and returns its audio as mono 16-bit
// samples with its sample rate. It accepts integer PCM of 8, 16, 24 or 32 bits
// and 32-bit float, plain or WAVE_FORMAT_EXTENSIBLE; several channels are
// averaged into one. Engines that stream WAV to a pipe cannot know the length
// up front and write a bogus RIFF or data size (0, 0x7ffff000, 0xffffffff):
// the RIFF size is ignored, and a data chunk of size 0, or one that ends
// early, is read up to the end of the input.
func DecodeWAV(r io.Reader) (samples []int16, rate int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, 0, fmt.Errorf("decode wav: read header: %w", noEOF(err))
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return nil, 0, errors.New("decode wav: not a RIFF/WAVE file")
	}
	var f wavFormat
	haveFmt := false
	for {
		var ch [8]byte
		if _, err := io.ReadFull(br, ch[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, 0, errors.New("decode wav: no data chunk")
			}
			return nil, 0, fmt.Errorf("decode wav: read chunk header: %w", noEOF(err))
		}
		id := string(ch[0:4])
		size := binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			if size < 16 || size > 1<<16 {
				return nil, 0, fmt.Errorf("decode wav: bad fmt chunk size %d", size)
			}
			b := make([]byte, size+size&1)
			if _, err := io.ReadFull(br, b); err != nil {
				return nil, 0, fmt.Errorf("decode wav: read fmt chunk: %w", noEOF(err))
			}
			if f, err = parseWAVFormat(b[:size]); err != nil {
				return nil, 0, fmt.Errorf("decode wav: %w", err)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, 0, errors.New("decode wav: data chunk before fmt chunk")
			}
			var src io.Reader = br
			if size != 0 {
				src = io.LimitReader(br, int64(size))
			}
			samples, err := f.decode(src, int64(size))
			if err != nil {
				return nil, 0, fmt.Errorf("decode wav: %w", err)
			}
			return samples, f.rate, nil
		default:
			if _, err := io.CopyN(io.Discard, br, int64(size)+int64(size&1)); err != nil {
				return nil, 0, fmt.Errorf("decode wav: skip %q chunk: %w", id, noEOF(err))
			}
		}
	}
}

// noEOF turns a bare EOF (input ended before a header) into
// io.ErrUnexpectedEOF, since a WAV file cannot legitimately end there.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

type wavFormat struct {
	format   uint16
	channels int
	rate     int
	bits     int
	align    int // bytes per frame (all channels)
}

func parseWAVFormat(b []byte) (wavFormat, error) {
	f := wavFormat{
		format:   binary.LittleEndian.Uint16(b[0:2]),
		channels: int(binary.LittleEndian.Uint16(b[2:4])),
		rate:     int(binary.LittleEndian.Uint32(b[4:8])),
		bits:     int(binary.LittleEndian.Uint16(b[14:16])),
	}
	if f.format == wavFormatExtensible {
		if len(b) < 40 {
			return f, errors.New("short WAVE_FORMAT_EXTENSIBLE fmt chunk")
		}
		// The sub-format GUID starts with the format tag.
		f.format = binary.LittleEndian.Uint16(b[24:26])
	}
	switch {
	case f.channels < 1 || f.channels > 32:
		return f, fmt.Errorf("unsupported channel count %d", f.channels)
	case f.rate < 1000 || f.rate > 384000:
		return f, fmt.Errorf("unsupported sample rate %d", f.rate)
	case f.format == wavFormatPCM && (f.bits == 8 || f.bits == 16 || f.bits == 24 || f.bits == 32):
	case f.format == wavFormatFloat && f.bits == 32:
	default:
		return f, fmt.Errorf("unsupported sample format (tag %#x, %d bits)", f.format, f.bits)
	}
	f.align = f.channels * f.bits / 8
	return f, nil
}

// decode reads whole frames from r until EOF; a partial last frame is
// dropped. size is the declared data size, used only as a capacity hint.
func (f wavFormat) decode(r io.Reader, size int64) ([]int16, error) {
	var samples []int16
	if size > 0 && size < 1<<28 {
		samples = make([]int16, 0, size/int64(f.align))
	}
	buf := make([]byte, f.align*4096)
	carry := 0
	for {
		n, err := r.Read(buf[carry:])
		n += carry
		whole := n / f.align * f.align
		for off := 0; off < whole; off += f.align {
			samples = append(samples, f.frame(buf[off:off+f.align]))
		}
		carry = copy(buf, buf[whole:n])
		if errors.Is(err, io.EOF) {
			return samples, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read data: %w", err)
		}
	}
}

// frame mixes one frame of all channels down to a mono 16-bit sample.
func (f wavFormat) frame(b []byte) int16 {
	if f.channels == 1 && f.format == wavFormatPCM && f.bits == 16 {
		return int16(binary.LittleEndian.Uint16(b))
	}
	step := f.bits / 8
	var sum float64 // in 16-bit units
	for c := range f.channels {
		s := b[c*step : (c+1)*step]
		switch {
		case f.format == wavFormatFloat:
			sum += float64(math.Float32frombits(binary.LittleEndian.Uint32(s))) * fullScale
		case f.bits == 8:
			sum += (float64(s[0]) - 128) * 256
		case f.bits == 16:
			sum += float64(int16(binary.LittleEndian.Uint16(s)))
		case f.bits == 24:
			v := int32(uint32(s[0])<<8|uint32(s[1])<<16|uint32(s[2])<<24) >> 8
			sum += float64(v) / 256
		case f.bits == 32:
			sum += float64(int32(binary.LittleEndian.Uint32(s))) / 65536
		}
	}
	return clamp16(sum / float64(f.channels))
}
