package mp3

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/narrator/narrator/internal/proc"
)

// ErrClosed is returned by ChunkPool.Encode after Close.
var ErrClosed = errors.New("mp3: chunk pool closed")

// A ChunkPool encodes chunks (Encode) with lame, on a few warm workers.
// Each worker is a shell that lives across chunks, in the sandbox if there
// is one, and runs lame once per chunk on files in a scratch directory of
// its own: a chunk costs lame's start, not a sandbox's as well
// (namespaces, mounts and limits; docs/decisions/warm-lame-workers.md). Workers
// start on first use; one that fails or overruns its time is killed with
// its process group and replaced, and its chunk tried once more. A
// ChunkPool is safe for concurrent use.
type ChunkPool struct {
	opts    Options
	tempDir string
	timeout time.Duration     // chunkTimeout, but in tests
	slots   chan *chunkWorker // one entry per worker slot; nil means not started

	mu     sync.Mutex
	dir    string // the workers' scratch directories are made in it; "" before the first
	live   map[*chunkWorker]struct{}
	closed bool
	nextID int
}

// NewChunkPool returns a pool of at most procs workers (zero or less means
// one per CPU) encoding with opts, whose scratch directories are made in
// tempDir ("" means os.TempDir()) when the first starts. With a sandbox,
// opts.Lame must lie in its system directories, as the Debian package's
// does. The caller must Close the pool.
func NewChunkPool(opts Options, procs int, tempDir string) *ChunkPool {
	opts = opts.withDefaults()
	opts.noReservoir = true
	if procs <= 0 {
		procs = runtime.NumCPU()
	}
	p := &ChunkPool{opts: opts, tempDir: tempDir, timeout: chunkTimeout, slots: make(chan *chunkWorker, procs), live: map[*chunkWorker]struct{}{}}
	for range procs {
		p.slots <- nil
	}
	return p
}

