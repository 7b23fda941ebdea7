package neural

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/narrator/narrator/internal/onnx/worker"
)

// StyleRows is the number of style rows of a Kokoro voice: one for each token count from 0
// to 509 (a chunk holds at most 510 tokens besides its padding).
const StyleRows = 510

// styleBytes is the size of one voice's table of style rows as raw float32.
const styleBytes = StyleRows * worker.StyleSize * 4

// maxStyleSpeakers bounds the voices of one voices file: Kokoro v1.0 has 54.
const maxStyleSpeakers = 1000

// Styles are the style tables of a Kokoro voices file, by voice name ("af_heart"): each
// StyleRows rows of worker.StyleSize values.
type Styles map[string][]float32

// Row returns the style row of voice for a chunk of n tokens (padding not counted), as
// kokoro-onnx chooses it, or false if the file has no such voice.
func (s Styles) Row(voice string, n int) ([]float32, bool) {
	t, ok := s[voice]
	if !ok {
		return nil, false
	}
	n = min(max(n, 0), StyleRows-1)
	return t[n*worker.StyleSize : (n+1)*worker.StyleSize], true
}

// Names returns the voices of the file, sorted.
func (s Styles) Names() []string {
	out := make([]string, 0, len(s))
	for name := range s {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

var styleNameRE = regexp.MustCompile(`^[a-z]{2}_[a-z0-9]{1,40}$`)

// ReadStyles reads a Kokoro voices file: either the npz archive of kokoro-onnx
// (voices-v1.0.bin), one (510,1,256) float32 array per voice, or one voice's raw
// little-endian float32 table (510×256 values, as kokoro-js ships each voice), whose voice is
// named by the file's name without its extension (af_heart.bin). name is that file name, as
// installed: the file at path may be a cached copy named otherwise. The error says what is
// wrong.
func ReadStyles(path, name string) (Styles, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read voices file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read voices file: %w", err)
	}
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return nil, fmt.Errorf("read voices file %s: too short to be one", name)
	}
	if string(magic[:]) == "PK\x03\x04" {
		return readNPZ(f, info.Size(), name)
	}
	voice := strings.TrimSuffix(name, filepath.Ext(name))
	if !styleNameRE.MatchString(voice) {
		return nil, fmt.Errorf("voices file %s: not an npz archive, and its name is not a Kokoro voice's such as af_heart.bin", name)
	}
	if info.Size() != styleBytes {
		return nil, fmt.Errorf("voices file %s: a raw voice file holds %d bytes (510×256 float32), not %d", name, styleBytes, info.Size())
	}
	b := make([]byte, styleBytes)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read voices file %s: %w", name, err)
	}
	t, err := float32s(b)
	if err != nil {
		return nil, fmt.Errorf("voices file %s: %w", name, err)
	}
	return Styles{voice: t}, nil
}

// readNPZ reads an npz archive of (510,1,256) float32 arrays.
func readNPZ(r io.ReaderAt, size int64, file string) (Styles, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("voices file %s: not a valid npz archive: %w", file, err)
	}
	if len(z.File) == 0 || len(z.File) > maxStyleSpeakers {
		return nil, fmt.Errorf("voices file %s: holds %d arrays; want 1 to %d voices", file, len(z.File), maxStyleSpeakers)
	}
	out := Styles{}
	for _, zf := range z.File {
		name := strings.TrimSuffix(zf.Name, ".npy")
		if !styleNameRE.MatchString(name) || name == zf.Name {
			return nil, fmt.Errorf("voices file %s: array %q is not named as a Kokoro voice, such as af_heart.npy", file, zf.Name)
		}
		// A table is 522 KiB and its header short: anything much bigger is not one.
		if zf.UncompressedSize64 > styleBytes+4096 {
			return nil, fmt.Errorf("voices file %s: array %s is %d bytes, too big for a (510,1,256) float32 array", file, zf.Name, zf.UncompressedSize64)
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("voices file %s: array %s: %w", file, zf.Name, err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, styleBytes+4097))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("voices file %s: array %s: %w", file, zf.Name, err)
		}
		t, err := parseNPY(b)
		if err != nil {
			return nil, fmt.Errorf("voices file %s: array %s: %w", file, zf.Name, err)
		}
		out[name] = t
	}
	return out, nil
}

var (
	npyDescrRE = regexp.MustCompile(`'descr':\s*'([<>|]?[a-z]\d+)'`)
	npyOrderRE = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShapeRE = regexp.MustCompile(`'shape':\s*\(([\d,\s]*)\)`)
)

// parseNPY reads a .npy array that must be little-endian float32 of shape (510,1,256) or
// (510,256), in C order.
func parseNPY(b []byte) ([]float32, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, errors.New("not a .npy array")
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, errors.New("truncated .npy header")
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf(".npy version %d is not supported", b[6])
	}
	if off+hlen > len(b) {
		return nil, errors.New("truncated .npy header")
	}
	header := string(b[off : off+hlen])
	descr := npyDescrRE.FindStringSubmatch(header)
	order := npyOrderRE.FindStringSubmatch(header)
	shape := npyShapeRE.FindStringSubmatch(header)
	if descr == nil || order == nil || shape == nil {
		return nil, fmt.Errorf(".npy header %q lacks descr, fortran_order or shape", header)
	}
	if descr[1] != "<f4" || order[1] != "False" {
		return nil, fmt.Errorf("array is %s (Fortran order %s); want little-endian float32 (<f4) in C order", descr[1], order[1])
	}
	var dims []int
	for _, d := range strings.Split(shape[1], ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		n, err := strconv.Atoi(d)
		if err != nil {
			return nil, fmt.Errorf("array shape (%s): %w", shape[1], err)
		}
		dims = append(dims, n)
	}
	if !slices.Equal(dims, []int{StyleRows, 1, worker.StyleSize}) && !slices.Equal(dims, []int{StyleRows, worker.StyleSize}) {
		return nil, fmt.Errorf("array shape is %v; want (510, 1, 256)", dims)
	}
	data := b[off+hlen:]
	if len(data) != styleBytes {
		return nil, fmt.Errorf("array holds %d bytes of data; want %d", len(data), styleBytes)
	}
	return float32s(data)
}

// float32s decodes little-endian float32 values, refusing NaN and infinities.
func float32s(b []byte) ([]float32, error) {
	out := make([]float32, len(b)/4)
	for i := range out {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("value %d is %v", i, v)
		}
		out[i] = v
	}
	return out, nil
}
