package mp3_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/narrator/narrator/internal/mp3"
)

// frame returns an MPEG-1 Layer III frame at 128 kbit/s and 44.1 kHz: its
// header, then zeros to its size of 417 bytes.
func frame() []byte {
	f := make([]byte, 417)
	copy(f, []byte{0xFF, 0xFB, 0x90, 0x00})
	return f
}

// id3 returns an ID3v2 tag header that announces size bytes of tag.
func id3(size int) []byte {
	return []byte{'I', 'D', '3', 3, 0, 0, byte(size >> 21 & 0x7F), byte(size >> 14 & 0x7F), byte(size >> 7 & 0x7F), byte(size & 0x7F)}
}

// FuzzFrames feeds any bytes to the frame reader, whole and in chunks of
// the size the fuzzer picks, and checks that both readings agree and that
// every byte is either in a frame, which is a copy of the input at its
// offset, or counted as skipped.
func FuzzFrames(f *testing.F) {
	two := slices.Concat(frame(), frame())
	xing := frame()
	copy(xing[36:], "Info")
	for _, s := range [][]byte{
		two, slices.Concat(id3(20), make([]byte, 20), two), slices.Concat(id3(1000), two),
		slices.Concat([]byte{0xFF, 0x00, 0x12, 0xFF, 0xFB}, two, []byte("TAG")), slices.Concat(xing, two),
		two[:500], slices.Concat(frame(), []byte{0xFF, 0xF3, 0x90, 0x00}, frame()), []byte("not an mp3"),
	} {
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var whole []mp3.Frame
		info, err := mp3.Frames(bytes.NewReader(data), func(fr mp3.Frame) error {
			whole = append(whole, fr)
			return nil
		})
		if err != nil {
			t.Fatalf("Frames: %v", err)
		}
		var chunked []mp3.Frame
		w := mp3.NewFrameWriter(func(fr mp3.Frame) error {
			chunked = append(chunked, fr)
			return nil
		})
		n := 1 + int(chunk)
		for rest := data; len(rest) > 0; rest = rest[min(n, len(rest)):] {
			if _, err := w.Write(rest[:min(n, len(rest))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.Info() != info || len(chunked) != len(whole) {
			t.Fatalf("in chunks of %d: %+v and %d frames; whole: %+v and %d frames", n, w.Info(), len(chunked), info, len(whole))
		}
		var end, bytesIn int64
		var samples int64
		for i, fr := range whole {
			c := chunked[i]
			if c.Offset != fr.Offset || !bytes.Equal(c.Data, fr.Data) {
				t.Fatalf("frame %d differs in chunks of %d", i, n)
			}
			if fr.Offset < end || fr.Offset+int64(len(fr.Data)) > int64(len(data)) || !bytes.Equal(fr.Data, data[fr.Offset:fr.Offset+int64(len(fr.Data))]) {
				t.Fatalf("frame %d at %d (%d bytes) is not the input there", i, fr.Offset, len(fr.Data))
			}
			if fr.Data[0] != 0xFF || fr.SampleRate != info.SampleRate || fr.Channels != info.Channels || fr.Duration() <= 0 || fr.Bitrate <= 0 {
				t.Fatalf("frame %d: %+v with info %+v", i, fr, info)
			}
			end = fr.Offset + int64(len(fr.Data))
			bytesIn += int64(len(fr.Data))
			samples += int64(fr.Samples)
		}
		if info.Frames != len(whole) || info.Bytes != bytesIn || info.Samples != samples {
			t.Fatalf("info %+v, but %d frames of %d bytes and %d samples", info, len(whole), bytesIn, samples)
		}
		if info.Bytes+info.Skipped != int64(len(data)) {
			t.Fatalf("%d bytes in frames and %d skipped, of %d", info.Bytes, info.Skipped, len(data))
		}
	})
}
