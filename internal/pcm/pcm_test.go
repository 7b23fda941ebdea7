package pcm_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/proctest"
)

// sine returns n samples of a sine of freq Hz at rate, amplitude amp (0..1).
func sine(freq float64, amp float64, rate, n int) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(math.Round(amp * 32767 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate))))
	}
	return s
}

// level returns the RMS of s in dB relative to a full-scale sine's RMS.
func level(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return 20 * math.Log10(math.Sqrt(sum/float64(len(s)))/(32767/math.Sqrt2))
}

// sineFit returns the amplitudes of the cosine and the sine at freq Hz that
// best fit s, by correlation.
func sineFit(s []int16, freq float64, rate int) (re, im float64) {
	for i, v := range s {
		ph := 2 * math.Pi * freq * float64(i) / float64(rate)
		re += float64(v) * math.Cos(ph)
		im += float64(v) * math.Sin(ph)
	}
	return 2 * re / float64(len(s)), 2 * im / float64(len(s))
}

// toneLevel returns the level of the freq Hz component of s in dB relative
// to a full-scale sine.
func toneLevel(s []int16, freq float64, rate int) float64 {
	return 20 * math.Log10(math.Hypot(sineFit(s, freq, rate))/32767)
}

func TestResample(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to int
		freq     float64
		wantDB   float64 // level of freq after resampling, relative to before
	}{
		{16000, 44100, 1000, 0},
		{22050, 44100, 3000, 0},
		{48000, 44100, 5000, 0},
		{24000, 44100, 440, 0},
		{44100, 16000, 1000, 0},
		// 23 kHz is above the output's Nyquist frequency: it must not
		// alias back (to 21.1 kHz).
		{48000, 44100, 23000, -70},
		{22050, 16000, 9000, -70},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d to %d Hz, %.0f Hz", tt.from, tt.to, tt.freq), func(t *testing.T) {
			t.Parallel()
			in := sine(tt.freq, 0.5, tt.from, tt.from) // 1 s
			out := pcm.Resample(in, tt.from, tt.to)
			if want := tt.to; len(out) != want {
				t.Fatalf("%d samples out, want %d", len(out), want)
			}
			// Measure away from the edges, where the filter sees silence.
			mid := out[tt.to/10 : tt.to*9/10]
			before := toneLevel(in[tt.from/10:tt.from*9/10], tt.freq, tt.from)
			if tt.wantDB < 0 {
				if got := level(mid); got > tt.wantDB {
					t.Errorf("out-of-band tone comes out at %.1f dB, want below %.0f dB", got, tt.wantDB)
				}
				return
			}
			got := toneLevel(mid, tt.freq, tt.to)
			if d := got - before; math.Abs(d) > 0.1 {
				t.Errorf("tone level changed by %.2f dB", d)
			}
			// Everything else (distortion, aliasing, imaging) is small.
			if total := level(mid); total-got > 0.01 {
				t.Errorf("total level %.3f dB vs tone %.3f dB: too much of something else", total, got)
			}
			if noise := residual(mid, tt.freq, tt.to); noise > -70 {
				t.Errorf("residual after removing the tone: %.1f dB, want below -70 dB", noise)
			}
		})
	}
}

// residual returns the level of s minus its best-fit sine at freq.
func residual(s []int16, freq float64, rate int) float64 {
	re, im := sineFit(s, freq, rate)
	var sum float64
	for i, v := range s {
		ph := 2 * math.Pi * freq * float64(i) / float64(rate)
		d := float64(v) - (re*math.Cos(ph) + im*math.Sin(ph))
		sum += d * d
	}
	return 20 * math.Log10(math.Sqrt(sum/float64(len(s)))/(32767/math.Sqrt2))
}

