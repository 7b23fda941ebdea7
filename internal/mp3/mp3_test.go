package mp3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/proctest"
)

const rate = 32000

// tone returns d of a sine at freq Hz and amplitude amp (0..1), at the test rate.
func tone(freq float64, amp float64, d time.Duration) []int16 {
	n := int(int64(d) * rate / int64(time.Second))
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(amp * 32767 * math.Sin(2*math.Pi*freq*float64(i)/rate))
	}
	return s
}

// needTool skips the test if the program name is not installed, or fails it under
// NARRATOR_TEST_FULL=1.
func needTool(tb testing.TB, name string) {
	tb.Helper()
	proctest.NeedProgram(tb, name, "scripts/deps.sh test")
}

// mustEncode encodes samples in chunks of 4410 and returns the MP3.
func mustEncode(tb testing.TB, samples []int16, opts mp3.Options) []byte {
	tb.Helper()
	needTool(tb, "lame")
	var out bytes.Buffer
	enc, err := mp3.NewEncoder(tb.Context(), &out, opts)
	if err != nil {
		tb.Fatal(err)
	}
	for len(samples) > 0 {
		n := min(4410, len(samples))
		if err := enc.Write(samples[:n]); err != nil {
			tb.Fatal(err)
		}
		samples = samples[n:]
	}
	if err := enc.Close(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// mustSpeech returns espeak-ng's rendering of text, resampled to the test rate
// by sox (the pcm package has its own tests).
func mustSpeech(tb testing.TB, text string) []int16 {
	tb.Helper()
	needTool(tb, "espeak-ng")
	needTool(tb, "sox")
	wav := filepath.Join(tb.TempDir(), "speech.wav")
	if out, err := exec.CommandContext(tb.Context(), "espeak-ng", "-w", wav, text).CombinedOutput(); err != nil {
		tb.Fatalf("espeak-ng: %v: %s", err, out)
	}
	raw, err := exec.CommandContext(tb.Context(), "sox", wav, "-t", "raw", "-r", strconv.Itoa(rate), "-e", "signed", "-b", "16", "-c", "1", "-L", "-").Output()
	if err != nil {
		tb.Fatalf("sox: %v", err)
	}
	s := make([]int16, len(raw)/2)
	for i := range s {
		s[i] = int16(uint16(raw[2*i]) | uint16(raw[2*i+1])<<8)
	}
	return s
}

// ffprobeDuration returns ffprobe's idea of the file's duration.
func ffprobeDuration(tb testing.TB, data []byte) time.Duration {
	tb.Helper()
	needTool(tb, "ffprobe")
	path := filepath.Join(tb.TempDir(), "probe.mp3")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.CommandContext(tb.Context(), "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", path).Output()
	if err != nil {
		tb.Fatalf("ffprobe: %v", err)
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		tb.Fatalf("ffprobe duration %q: %v", out, err)
	}
	return time.Duration(secs * float64(time.Second))
}

func rms(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(max(1, len(s))))
}

func TestEncode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		samples func(testing.TB) []int16
	}{
		{"tone", func(testing.TB) []int16 { return tone(440, 0.3, 3*time.Second) }},
		{"speech", func(tb testing.TB) []int16 {
			return mustSpeech(tb, "Narrator turns articles into speech. The quick brown fox jumps over the lazy dog.")
		}},
		{"empty", func(testing.TB) []int16 { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pcm := tt.samples(t)
			data := mustEncode(t, pcm, mp3.Options{})

			var frames int
			info, err := mp3.Frames(bytes.NewReader(data), func(f mp3.Frame) error {
				frames++
				if f.SampleRate != rate || f.Samples != 1152 || f.Channels != 1 || f.Bitrate != 64000 {
					t.Fatalf("frame %d: rate %d, samples %d, channels %d, bitrate %d; want %d Hz, 1152, mono, 64 kbps",
						frames, f.SampleRate, f.Samples, f.Channels, f.Bitrate, rate)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if info.Skipped != 0 || info.Bytes != int64(len(data)) || info.Frames != frames {
				t.Errorf("info = %+v for %d bytes and %d frames: want every byte in a frame", info, len(data), frames)
			}
			// The MP3 holds the PCM plus lame's delay and padding: at most
			// two frames and the 1105-sample delay more.
			in := int64(len(pcm))
			if info.Samples < in || info.Samples > in+1105+2*1152 {
				t.Errorf("MP3 has %d samples for %d samples of PCM", info.Samples, in)
			}

			dur, err := mp3.Duration(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if want := time.Duration(info.Samples) * time.Second / rate; dur != want {
				t.Errorf("Duration = %v, want %v", dur, want)
			}
			// ffprobe cannot probe a one-frame file, so only check real audio.
			if len(pcm) > 0 {
				if probe := ffprobeDuration(t, data); (probe - dur).Abs() > time.Millisecond {
					t.Errorf("ffprobe duration %v, Duration %v: differ by more than 1 ms", probe, dur)
				}
			}

			decoded := pcmtest.DecodeMP3(t, data, rate)
			if got, want := int64(len(decoded)), info.Samples; got != want {
				t.Errorf("go-mp3 decoded %d samples, want %d", got, want)
			}
			inRMS, outRMS := rms(pcm), rms(decoded)*math.Sqrt(float64(len(decoded))/float64(max(1, len(pcm))))
			if len(pcm) == 0 {
				if outRMS > 10 {
					t.Errorf("empty input decodes to RMS %.1f, want silence", outRMS)
				}
				return
			}
			// Energy is preserved within 1.5 dB by a 64 kbps encode.
			if db := 20 * math.Log10(outRMS/inRMS); math.Abs(db) > 1.5 {
				t.Errorf("decoded RMS %.0f vs input %.0f (%.2f dB)", outRMS, inRMS, db)
			}
		})
	}
}

func TestEncodeToneFrequency(t *testing.T) {
	t.Parallel()
	data := mustEncode(t, tone(1000, 0.5, 2*time.Second), mp3.Options{})
	decoded := pcmtest.DecodeMP3(t, data, rate)
	// Count zero crossings in the steady middle second: 2000 for 1 kHz.
	mid := decoded[rate/2 : rate/2+rate]
	crossings := 0
	for i := 1; i < len(mid); i++ {
		if (mid[i-1] < 0) != (mid[i] < 0) {
			crossings++
		}
	}
	if crossings < 1990 || crossings > 2010 {
		t.Errorf("%d zero crossings in 1 s, want about 2000 (1 kHz)", crossings)
	}
}

func TestFramesSkipsTagsAndJunk(t *testing.T) {
	t.Parallel()
	needTool(t, "ffmpeg")
	data := mustEncode(t, tone(440, 0.3, 2*time.Second), mp3.Options{})
	want, err := mp3.Scan(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}

	// ffmpeg adds an ID3v2 tag and a Xing/Info frame when it copies.
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.mp3"), filepath.Join(dir, "tagged.mp3")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "ffmpeg", "-v", "error", "-i", in, "-c", "copy",
		"-metadata", "title=Tagged", "-id3v2_version", "3", "-write_xing", "1", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, msg)
	}
	tagged, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	id3v1 := append([]byte("TAG"), make([]byte, 125)...)

	tests := []struct {
		name string
		data []byte
	}{
		{"ffmpeg ID3v2 and Info frame", tagged},
		{"leading junk", append([]byte{0xFF, 0x00, 0x12, 0xFF, 0xFB}, data...)},
		{"ID3v1 trailer", append(bytes.Clone(data), id3v1...)},
		{"truncated last frame", append(bytes.Clone(data), data[:100]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := mp3.Scan(bytes.NewReader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if got.Frames != want.Frames || got.Samples != want.Samples || got.Bytes != want.Bytes {
				t.Errorf("Scan = %+v, want %+v", got, want)
			}
			if got.Skipped != int64(len(tt.data))-want.Bytes {
				t.Errorf("Skipped = %d, want %d", got.Skipped, int64(len(tt.data))-want.Bytes)
			}
		})
	}
}

// TestFrameWriterByteByByte feeds the stream one byte at a time: frames
// must come out the same.
func TestFrameWriterByteByByte(t *testing.T) {
	t.Parallel()
	data := mustEncode(t, tone(440, 0.3, time.Second), mp3.Options{})
	var got []byte
	w := mp3.NewFrameWriter(func(f mp3.Frame) error {
		if int(f.Offset) != len(got) {
			t.Fatalf("frame at offset %d, want %d", f.Offset, len(got))
		}
		got = append(got, f.Data...)
		return nil
	})
	for i := range data {
		if _, err := w.Write(data[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("frames joined (%d bytes) differ from the stream (%d bytes)", len(got), len(data))
	}
}

func TestFramesCallbackError(t *testing.T) {
	t.Parallel()
	data := mustEncode(t, tone(440, 0.3, time.Second), mp3.Options{})
	stop := errors.New("stop")
	n := 0
	_, err := mp3.Frames(bytes.NewReader(data), func(mp3.Frame) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("Frames = %v after %d frames, want stop after 3", err, n)
	}
}

func TestDurationNoFrames(t *testing.T) {
	t.Parallel()
	if _, err := mp3.Duration(strings.NewReader("not an mp3 at all")); err == nil {
		t.Error("Duration of text: want an error")
	}
}

func TestEncoderErrors(t *testing.T) {
	t.Parallel()
	needTool(t, "lame")
	failing := filepath.Join(t.TempDir(), "fake-lame")
	script := "#!/bin/sh\necho 'lame: cannot encode, out of coffee' >&2\nexit 3\n"
	if err := os.WriteFile(failing, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    mp3.Options
		wantNew string // error from NewEncoder
		want    string // error from Write or Close
	}{
		{name: "missing lame", opts: mp3.Options{Lame: "/nonexistent/lame"}, wantNew: "start /nonexistent/lame"},
		{name: "bad rate", opts: mp3.Options{SampleRate: 96000}, wantNew: "unsupported sample rate"},
		{name: "bad bitrate", opts: mp3.Options{Bitrate: 1000}, wantNew: "unsupported bitrate"},
		{name: "lame fails", opts: mp3.Options{Lame: failing}, want: "out of coffee"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			enc, err := mp3.NewEncoder(t.Context(), io.Discard, tt.opts)
			if tt.wantNew != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantNew) {
					t.Fatalf("NewEncoder error = %v, want %q", err, tt.wantNew)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = writeUntilFailure(enc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "libsndfile") {
				t.Errorf("error %q repeats lame's libsndfile warning", err)
			}
		})
	}
}

// TestEncoderWriterError checks that a failing destination stops the
// encoder with the destination's error.
func TestEncoderWriterError(t *testing.T) {
	t.Parallel()
	needTool(t, "lame")
	full := errors.New("disk full")
	enc, err := mp3.NewEncoder(t.Context(), &failingWriter{after: 10000, err: full}, mp3.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeUntilFailure(enc); !errors.Is(err, full) {
		t.Errorf("error = %v, want %v", err, full)
	}
}

// writeUntilFailure writes tone to enc until a write fails (the dead process or the failing
// destination is noticed), at most 100 s of it, then closes enc, and returns the first error.
func writeUntilFailure(enc *mp3.Encoder) error {
	chunk := tone(440, 0.3, 100*time.Millisecond)
	var err error
	for range 1000 {
		if err = enc.Write(chunk); err != nil {
			break
		}
	}
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	return err
}

type failingWriter struct {
	after int
	err   error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after < len(p) {
		return 0, f.err
	}
	f.after -= len(p)
	return len(p), nil
}

func TestEncoderCancel(t *testing.T) {
	t.Parallel()
	needTool(t, "lame")
	ctx, cancel := context.WithCancel(t.Context())
	enc, err := mp3.NewEncoder(ctx, io.Discard, mp3.Options{})
	if err != nil {
		t.Fatal(err)
	}
	chunk := tone(440, 0.3, 100*time.Millisecond)
	if err := enc.Write(chunk); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := writeUntilFailure(enc); !errors.Is(err, context.Canceled) {
		t.Errorf("error after cancel = %v, want context.Canceled", err)
	}
}

// TestEncoderCancelKillsGroup checks that cancelling kills lame with what it started, so that
// Write and Close return promptly even when a child of lame holds its output open.
func TestEncoderCancelKillsGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	fake := proctest.Script(t, "sleep 1000 & echo $! > "+pidFile+"\nexec cat >/dev/null")
	ctx, cancel := context.WithCancel(t.Context())
	enc, err := mp3.NewEncoder(ctx, io.Discard, mp3.Options{Lame: fake})
	if err != nil {
		t.Fatal(err)
	}
	chunk := tone(440, 0.3, 100*time.Millisecond)
	if err := enc.Write(chunk); err != nil {
		t.Fatal(err)
	}
	pid := proctest.PID(t, pidFile)
	cancel()
	done := make(chan error, 1)
	go func() { done <- writeUntilFailure(enc) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Write and Close still blocked 5s after cancel")
	}
	proctest.Exited(t, pid, "child of a cancelled lame")
}

// TestEncoderFlatMemory checks that writing a long stream allocates nothing
// per chunk: the encoder streams rather than buffers.
func TestEncoderFlatMemory(t *testing.T) {
	needTool(t, "lame")
	chunk := tone(440, 0.3, 100*time.Millisecond)
	var n countWriter
	enc, err := mp3.NewEncoder(t.Context(), &n, mp3.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Warm up: the conversion buffer and the output copier's buffers are
	// allocated once.
	for range 50 {
		if err := enc.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 551 { // 60 s in all
		if err := enc.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	// This test is not parallel, so the parallel tests wait: nothing else
	// allocates. 55 s is 4.8 MB of PCM and 440 kB of MP3; allow far less.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<10 {
		t.Errorf("allocated %d bytes while writing 55 s, want a flat encoder", grew)
	} else {
		t.Logf("allocated %d bytes while writing 55 s", grew)
	}
	if n < 60*8000 {
		t.Errorf("wrote %d bytes of MP3 for 60 s at 64 kbps, want about %d", n, 60*8000)
	}
	if got := enc.Samples(); got != 601*int64(len(chunk)) {
		t.Errorf("Samples = %d, want %d", got, 601*len(chunk))
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// TestDelay checks where an input sample plays in the decoded MP3, which
// transcripts rely on: n+Delay, within a few samples of the onset's
// smearing.
func TestDelay(t *testing.T) {
	t.Parallel()
	const at = rate / 2
	in := make([]int16, at)
	in = append(in, tone(440, 0.4, 100*time.Millisecond)...)
	in = append(in, make([]int16, rate/2)...)
	out := pcmtest.DecodeMP3(t, mustEncode(t, in, mp3.Options{}), rate)
	onset := -1
	for i, v := range out {
		if v > 3000 || v < -3000 {
			onset = i
			break
		}
	}
	// The tone reaches 3000 within its first few samples.
	if want := at + mp3.Delay; onset < want-10 || onset > want+20 {
		t.Errorf("tone starting at sample %d decodes at %d, want about %d", at, onset, want)
	}
}

// TestEncodeSandboxed encodes in a sandbox, in one stream and in chunks, and checks that
// the MP3 is the same as lame makes unsandboxed.
func TestEncodeSandboxed(t *testing.T) {
	t.Parallel()
	sb := proctest.Sandbox(t)
	pcm := tone(440, 0.3, 3*time.Second)
	want := mustEncode(t, pcm, mp3.Options{})
	if got := mustEncode(t, pcm, mp3.Options{Sandbox: sb}); !bytes.Equal(got, want) {
		t.Errorf("sandboxed lame wrote %d bytes unlike the %d unsandboxed", len(got), len(want))
	}
	c := mp3.Chunk{Samples: pcm[:80*mp3.FrameSamples], Last: true}
	wantChunk, err := newPool(t, mp3.Options{}).Encode(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	gotChunk, err := newPool(t, mp3.Options{Sandbox: sb}).Encode(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotChunk, wantChunk) {
		t.Errorf("sandboxed chunk of %d bytes unlike the %d unsandboxed", len(gotChunk), len(wantChunk))
	}
}
