package worker

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequestsRoundTrip(t *testing.T) {
	piper := PiperInput{IDs: []int64{1, 0, 32, -5, 1 << 40}, NoiseScale: 0.667, LengthScale: 1.1, NoiseW: 0.8, Speaker: 3}
	got, err := decodePiper(encodePiper(piper))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(piper, got); diff != "" {
		t.Errorf("piper (-want +got):\n%s", diff)
	}
	kokoro := KokoroInput{Tokens: []int64{0, 50, 0}, Style: []float32{0.5, -1.25, 3}, Speed: 1.2}
	gotK, err := decodeKokoro(encodeKokoro(kokoro))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kokoro, gotK); diff != "" {
		t.Errorf("kokoro (-want +got):\n%s", diff)
	}
}

func TestMalformedRequests(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]byte) error
		body   []byte
	}{
		{"short piper", func(b []byte) error { _, err := decodePiper(b); return err }, make([]byte, 19)},
		{"piper IDs cut", func(b []byte) error { _, err := decodePiper(b); return err }, make([]byte, 27)},
		{"short kokoro", func(b []byte) error { _, err := decodeKokoro(b); return err }, make([]byte, 7)},
		{"kokoro style past the end", func(b []byte) error { _, err := decodeKokoro(b); return err }, []byte{0, 0, 0, 0, 9, 0, 0, 0, 1, 2, 3, 4}},
		{"kokoro tokens cut", func(b []byte) error { _, err := decodeKokoro(b); return err }, make([]byte, 11)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decode(tt.body); err == nil {
				t.Error("decoded without an error")
			}
		})
	}
}

func TestFrames(t *testing.T) {
	var b []byte
	b = appendFrame(b, frame{typ: frameSamples, id: 7, body: []byte("abcd")})
	b = appendFrame(b, frame{typ: frameError, id: 8})
	r := bytes.NewReader(b)
	for _, want := range []frame{{frameSamples, 7, []byte("abcd")}, {frameError, 8, []byte{}}} {
		got, err := readFrame(r, 16)
		if err != nil {
			t.Fatal(err)
		}
		if got.typ != want.typ || got.id != want.id || !bytes.Equal(got.body, want.body) {
			t.Errorf("readFrame = %+v, want %+v", got, want)
		}
	}
	if _, err := readFrame(r, 16); err != io.EOF {
		t.Errorf("readFrame at the end = %v, want io.EOF", err)
	}

	big := appendFrame(nil, frame{typ: frameSamples, body: make([]byte, 17)})
	if _, err := readFrame(bytes.NewReader(big), 16); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("readFrame of a frame over the limit = %v", err)
	}
	for _, cut := range []int{3, headerSize + 2} {
		if _, err := readFrame(bytes.NewReader(big[:cut]), 32); err == nil || err == io.EOF {
			t.Errorf("readFrame of %d bytes of a frame = %v, want an error other than io.EOF", cut, err)
		}
	}
}

func TestParseFault(t *testing.T) {
	tests := []struct {
		in      string
		want    Fault
		wantErr bool
	}{
		{"", Fault{}, false},
		{"crash", Fault{CrashAt: 1}, false},
		{"crash:3", Fault{CrashAt: 3}, false},
		{"hang:2", Fault{HangAt: 2}, false},
		{"hang:0", Fault{}, true},
		{"explode", Fault{}, true},
	}
	for _, tt := range tests {
		got, err := ParseFault(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v, error %t", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err == nil && tt.in != "" && !strings.Contains(tt.in, ":") {
			continue
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("Fault(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestFlagsRoundTrip(t *testing.T) {
	want := Flags{Model: "/proc/self/fd/3", Library: "/proc/self/fd/4", Threads: 2, Runs: 3, Fault: Fault{HangAt: 4, PIDFile: "/tmp/pid"}}
	got, err := ParseFlags(want.args(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("ParseFlags(args) = %+v, want %+v", got, want)
	}
	if _, err := ParseFlags([]string{"--onnxruntime", "x"}, io.Discard); err == nil {
		t.Error("ParseFlags without --model succeeded")
	}
}
