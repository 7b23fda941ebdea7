package wav_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/narrator/narrator/internal/wav"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	want := []int16{0, 1, -1, 32767, -32768, 1234}
	got, rate, err := wav.Decode(wav.Encode(want, 22050))
	if err != nil {
		t.Fatal(err)
	}
	if rate != 22050 || !slices.Equal(got, want) {
		t.Errorf("Decode(Encode) = %v at %d Hz, want %v at 22050 Hz", got, rate, want)
	}
}

// header builds a RIFF header with a fmt chunk and a data chunk header claiming dataSize.
func header(format, channels, bits uint16, rate, dataSize uint32, extra []byte) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WAVE")
	b = append(b, extra...)
	b = append(b, "fmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, format)
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*uint32(channels)*uint32(bits)/8)
	b = binary.LittleEndian.AppendUint16(b, channels*bits/8)
	b = binary.LittleEndian.AppendUint16(b, bits)
	b = append(b, "data"...)
	return binary.LittleEndian.AppendUint32(b, dataSize)
}

func TestDecode(t *testing.T) {
	t.Parallel()
	pcm := []byte{1, 0, 2, 0, 3, 0, 4, 0}
	tests := []struct {
		name     string
		in       []byte
		want     []int16
		wantRate int
		wantErr  bool
	}{
		{"mono", append(header(1, 1, 16, 16000, 8, nil), pcm...), []int16{1, 2, 3, 4}, 16000, false},
		{"streamed size", append(header(1, 1, 16, 22050, 0x7ffff000, nil), pcm...), []int16{1, 2, 3, 4}, 22050, false},
		{"stereo averaged", append(header(1, 2, 16, 8000, 8, nil), pcm...), []int16{1, 3}, 8000, false},
		{"odd chunk skipped", append(header(1, 1, 16, 8000, 8, []byte("LIST\x03\x00\x00\x00abc\x00")), pcm...), []int16{1, 2, 3, 4}, 8000, false},
		{"odd trailing byte", append(header(1, 1, 16, 8000, 3, nil), 5, 0, 9), []int16{5}, 8000, false},
		{"8-bit", append(header(1, 1, 8, 8000, 8, nil), pcm...), nil, 0, true},
		{"float", append(header(3, 1, 16, 8000, 8, nil), pcm...), nil, 0, true},
		{"not riff", []byte("hello world, this is not a wave"), nil, 0, true},
		{"empty", nil, nil, 0, true},
		{"no data", header(1, 1, 16, 8000, 0, nil)[:36], nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, rate, err := wav.Decode(tt.in)
			if tt.wantErr {
				if !errors.Is(err, wav.ErrFormat) {
					t.Fatalf("err = %v, want ErrFormat", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rate != tt.wantRate || !slices.Equal(got, tt.want) {
				t.Errorf("got %v at %d Hz, want %v at %d Hz", got, rate, tt.want, tt.wantRate)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(wav.Encode([]int16{1, 2, 3}, 16000))
	f.Add(header(1, 2, 16, 8000, 0xffffffff, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		samples, rate, err := wav.Decode(b)
		if err == nil && rate <= 0 {
			t.Errorf("rate %d with %d samples and no error", rate, len(samples))
		}
	})
}