func TestResamplerStreamingMatches(t *testing.T) {
	t.Parallel()
	in := sine(700, 0.4, 22050, 22050)
	for _, rates := range [][2]int{{22050, 44100}, {16000, 44100}, {48000, 44100}} {
		want := pcm.Resample(in, rates[0], rates[1])
		r, err := pcm.NewResampler(rates[0], rates[1])
		if err != nil {
			t.Fatal(err)
		}
		var got []int16
		for i, size := 0, 1; i < len(in); size = size*3%997 + 1 {
			end := min(len(in), i+size)
			got = r.Process(got, in[i:end])
			i = end
		}
		got = r.Flush(got)
		if !slicesEqual(got, want) {
			t.Errorf("%d→%d: streaming gives %d samples, whole gives %d, or they differ", rates[0], rates[1], len(got), len(want))
		}
		r.Reset()
		if again := r.Flush(r.Process(nil, in)); !slicesEqual(again, want) {
			t.Errorf("%d→%d: after Reset, %d samples, want %d, or they differ", rates[0], rates[1], len(again), len(want))
		}
	}
	if _, err := pcm.NewResampler(0, 44100); err == nil {
		t.Error("NewResampler(0, 44100): want an error")
	}
	if got := pcm.Resample(in[:10], 44100, 44100); !slicesEqual(got, in[:10]) {
		t.Error("Resample at the same rate changed the samples")
	}
}

func slicesEqual(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// speechLike is 2 s of tone bursts at amp separated by silence, like words.
func speechLike(amp float64) []int16 {
	s := sine(300, amp, 16000, 32000)
	for i := range s {
		if (i/4000)%2 == 1 { // 250 ms on, 250 ms off
			s[i] = 0
		}
	}
	return s
}

func TestLoudness(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		samples []int16
		want    float64
		wantOK  bool
	}{
		// A sine's RMS is 3 dB below its peak.
		{"full-scale sine", sine(300, 1, 16000, 16000), -3.01, true},
		{"quiet sine", sine(300, 0.01, 16000, 16000), -43.01, true},
		// Pauses do not lower the measured loudness.
		{"words and pauses", speechLike(0.1), -23.01, true},
		{"silence", make([]int16, 16000), 0, false},
		{"empty", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := pcm.Loudness(tt.samples, 16000)
			if ok != tt.wantOK || (ok && math.Abs(got-tt.want) > 0.3) {
				t.Errorf("Loudness = %.2f, %v; want %.2f, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	spiky := speechLike(0.05)
	for i := 1000; i < len(spiky); i += 4000 {
		spiky[i] = 30000 // clicks far above the speech
	}
	tests := []struct {
		name    string
		samples []int16
		want    float64 // loudness after
	}{
		{"quiet speech", speechLike(0.01), pcm.DefaultTargetDBFS},
		{"loud speech", speechLike(0.9), pcm.DefaultTargetDBFS},
		{"peaks are limited", spiky, pcm.DefaultTargetDBFS},
		// A near-silent signal is not blown up by more than MaxGainDB.
		{"hiss", sine(5000, 0.002, 16000, 16000), -56.99 + pcm.MaxGainDB},
	}
	ceiling := 32768 * math.Pow(10, pcm.PeakCeilingDBFS/20)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			orig := append([]int16(nil), tt.samples...)
			out := pcm.Normalize(tt.samples, 16000, pcm.DefaultTargetDBFS)
			if !slicesEqual(orig, tt.samples) {
				t.Error("Normalize modified its input")
			}
			got, ok := pcm.Loudness(out, 16000)
			if !ok || math.Abs(got-tt.want) > 0.5 {
				t.Errorf("loudness after Normalize = %.2f, want %.2f", got, tt.want)
			}
			for i, v := range out {
				if math.Abs(float64(v)) > ceiling+1 {
					t.Fatalf("sample %d = %d, above the %.1f dBFS ceiling", i, v, pcm.PeakCeilingDBFS)
				}
			}
		})
	}
	silence := make([]int16, 100)
	if out := pcm.Normalize(silence, 16000, -20); !slicesEqual(out, silence) {
		t.Error("Normalize changed silence")
	}
}

func TestGainLimitsWithoutClipping(t *testing.T) {
	t.Parallel()
	in := sine(440, 0.5, 44100, 44100)
	out := pcm.Gain(in, 44100, 20) // would be 10× full scale
	ceiling := 32768 * math.Pow(10, pcm.PeakCeilingDBFS/20)
	var peak float64
	for _, v := range out {
		peak = max(peak, math.Abs(float64(v)))
	}
	if peak > ceiling+1 || peak < ceiling*0.9 {
		t.Errorf("peak %.0f, want just under the ceiling %.0f", peak, ceiling)
	}
	// A limiter, not a clipper: the waveform stays a sine, so the
	// harmonics stay low.
	mid := out[4410 : 44100-4410]
	if r := residual(mid, 440, 44100) - level(mid); r > -30 {
		t.Errorf("distortion %.1f dB relative to the signal, want below -30 dB", r)
	}
}

func TestSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rate int
		d    time.Duration
		want int
	}{
		{44100, time.Second, 44100},
		{44100, 250 * time.Millisecond, 11025},
		{22050, time.Millisecond, 22},
		{16000, 0, 0},
		{16000, -time.Second, 0},
	}
	for _, tt := range tests {
		if got := pcm.Samples(tt.d, tt.rate); got != tt.want {
			t.Errorf("Samples(%v, %d) = %d, want %d", tt.d, tt.rate, got, tt.want)
		}
	}
	if got := pcm.Duration(22050, 44100); got != 500*time.Millisecond {
		t.Errorf("Duration(22050, 44100) = %v, want 500ms", got)
	}
}

