package hls_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/hls"
)

// BenchmarkPackage60s packages 60 s of 64 kbps MP3 into segments in memory.
func BenchmarkPackage60s(b *testing.B) {
	data := mustEncode(b, signal(60*time.Second))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		_, err := hls.Package(b.Context(), bytes.NewReader(data), hls.DefaultTarget, func(string, []byte) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(60/perOp, "x-realtime")
}
