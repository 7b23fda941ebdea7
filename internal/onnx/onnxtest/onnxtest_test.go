package onnxtest_test

import (
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/onnx/onnxtest"
)

func TestDecodeRefusesWhatNoModelMakes(t *testing.T) {
	const s = onnxtest.DefaultScale
	tests := []struct {
		name    string
		decode  func() error
		wantErr string
	}{
		{"piper too short", func() error {
			_, err := onnxtest.DecodePiper([]float32{1 * s, 0.5 * s, 1 * s}, onnxtest.PiperOptions{})
			return err
		}, "want at least 4"},
		{"piper lengths wrong", func() error {
			_, err := onnxtest.DecodePiper([]float32{7 * s, 2 * s, 0.5 * s, 1 * s, 0.8 * s}, onnxtest.PiperOptions{})
			return err
		}, "input_lengths 2, but 1 phoneme IDs"},
		{"piper ID not whole", func() error {
			_, err := onnxtest.DecodePiper([]float32{7.5 * s, 1 * s, 0.5 * s, 1 * s, 0.8 * s}, onnxtest.PiperOptions{})
			return err
		}, "phoneme ID 0 7.5 is not a whole number"},
		{"repeat broken", func() error {
			_, err := onnxtest.DecodePiper([]float32{1, 1, 2, 3}, onnxtest.PiperOptions{Repeat: 2})
			return err
		}, "samples 2 to 3 differ"},
		{"repeat not a divisor", func() error {
			_, err := onnxtest.DecodeKokoro(make([]float32, 5), onnxtest.KokoroOptions{Repeat: 2})
			return err
		}, "not a multiple"},
		{"kokoro too short", func() error {
			_, err := onnxtest.DecodeKokoro(make([]float32, 256), onnxtest.KokoroOptions{})
			return err
		}, "want at least 257"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decode(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("decode = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