func TestTrimSilence(t *testing.T) {
	t.Parallel()
	const rate = 16000
	sound := sine(300, 0.5, rate, 1600)
	sound[0], sound[len(sound)-1] = 1000, -1000 // make the edges audible
	margin := rate * 20 / 1000
	tests := []struct {
		name      string
		in        []int16
		wantStart int // index of sound[0] in the result
		wantLen   int
	}{
		{"padded", concat(make([]int16, 8000), sound, make([]int16, 8000)), margin, len(sound) + 2*margin},
		{"quiet noise is silence", concat(noise(8000, 20), sound, noise(100, 20)), margin, len(sound) + margin + 100},
		{"no padding", sound, 0, len(sound)},
		{"all silence", make([]int16, 500), -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := pcm.TrimSilence(tt.in, rate)
			if len(got) != tt.wantLen {
				t.Fatalf("trimmed to %d samples, want %d", len(got), tt.wantLen)
			}
			if tt.wantStart >= 0 && got[tt.wantStart] != 1000 {
				t.Errorf("sound does not start at %d", tt.wantStart)
			}
			start, end := pcm.TrimBounds(tt.in, rate)
			if end-start != len(got) || (len(got) > 0 && &tt.in[start] != &got[0]) {
				t.Errorf("TrimBounds = %d, %d; TrimSilence kept %d samples", start, end, len(got))
			}
		})
	}
}

func concat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// noise returns n samples alternating ±amp.
func noise(n int, amp int16) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = amp * int16(1-2*(i%2))
	}
	return s
}

// wavFile builds a WAV file by hand.
func wavFile(format, channels, rate, bits int, riffSize, dataSize uint32, extensible bool, data []byte) []byte {
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(riffSize)
	b.WriteString("WAVE")
	b.WriteString("LIST")
	le(uint32(5))
	b.WriteString("junk\x00\x00") // odd size, padded
	b.WriteString("fmt ")
	if extensible {
		le(uint32(40))
		le(uint16(0xFFFE))
	} else {
		le(uint32(16))
		le(uint16(format))
	}
	le(uint16(channels))
	le(uint32(rate))
	le(uint32(rate * channels * bits / 8))
	le(uint16(channels * bits / 8))
	le(uint16(bits))
	if extensible {
		le(uint16(22))
		le(uint16(bits))
		le(uint32(0))
		le(uint16(format))
		b.WriteString("\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71")
	}
	b.WriteString("data")
	le(dataSize)
	b.Write(data)
	return b.Bytes()
}

