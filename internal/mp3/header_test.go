package mp3

import "testing"

// TestParseHeaderVersionLayer decodes the version and layer bits of a
// frame header, and refuses their reserved values.
func TestParseHeaderVersionLayer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		b1             byte // the second header byte: sync, version, layer, no CRC
		version, layer int
		ok             bool
	}{
		{"MPEG-1 Layer III", 0xFB, 1, 3, true},
		{"MPEG-1 Layer II", 0xFD, 1, 2, true},
		{"MPEG-1 Layer I", 0xFF, 1, 1, true},
		{"MPEG-2 Layer III", 0xF3, 2, 3, true},
		{"MPEG-2.5 Layer III", 0xE3, 25, 3, true},
		{"reserved version", 0xEB, 0, 0, false},
		{"reserved layer", 0xF9, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// 0x90: bitrate index 9 and the first sample rate; 0x00: stereo.
			h, ok := parseHeader([]byte{0xFF, tt.b1, 0x90, 0x00})
			if ok != tt.ok {
				t.Fatalf("parseHeader(0xFF %#x) ok = %v, want %v", tt.b1, ok, tt.ok)
			}
			if ok && (h.version != tt.version || h.layer != tt.layer) {
				t.Errorf("parseHeader(0xFF %#x) = version %d layer %d, want %d and %d", tt.b1, h.version, h.layer, tt.version, tt.layer)
			}
		})
	}
}
