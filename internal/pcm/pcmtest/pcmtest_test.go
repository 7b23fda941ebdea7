package pcmtest_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
)

// TestWAV decodes what WAV writes with the decoder the pipeline uses.
func TestWAV(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		samples []int16
		rate    int
	}{
		{"tone", pcmtest.Tone(440, 250*time.Millisecond, 16000, 8000), 16000},
		{"square", pcmtest.Square(1000, 50, 4000), 8000},
	} {
		got, rate, err := pcm.DecodeWAV(bytes.NewReader(pcmtest.WAV(c.samples, c.rate)))
		if err != nil || rate != c.rate {
			t.Fatalf("%s: rate %d, %v", c.name, rate, err)
		}
		if diff := cmp.Diff(c.samples, got); diff != "" {
			t.Errorf("%s: samples (-wrote +read):\n%s", c.name, diff)
		}
	}
	if sq := pcmtest.Square(6, 2, 1); !cmp.Equal(sq, []int16{1, 1, -1, -1, 1, 1}) {
		t.Errorf("Square(6, 2, 1) = %v", sq)
	}
}