// Encode encodes one chunk of a stream so that the chunks' MP3s,
// concatenated in order, are one MP3 of the stream with the timeline of a
// single encoding: sample n of the stream plays at n+Delay, and no sample
// is lost or repeated at a boundary. Each chunk must start at a multiple
// of FrameSamples in the stream, so every chunk but the last must hold a
// multiple of FrameSamples samples; len(Before) must be a multiple of
// FrameSamples too, which it is when it is ChunkPrime or the whole stream
// before the chunk.
//
// It runs lame on Before, Samples and After together, without the bit
// reservoir (a frame's bits never lie in the frame before it, which may
// come from another chunk's encoding), and keeps the frames that play the
// chunk's part of the timeline: frames len(Before)/FrameSamples onwards,
// len(Samples)/FrameSamples of them, or all to the end for the last chunk.
// A frame f plays samples [f×FrameSamples−Delay, (f+1)×FrameSamples−Delay)
// of the stream, so the first frames of a chunk play the end of the one
// before it. Where the encoder sees the same audio around a boundary,
// both sides encode it the same way, and the boundary is inaudible; it is
// exactly inaudible where the chunks are cut in silence.
//
// Cancelling ctx kills the worker's lame; Encode then returns an error
// that matches ctx.Err(). After Close it returns ErrClosed.
func (p *ChunkPool) Encode(ctx context.Context, c Chunk) ([]byte, error) {
	if len(c.Before)%FrameSamples != 0 {
		return nil, fmt.Errorf("encode mp3 chunk: %d samples before it, not whole frames", len(c.Before))
	}
	if !c.Last && len(c.Samples)%FrameSamples != 0 {
		return nil, fmt.Errorf("encode mp3 chunk: %d samples, not whole frames", len(c.Samples))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var w *chunkWorker
	select {
	case w = <-p.slots:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { p.slots <- w }()
	n := len(c.Before) + len(c.Samples) + len(c.After)
	limit := p.timeout + time.Duration(n)*time.Second/time.Duration(p.opts.SampleRate)
	var errs []error
	for range 2 {
		var (
			out []byte
			err error
		)
		if w == nil {
			w, err = p.start()
		}
		if err == nil {
			out, err = w.encode(ctx, c, limit)
		}
		if err == nil {
			kept, err := keepFrames(out, c)
			if err != nil {
				return nil, fmt.Errorf("encode mp3 chunk: %w", err)
			}
			return kept, nil
		}
		p.discard(w)
		w = nil
		if ctx.Err() != nil {
			return nil, fmt.Errorf("encode mp3 chunk: %w", ctx.Err())
		}
		if errors.Is(err, ErrClosed) || p.isClosed() {
			return nil, ErrClosed
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("encode mp3 chunk: %w", errors.Join(errs...))
}

// chunkTimeout is the fixed part of a chunk's time limit; a second per
// second of audio is added. lame encodes about 200 times faster than real
// time here, so only a hung process reaches it.
const chunkTimeout = 20 * time.Second

// keepFrames returns the frames of lame's output out that play chunk c's
// part of the timeline (see Encode).
func keepFrames(out []byte, c Chunk) ([]byte, error) {
	skip := len(c.Before) / FrameSamples
	keep := len(c.Samples) / FrameSamples
	kept := make([]byte, 0, len(out))
	f := 0
	info, err := Frames(bytes.NewReader(out), func(fr Frame) error {
		if f >= skip && (c.Last || f < skip+keep) {
			kept = append(kept, fr.Data...)
		}
		f++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if info.Frames < skip+keep {
		return nil, fmt.Errorf("lame wrote %d frames, want at least %d", info.Frames, skip+keep)
	}
	return kept, nil
}

// Close kills every worker, including those encoding a chunk (their
// callers get an error), and removes the scratch directory. Later calls
// to Encode return ErrClosed.
func (p *ChunkPool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	live, dir := p.live, p.dir
	p.live = map[*chunkWorker]struct{}{}
	p.mu.Unlock()
	for w := range live {
		w.Kill()
	}
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("mp3: close chunk pool: %w", err)
	}
	return nil
}

func (p *ChunkPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// discard kills w, if any, and forgets it.
func (p *ChunkPool) discard(w *chunkWorker) {
	if w == nil {
		return
	}
	w.Kill()
	p.mu.Lock()
	delete(p.live, w)
	p.mu.Unlock()
}

// chunkLimits bounds a sandboxed worker's shell and each lame it runs
// (rlimits are per process): lame holds a few frames in memory and
// writes a chunk's MP3, at most ChunkMax of audio plus its margins, a few
// hundred kB.
func chunkLimits() proc.Limits {
	return proc.Limits{Memory: 256 << 20, CPU: 10 * time.Minute, FileSize: 16 << 20, Procs: proc.SandboxProcs}
}

// workerScript is the worker's shell: for each name it reads, lame encodes
// NAME.pcm to NAME.mp3, and the shell answers "ok NAME", or "fail NAME"
// and lame's exit status. lame's command line is the script's arguments.
// lame reads and writes its standard streams, as NewEncoder's does: given
// a file name, lame opens it with libsndfile, which may take raw PCM for
// another format.
const workerScript = `while read -r n; do
if "$@" - - <"$n.pcm" >"$n.mp3"; then printf 'ok %s\n' "$n"; else printf 'fail %s %s\n' "$n" "$?"; fi
done`

// start starts a worker.
func (p *ChunkPool) start() (*chunkWorker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if err := p.opts.check(); err != nil {
		return nil, fmt.Errorf("start lame worker: %w", err)
	}
	if p.dir == "" {
		dir, err := proc.MkdirScratch(p.tempDir, "narrator-lame-")
		if err != nil {
			return nil, fmt.Errorf("start lame worker: %w", err)
		}
		p.dir = dir
	}
	p.nextID++
	dir := filepath.Join(p.dir, "w"+strconv.Itoa(p.nextID))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start lame worker: %w", err)
	}
	args := append([]string{"-c", workerScript, "sh", p.opts.Lame}, p.opts.args()...)
	cmd := p.opts.Sandbox.Command(chunkLimits(), dir, "sh", args...)
	warm, err := proc.StartWarm("lame worker", cmd, dir, &proc.Tail{Size: 4 << 10, SkipFunc: isLameNoise})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	w := &chunkWorker{Warm: warm, frameBytes: p.opts.frameBytes()}
	p.live[w] = struct{}{}
	return w, nil
}

// chunkWorker is one worker's shell. It is used by one goroutine at a
// time.
type chunkWorker struct {
	*proc.Warm
	seq        int
	buf        []byte // a block of PCM on its way to a file
	frameBytes int    // the most bytes a frame takes
}

// encode has the worker's lame encode c's samples, Before to After, and
// returns all it wrote.
func (w *chunkWorker) encode(ctx context.Context, c Chunk, limit time.Duration) ([]byte, error) {
	w.seq++
	name := filepath.Join(w.Dir(), strconv.Itoa(w.seq))
	in, out := name+".pcm", name+".mp3"
	defer os.Remove(in)
	defer os.Remove(out)
	if err := w.writePCM(in, c.Before, c.Samples, c.After); err != nil {
		return nil, err
	}
	err := w.Exchange(ctx, name+"\n", limit, func(line string) (bool, error) {
		if line == "ok "+name {
			return true, nil
		}
		return true, fmt.Errorf("%w: %s", errLame, line)
	})
	if errors.Is(err, errLame) {
		// The worker goes (Encode discards it); once it is reaped, its
		// stderr has been read to the end, lame's complaint included.
		w.Kill()
		return nil, fmt.Errorf("%w%s", err, w.Stderr().Suffix())
	}
	if err != nil {
		return nil, err
	}
	return readOutput(out, maxChunkBytes(c, w.frameBytes))
}

// errLame marks a chunk that lame failed on.
var errLame = errors.New("lame failed")

// maxChunkBytes is the most MP3 lame can write for c at frameBytes a
// frame: a frame for every FrameSamples samples, and a few for its delay
// and flush.
func maxChunkBytes(c Chunk, frameBytes int) int64 {
	n := len(c.Before) + len(c.Samples) + len(c.After)
	return int64(n/FrameSamples+4) * int64(frameBytes)
}

// readOutput reads lame's output, at most max bytes, from the worker's
// directory, where lame may write anything (proc.OpenScratchFile).
func readOutput(path string, max int64) ([]byte, error) {
	f, size, err := proc.OpenScratchFile(path)
	if err != nil {
		return nil, fmt.Errorf("read lame's output: %w", err)
	}
	defer f.Close()
	if size > max {
		return nil, fmt.Errorf("read lame's output: %d bytes, more than lame writes for the chunk (%d)", size, max)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("read lame's output: %w", err)
	}
	return data, nil
}

// writePCM writes the parts' samples to a new file as raw little-endian
// 16-bit PCM, a block at a time.
func (w *chunkWorker) writePCM(path string, parts ...[]int16) error {
	// A new file, never one that lame left there: a link or a pipe would
	// have the server write where lame chose.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("write chunk for lame: %w", err)
	}
	for _, p := range parts {
		for len(p) > 0 {
			n := min(len(p), writeBlock)
			w.buf = w.buf[:0]
			for _, s := range p[:n] {
				w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(s))
			}
			if _, err := f.Write(w.buf); err != nil {
				f.Close()
				return fmt.Errorf("write chunk for lame: %w", err)
			}
			p = p[n:]
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write chunk for lame: %w", err)
	}
	return nil
}