func TestDecodeWAV(t *testing.T) {
	t.Parallel()
	mono := []byte{0x01, 0x00, 0xFF, 0x7F, 0x00, 0x80, 0xFE, 0xFF}
	stereo := []byte{0x10, 0x00, 0x30, 0x00, 0x00, 0x80, 0x00, 0x80, 0xFF, 0x7F, 0x01, 0x00}
	float := binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.5))
	float = binary.LittleEndian.AppendUint32(float, math.Float32bits(-2)) // clips
	tests := []struct {
		name     string
		in       []byte
		want     []int16
		wantRate int
		wantErr  string
	}{
		{"mono", wavFile(1, 1, 22050, 16, 44, 8, false, mono), []int16{1, 32767, -32768, -2}, 22050, ""},
		{"streamed size 0", wavFile(1, 1, 16000, 16, 0x24, 0, false, mono), []int16{1, 32767, -32768, -2}, 16000, ""},
		{"streamed size 0x7ffff000", wavFile(1, 1, 22050, 16, 0x7ffff024, 0x7ffff000, false, mono), []int16{1, 32767, -32768, -2}, 22050, ""},
		{"streamed size max", wavFile(1, 1, 48000, 16, 0xFFFFFFFF, 0xFFFFFFFF, false, mono), []int16{1, 32767, -32768, -2}, 48000, ""},
		{"data followed by a chunk", wavFile(1, 1, 8000, 16, 60, 4, false, append(mono[:4:4], "LIST\x02\x00\x00\x00ab"...)), []int16{1, 32767}, 8000, ""},
		{"odd trailing byte", wavFile(1, 1, 8000, 16, 0, 0, false, mono[:5]), []int16{1, 32767}, 8000, ""},
		{"stereo to mono", wavFile(1, 2, 44100, 16, 0, 12, false, stereo), []int16{32, -32768, 16384}, 44100, ""},
		{"extensible", wavFile(1, 1, 24000, 16, 0, 8, true, mono), []int16{1, 32767, -32768, -2}, 24000, ""},
		{"8-bit", wavFile(1, 1, 8000, 8, 0, 3, false, []byte{128, 255, 0}), []int16{0, 32512, -32768}, 8000, ""},
		{"24-bit", wavFile(1, 1, 8000, 24, 0, 6, false, []byte{0x00, 0x01, 0x00, 0x00, 0x00, 0x80}), []int16{1, -32768}, 8000, ""},
		{"float", wavFile(3, 1, 8000, 32, 0, 8, false, float), []int16{16384, -32768}, 8000, ""},
		{"not wav", []byte("RIFX....WAVE"), nil, 0, "not a RIFF/WAVE"},
		{"empty", nil, nil, 0, "header"},
		{"no data chunk", wavFile(1, 1, 8000, 16, 0, 0, false, nil)[:50], nil, 0, "no data chunk"},
		{"unsupported", wavFile(2, 1, 8000, 4, 0, 0, false, nil), nil, 0, "unsupported sample format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, rate, err := pcm.DecodeWAV(bytes.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeWAV error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rate != tt.wantRate || !slicesEqual(got, tt.want) {
				t.Errorf("DecodeWAV = %v at %d Hz, want %v at %d Hz", got, rate, tt.want, tt.wantRate)
			}
		})
	}
}

