package narrator_test

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

func TestCheckArtwork(t *testing.T) {
	t.Parallel()
	encode := func(img image.Image, format string) []byte {
		var buf bytes.Buffer
		var err error
		if format == "png" {
			err = png.Encode(&buf, img)
		} else {
			err = jpeg.Encode(&buf, img, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	rgba := func(w, h int) image.Image { return image.NewRGBA(image.Rect(0, 0, w, h)) }
	tests := []struct {
		name string
		data []byte
		want string // words of the error; "" for none
	}{
		{"PNG 1400", encode(rgba(1400, 1400), "png"), ""},
		{"JPEG 3000", encode(rgba(3000, 3000), "jpeg"), ""},
		{"too small", encode(rgba(1399, 1399), "png"), "1400 to 3000 pixels"},
		{"too large", encode(rgba(3001, 3001), "png"), "1400 to 3000 pixels"},
		{"not square", encode(rgba(1400, 1500), "jpeg"), "square"},
		{"grayscale JPEG", encode(image.NewGray(image.Rect(0, 0, 1400, 1400)), "jpeg"), "RGB"},
		{"grayscale PNG", encode(image.NewGray16(image.Rect(0, 0, 1400, 1400)), "png"), "RGB"},
		{"GIF", []byte("GIF89a\x01\x00\x01\x00"), "JPEG or PNG"},
		{"truncated PNG", []byte("\x89PNG\r\n\x1a\n\x00"), "could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := narrator.CheckArtwork(tt.data)
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckArtwork: %v", err)
				}
				return
			}
			if narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckArtwork: %v; want EINVALID with %q", err, tt.want)
			}
		})
	}
}
