// Package mp3 encodes mono 16-bit PCM to MP3 with the lame command, as a
// stream, and reads MP3 streams frame by frame.
//
// The encoder writes constant-bitrate MPEG-1 Layer III without a Xing/Info
// frame (lame -t), so every decoder agrees on the duration: the number of
// frames × 1152 / sample rate. That duration includes lame's encoder delay
// and padding, so it is up to about 50 ms longer than the PCM that went in.
package mp3

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator/internal/proc"
)

// Defaults for Options.
const (
	DefaultSampleRate = 32000 // the pipeline's rate
	DefaultBitrate    = 64    // kbps
	DefaultLame       = "lame"
)

// Delay is how many samples a decoder outputs before the first sample that
// went into the encoder: lame's encoder delay (576) and the MPEG decoder's
// (529). The files carry no Xing/LAME tag, so no decoder trims it: sample
// n of the input plays at (n+Delay)/rate in the MP3, in ffmpeg (Chromium),
// go-mp3 and the HLS segments alike. (lame --decode removes the decoder's
// part only.)
const Delay = 1105

// Options configure an Encoder. The zero value means mono 32 kHz in and
// out, 64 kbps CBR, lame's default quality.
type Options struct {
	// SampleRate of the PCM written to the encoder, in Hz; the MP3 has the
	// same rate (lame does not resample). 0 means DefaultSampleRate. For
	// MPEG-1 Layer III use 32000, 44100 or 48000.
	SampleRate int
	// Bitrate in kbps, constant. 0 means DefaultBitrate.
	Bitrate int
	// Quality is lame's -q, 1 (best, slowest) to 9; 0 leaves lame's
	// default (3), which encodes far faster than real time.
	Quality int
	// Lame is the lame executable. "" means DefaultLame, looked up in PATH.
	Lame string
	// Sandbox runs lame with less power than the server; nil runs it as it is. lame reads
	// its stdin and writes its stdout: an Encoder's lame is given nowhere to write, a
	// ChunkPool worker's only its own scratch directory.
	Sandbox *proc.Sandbox

	// noReservoir turns lame's bit reservoir off (ChunkPool).
	noReservoir bool
}

func (o Options) withDefaults() Options {
	if o.SampleRate == 0 {
		o.SampleRate = DefaultSampleRate
	}
	if o.Bitrate == 0 {
		o.Bitrate = DefaultBitrate
	}
	if o.Lame == "" {
		o.Lame = DefaultLame
	}
	return o
}

// frameBytes is the most bytes one frame takes at the options' constant
// bitrate, its padding byte included.
func (o Options) frameBytes() int {
	o = o.withDefaults()
	return o.Bitrate*1000/8*FrameSamples/o.SampleRate + 1
}

// check reports options that lame cannot encode with.
func (o Options) check() error {
	if o.SampleRate < 8000 || o.SampleRate > 48000 {
		return fmt.Errorf("unsupported sample rate %d", o.SampleRate)
	}
	if o.Bitrate < 8 || o.Bitrate > 320 {
		return fmt.Errorf("unsupported bitrate %d kbps", o.Bitrate)
	}
	return nil
}

// args returns lame's options: raw little-endian signed 16-bit mono PCM
// in, MP3 out; the input and output follow them.
func (o Options) args() []string {
	khz := strconv.FormatFloat(float64(o.SampleRate)/1000, 'f', -1, 64)
	args := []string{
		"-r", "-s", khz, "--bitwidth", "16", "--signed", "--little-endian",
		"-m", "m", "--resample", khz,
		"-b", strconv.Itoa(o.Bitrate), "--cbr",
		"-t", // no Xing/Info frame: duration is frames × samples per frame
		"--quiet",
	}
	if o.Quality > 0 {
		args = append(args, "-q", strconv.Itoa(o.Quality))
	}
	if o.noReservoir {
		args = append(args, "--nores")
	}
	return args
}

// An Encoder streams PCM through a lame process, run with proc.Stream. Samples written to it
// are piped to lame's stdin while lame's output is copied to the destination writer
// concurrently, so memory stays flat whatever the length of the audio. An Encoder is not safe
// for concurrent use.
type Encoder struct {
	stream  *proc.Stream
	buf     []byte
	samples int64
}

// NewEncoder starts lame, writing the MP3 to w. w is written from another goroutine until
// Close returns, and must not be used meanwhile. Cancelling ctx kills lame's process group;
// Write and Close then return an error that matches ctx.Err(). The caller must call Close.
func NewEncoder(ctx context.Context, w io.Writer, opts Options) (*Encoder, error) {
	opts = opts.withDefaults()
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("new mp3 encoder: %w", err)
	}
	stderr := &proc.Tail{Size: 4 << 10, SkipFunc: isLameNoise}
	cmd := opts.Sandbox.Command(sandboxLimits(), "", opts.Lame, append(opts.args(), "-", "-")...)
	stream, err := proc.StartStream(ctx, opts.Lame, cmd, w, stderr)
	if err != nil {
		return nil, fmt.Errorf("new mp3 encoder: %w", err)
	}
	return &Encoder{stream: stream}, nil
}

// Write encodes samples (mono, at Options.SampleRate). It blocks while lame catches up. If
// lame has failed, Write waits for it to exit and returns its error, with the tail of its
// stderr; later calls return the same error.
func (e *Encoder) Write(samples []int16) error {
	// In blocks, so that a long write needs no copy of its own size.
	for len(samples) > 0 {
		n := min(len(samples), writeBlock)
		e.buf = e.buf[:0]
		for _, s := range samples[:n] {
			e.buf = binary.LittleEndian.AppendUint16(e.buf, uint16(s))
		}
		if _, err := e.stream.Write(e.buf); err != nil {
			return fmt.Errorf("mp3 encode: %w", err)
		}
		e.samples += int64(n)
		samples = samples[n:]
	}
	return nil
}

// writeBlock is how many samples Write hands lame at a time.
const writeBlock = 16384

// Samples returns how many samples have been written so far.
func (e *Encoder) Samples() int64 { return e.samples }

// Close ends the input, waits for lame to flush its last frames to the writer and exit, and
// returns any error: the context's or the writer's if either ended lame, else lame's exit
// status with the tail of its stderr. Close is idempotent.
func (e *Encoder) Close() error {
	if err := e.stream.Close(); err != nil {
		return fmt.Errorf("mp3 encode: %w", err)
	}
	return nil
}

// sandboxLimits bounds a sandboxed lame: it holds a few frames in memory (a few MB), encodes
// about 200 times faster than real time, and writes no file.
func sandboxLimits() proc.Limits {
	return proc.Limits{Memory: 256 << 20, CPU: 10 * time.Minute, FileSize: 1 << 20, Procs: proc.SandboxProcs}
}

// isLameNoise reports lame's warning that it was built with libsndfile, which it prints on
// every raw-input run.
func isLameNoise(line string) bool { return strings.Contains(line, "libsndfile") }
