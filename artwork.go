package narrator

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
)

// Limits of podcast artwork, as Apple Podcasts asks: a square of
// MinArtworkPixels to MaxArtworkPixels a side.
const (
	MinArtworkPixels = 1400
	MaxArtworkPixels = 3000
)

// CheckArtwork checks a podcast image: a JPEG or PNG, square, of
// MinArtworkPixels to MaxArtworkPixels a side, in RGB (not grayscale or
// CMYK). It reads only the header. It returns an EINVALID *Error that
// says what is wrong.
func CheckArtwork(data []byte) error {
	var cfg image.Config
	var err error
	switch {
	case bytes.HasPrefix(data, []byte("\xff\xd8")):
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
	default:
		return Errorf(EINVALID, "the podcast image must be a JPEG or PNG")
	}
	if err != nil {
		return Errorf(EINVALID, "the podcast image could not be read: %v", err)
	}
	if cfg.Width != cfg.Height {
		return Errorf(EINVALID, "the podcast image is %d×%d pixels; it must be square", cfg.Width, cfg.Height)
	}
	if cfg.Width < MinArtworkPixels || cfg.Width > MaxArtworkPixels {
		return Errorf(EINVALID, "the podcast image is %d×%d pixels; it must be %d to %d pixels a side", cfg.Width, cfg.Height, MinArtworkPixels, MaxArtworkPixels)
	}
	switch cfg.ColorModel {
	case color.GrayModel, color.Gray16Model, color.CMYKModel:
		return Errorf(EINVALID, "the podcast image must be in RGB colour, not grayscale or CMYK")
	}
	return nil
}