// FuzzDecodeWAV checks that no input makes DecodeWAV panic, and that a
// decoded file always has a sample rate.
// TestDecodeWAVFileRefusesNonFiles checks that an engine's output is read
// only from a regular file: not through a link, which a sandboxed engine
// could point at one of the server's files, nor from a pipe, which would
// block the open.
func TestDecodeWAVFileRefusesNonFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wav := filepath.Join(dir, "unit.wav")
	if err := os.WriteFile(wav, wavFile(1, 1, 8000, 16, 0, 4, false, []byte{1, 0, 2, 0}), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _, err := pcm.DecodeWAVFile(wav); err != nil || len(got) != 2 {
		t.Fatalf("DecodeWAVFile of a regular file: %v, %v", got, err)
	}
	link := filepath.Join(dir, "link.wav")
	if err := os.Symlink(wav, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.wav")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{link, fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() {
			_, _, err := pcm.DecodeWAVFile(path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("DecodeWAVFile(%s) read it", path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("DecodeWAVFile(%s) still blocked after 10 s", path)
		}
	}
}

func FuzzDecodeWAV(f *testing.F) {
	f.Add(wavFile(1, 1, 16000, 16, 44, 6, false, []byte{1, 0, 2, 0, 3, 0}))
	f.Add(wavFile(1, 2, 8000, 16, 0xFFFFFFFF, 0xFFFFFFFF, false, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		samples, rate, err := pcm.DecodeWAV(bytes.NewReader(b))
		if err == nil && rate <= 0 {
			t.Errorf("rate %d with %d samples and no error", rate, len(samples))
		}
	})
}

// TestDecodeEngineWAV decodes what the real engines write, to a file and to
// a pipe, and checks it against sox's reading of the file.
func TestDecodeEngineWAV(t *testing.T) {
	t.Parallel()
	const text = "The quick brown fox jumps over the lazy dog."
	tests := []struct {
		name     string
		file     func(path string) []string // writes path
		stdout   []string                   // writes WAV to stdout
		wantRate int
	}{
		{"espeak-ng", func(p string) []string { return []string{"espeak-ng", "-w", p, text} }, []string{"espeak-ng", "--stdout", text}, 22050},
		{"flite", func(p string) []string { return []string{"flite", "-t", text, "-o", p} }, []string{"flite", "-t", text, "-o", "/dev/stdout"}, 8000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			proctest.NeedProgram(t, tt.stdout[0], "apt-get install "+tt.stdout[0])
			path := filepath.Join(t.TempDir(), "out.wav")
			args := tt.file(path)
			if out, err := exec.CommandContext(t.Context(), args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v: %s", args[0], err, out)
			}
			cmd := exec.CommandContext(t.Context(), tt.stdout[0], tt.stdout[1:]...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			piped, rate, err := pcm.DecodeWAV(stdout)
			_, _ = io.Copy(io.Discard, stdout)
			if werr := cmd.Wait(); err == nil {
				err = werr
			}
			if err != nil {
				t.Fatalf("decode %s stdout: %v", tt.name, err)
			}
			if rate != tt.wantRate {
				t.Errorf("rate = %d, want %d", rate, tt.wantRate)
			}
			fromFile := mustSox(t, path)
			if !slicesEqual(piped, fromFile) {
				t.Errorf("stdout decodes to %d samples, sox reads %d from the file, or they differ", len(piped), len(fromFile))
			}
			if l, ok := pcm.Loudness(piped, rate); !ok || l < -40 {
				t.Errorf("speech loudness %.1f dBFS: is it silent?", l)
			}
		})
	}
}

// mustSox reads a WAV file's samples with sox.
func mustSox(tb testing.TB, path string) []int16 {
	tb.Helper()
	proctest.NeedProgram(tb, "sox", "apt-get install sox")
	raw, err := exec.CommandContext(tb.Context(), "sox", path, "-t", "raw", "-e", "signed", "-b", "16", "-L", "-").Output()
	if err != nil {
		tb.Fatalf("sox: %v", err)
	}
	s := make([]int16, len(raw)/2)
	for i := range s {
		s[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return s
}

func TestOnset(t *testing.T) {
	t.Parallel()
	const rate = 16000
	win := rate / 100 // 10 ms
	// A tone whose RMS is about -9 dBFS after 1000 samples of silence, and
	// one ten times quieter (-29 dBFS).
	loud := concat(make([]int16, 1000), sine(300, 0.5, rate, 1600))
	quiet := concat(make([]int16, 1000), sine(300, 0.05, rate, 1600))
	tests := []struct {
		name string
		in   []int16
		dbfs float64
		want int // -1, or the onset within a window's half
	}{
		{"loud at -40", loud, -40, 1000},
		{"quiet at -40", quiet, -40, 1000},
		{"quiet at -20", quiet, -20, -1},
		{"silence", make([]int16, 5000), -60, -1},
		{"empty", nil, -60, -1},
		{"shorter than a window", sine(300, 0.5, rate, 50), -40, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := pcm.Onset(tt.in, rate, tt.dbfs)
			if tt.want < 0 {
				if got != -1 {
					t.Errorf("Onset = %d, want -1", got)
				}
				return
			}
			if got < tt.want-win/2 || got > tt.want+win/2 {
				t.Errorf("Onset = %d, want %d ± %d", got, tt.want, win/2)
			}
		})
	}
}
