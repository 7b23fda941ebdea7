package neural_test

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/worker"
)

// npzWriter writes an npz archive of (510,1,256) float32 arrays, as numpy.savez does.
type npzWriter struct{ z *zip.Writer }

func newNPZ(w io.Writer) *npzWriter { return &npzWriter{z: zip.NewWriter(w)} }

// npy returns a version 1 .npy file of table with the given shape.
func npy(table []float32, shape string) []byte {
	header := "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }"
	// The header, with its 10-byte preamble, is padded with spaces to a multiple of 64 and
	// ends with a newline.
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	b = append(b, header...)
	for _, v := range table {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func (n *npzWriter) add(t *testing.T, name string, table []float32) {
	t.Helper()
	w, err := n.z.Create(name + ".npy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(npy(table, "(510, 1, 256)")); err != nil {
		t.Fatal(err)
	}
}

func (n *npzWriter) close(t *testing.T) {
	t.Helper()
	if err := n.z.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReadStyles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Each file is written under a name of its own, as the cache names it, and read as
	// installed under name.
	n := 0
	write := func(name string, b []byte) (string, string) {
		n++
		p := filepath.Join(dir, fmt.Sprint(n))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p, name
	}
	// The npz archive of kokoro-onnx.
	s, err := neural.ReadStyles(write("voices-v1.0.bin", kokoroStyles(t, "af_heart", "bm_george")))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Names(); len(got) != 2 || got[0] != "af_heart" || got[1] != "bm_george" {
		t.Errorf("Names = %v", got)
	}
	if row, ok := s.Row("bm_george", 7); !ok || len(row) != worker.StyleSize || row[0] != 7.0/8+1 {
		t.Errorf("Row(bm_george, 7) = %v…, %v; want 256 values of 1.875", row[:1], ok)
	}
	if row, _ := s.Row("af_heart", 9999); row[0] != 509.0/8 {
		t.Errorf("Row of a count past the table = %v, want the last row", row[0])
	}
	// One raw voice, as kokoro-js ships them.
	raw := make([]byte, neural.StyleRows*worker.StyleSize*4)
	binary.LittleEndian.PutUint32(raw[4*worker.StyleSize*3:], math.Float32bits(0.5))
	s, err = neural.ReadStyles(write("am_adam.bin", raw))
	if err != nil {
		t.Fatal(err)
	}
	if row, ok := s.Row("am_adam", 3); !ok || row[0] != 0.5 {
		t.Errorf("raw Row(am_adam, 3) = %v, %v", row[0], ok)
	}
	// What is not a voices file is refused, saying why.
	var wrongShape strings.Builder
	z := zip.NewWriter(&wrongShape)
	w, _ := z.Create("af_x.npy")
	w.Write(npy(make([]float32, 10), "(10,)"))
	z.Close()
	for name, data := range map[string][]byte{
		"short.bin":    []byte("ab"),
		"af_heart.bin": raw[:100],
		"model.bin":    raw,
		"shape.npz":    []byte(wrongShape.String()),
	} {
		if _, err := neural.ReadStyles(write(name, data)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
